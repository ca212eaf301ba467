// Random ids without a library: crypto.getRandomValues where the runtime has it (Node, browsers,
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

/**
 * A version 7 UUID (RFC 9562: 48 bits of Unix milliseconds, then 74 random bits): the receipt's Idempotency-Key.
 * Time-ordered, so the service's key index grows at its edge; version 4 keys land on a random page of it each
 * (bench/README.md, "Consent POST with Idempotency-Key").
 */
export function uuid(nowMs: number): string {
  const b = bytes(16);
  for (let i = 5; i >= 0; i--, nowMs = Math.floor(nowMs / 256)) b[i] = nowMs % 256;
  b[6] = (b[6]! & 15) | 112;
  b[8] = (b[8]! & 63) | 128;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The installation id, as the browser SDK makes it: 22 characters of a 64-letter alphabet, 132 random bits. */
export const randomId = () => Array.from(bytes(22), (b) => ALPHABET[b & 63]).join('');
