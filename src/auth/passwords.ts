import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Versioned encoding `scrypt$v1$N$r$p$salt$hash` so parameters can rise later:
// a stored hash always says how it was made, and verify() honours that.
/** OWASP's scrypt cost, N = 2^17 (PASSWORD_HASH_LOG_N; tests lower it for speed). */
export const DEFAULT_LOG_N = 17;
const PARAMS = { r: 8, p: 1, keyLength: 32 };
// Stored hashes are ours, but a corrupted row must not make us allocate gigabytes.
const MAX_LOG_N = 20;

function scrypt(password: string, salt: Buffer, keyLength: number, options: Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>>): Promise<Buffer> {
  // scrypt needs 128·N·r bytes (128 MiB at N=2^17, r=8), above node's 32 MiB default maxmem: allow
  // twice that. At most four hashes run at once (libuv's thread pool), so at most 1 GiB at the top cost.
  const maxmem = 2 * 128 * options.N * options.r;
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string, logN = DEFAULT_LOG_N): Promise<string> {
  const salt = randomBytes(16);
  const { r, p, keyLength } = PARAMS;
  const N = 2 ** logN;
  const key = await scrypt(password, salt, keyLength, { N, r, p });
  return ['scrypt', 'v1', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [algorithm, version, N, r, p, salt, hash] = encoded.split('$');
  if (algorithm !== 'scrypt' || version !== 'v1' || !salt || !hash) return false;
  if (!(Number(N) <= 2 ** MAX_LOG_N)) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/** True when a stored hash was made with weaker parameters than today's (it is rehashed at the next login). */
export function needsRehash(encoded: string, logN = DEFAULT_LOG_N): boolean {
  const [, version, N, r] = encoded.split('$');
  return version !== 'v1' || Number(N) < 2 ** logN || Number(r) < PARAMS.r;
}

const dummies = new Map<number, Promise<string>>();

/** Verified against when the e-mail is unknown, at the configured cost, so both failures cost the same time. */
export function dummyPasswordHash(logN = DEFAULT_LOG_N): Promise<string> {
  let dummy = dummies.get(logN);
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString('hex'), logN);
    dummies.set(logN, dummy);
  }
  return dummy;
}
