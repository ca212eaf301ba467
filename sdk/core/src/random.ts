// Random ids without a library: crypto.randomUUID / getRandomValues where the runtime has them (Node, browsers,
// Hermes with react-native-get-random-values), Math.random otherwise (docs/apps.md says to add the polyfill: an
// Idempotency-Key only has to be unique, an installation id should not be guessable).
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

function bytes(n: number): Uint8Array {
  const b = new Uint8Array(n);
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (c?.getRandomValues) c.getRandomValues(b);
  else for (let i = 0; i < n; i++) b[i] = Math.floor(Math.random() * 256);
  return b;
}

/** A version 4 UUID (RFC 9562): the receipt's Idempotency-Key. */
export function uuid(): string {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  const b = bytes(16);
  b[6] = (b[6]! & 15) | 64;
  b[8] = (b[8]! & 63) | 128;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The installation id, as the browser SDK makes it: 22 characters of a 64-letter alphabet, 132 random bits. */
export const randomId = () => Array.from(bytes(22), (b) => ALPHABET[b & 63]).join('');
