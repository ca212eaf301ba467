import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Versioned encoding `scrypt$v1$N$r$p$salt$hash` so parameters can rise later:
// a stored hash always says how it was made, and verify() honours that.
const CURRENT = { N: 2 ** 15, r: 8, p: 1, keyLength: 32 };
const MAX_MEM = 128 * CURRENT.N * CURRENT.r * 2;

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem: MAX_MEM * 2 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keyLength } = CURRENT;
  const key = await scrypt(password, salt, keyLength, { N, r, p });
  return ['scrypt', 'v1', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [algorithm, version, N, r, p, salt, hash] = encoded.split('$');
  if (algorithm !== 'scrypt' || version !== 'v1' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/** True when a stored hash was made with weaker parameters than today's. */
export function needsRehash(encoded: string): boolean {
  const [, version, N] = encoded.split('$');
  return version !== 'v1' || Number(N) < CURRENT.N;
}

// Verified against when the e-mail is unknown, so both failures cost the same time.
export const dummyPasswordHash = hashPassword(randomBytes(16).toString('hex'));
