import { createHash, randomBytes, randomInt } from 'node:crypto';

export const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

/** Session tokens: 32 random bytes, base64url; only their SHA-256 is stored. */
export const newSessionToken = () => randomBytes(32).toString('base64url');

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Unbiased random base62 string (publishable key bodies, webhook secrets). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(BASE62.length)];
  return out;
}
