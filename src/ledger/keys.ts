import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { keyIdOf, type PublicJwk } from '../../verify/ledger.mjs';
import type { Services } from '../services.js';

/** The key this instance signs checkpoints with. */
export interface LedgerSigner {
  keyId: string;
  publicJwk: PublicJwk & { kid: string };
  /** Ed25519 signature of the message, base64. */
  sign(message: string): string;
}

/** Where development keeps the key it made on its first start (DATA_DIR, beside the embedded database). */
export const DEV_KEY_FILE = 'ledger-signing-key.pem';

const signers = new WeakMap<Services, LedgerSigner>();

export function publicJwkOf(key: KeyObject): PublicJwk & { kid: string } {
  const { x } = (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'jwk' }) as { x: string };
  const jwk = { kty: 'OKP' as const, crv: 'Ed25519' as const, x };
  return { ...jwk, kid: keyIdOf(jwk) };
}

/**
 * Loads the signing key at start-up (LEDGER_SIGNING_KEY[_FILE]; outside production without one, the key in
 * DATA_DIR/ledger-signing-key.pem, made on the first start; with DATA_DIR=memory:// a key for this run only)
 * and records its public key, and the retired ones of LEDGER_PUBLIC_KEYS_FILE, in ledger_keys: a key that
 * signed once stays published after a rotation. A signing key new here becomes the current key (its validity
 * begins) and retires the one before it, which never signs again (recordSigningKey).
 */
export async function openLedgerSigner(services: Services): Promise<LedgerSigner> {
  const privateKey = services.config.ledger.signingKey ?? developmentKey(services);
  const publicJwk = publicJwkOf(privateKey);
  const signer: LedgerSigner = {
    keyId: publicJwk.kid,
    publicJwk,
    sign: (message) => sign(null, Buffer.from(message, 'utf8'), privateKey).toString('base64'),
  };
  await recordSigningKey(services, publicJwk);
  for (const { kid, ...jwk } of services.config.ledger.publicKeys.map(publicJwkOf)) {
    await services.db.query('INSERT INTO ledger_keys (id, public_key) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING', [kid, JSON.stringify(jwk)]);
  }
  signers.set(services, signer);
  return signer;
}

/**
 * Records the signing key. When it is new here it becomes the current key: it begins (not_before) after every
 * checkpoint signed so far, and every key before it ends (not_after) at that moment, so a verifier can refuse
 * what an older key signs later (docs/ledger.md, "Keys and rotation"). Sealers hold their key's row (FOR KEY
 * SHARE) while they sign: locking the current keys' rows waits for them, and the next statement sees their
 * checkpoints. A key that was retired stays retired: this instance then seals nothing (logged).
 */
async function recordSigningKey(services: Services, { kid, ...jwk }: PublicJwk & { kid: string }) {
  await services.db.transaction(async (tx) => {
    await tx.query('INSERT INTO ledger_keys (id, public_key) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING', [kid, JSON.stringify(jwk)]);
    const [own] = await tx.query<{ not_before: Date | string | null; not_after: Date | string | null }>(
      'SELECT not_before, not_after FROM ledger_keys WHERE id = $1 FOR UPDATE',
      [kid],
    );
    if (own!.not_after !== null) {
      services.logger.error(
        { keyId: kid, retiredAt: new Date(own!.not_after).toISOString() },
        'ledger: the signing key was retired when a newer one took over; this instance seals nothing until it is given the current key or a new one',
      );
      return;
    }
    if (own!.not_before !== null) return; // the current key, restarted
    await tx.query('SELECT id FROM ledger_keys WHERE not_before IS NOT NULL AND not_after IS NULL AND id <> $1 FOR UPDATE', [kid]);
    const [latest] = await tx.query<{ at: Date | string | null }>(
      `SELECT GREATEST((SELECT max(c.created_at) FROM ledger_heads AS h
                          JOIN ledger_checkpoints AS c ON c.project_id = h.project_id AND c.sequence = h.sequence),
                       (SELECT max(not_before) FROM ledger_keys)) AS at`,
    );
    const begins = new Date(Math.max(services.now().getTime(), latest?.at ? new Date(latest.at).getTime() + 1 : 0));
    const retired = await tx.query<{ id: string }>(
      'UPDATE ledger_keys SET not_after = $2 WHERE not_before IS NOT NULL AND not_after IS NULL AND id <> $1 RETURNING id',
      [kid, begins],
    );
    await tx.query('UPDATE ledger_keys SET not_before = $2 WHERE id = $1', [kid, begins]);
    if (retired.length) services.logger.info({ keyId: kid, retired: retired.map((r) => r.id), at: begins.toISOString() }, 'ledger: a new signing key took over');
  });
}

export function ledgerSigner(services: Services): LedgerSigner {
  const signer = signers.get(services);
  if (!signer) throw new Error('the ledger signing key is not loaded (openLedgerSigner at start-up)');
  return signer;
}

function developmentKey(services: Services): KeyObject {
  const { dataDir } = services.config;
  if (dataDir.startsWith('memory://')) {
    services.logger.info('no LEDGER_SIGNING_KEY: signing ledger checkpoints with a key made for this run only (DATA_DIR=memory://)');
    return generateKeyPairSync('ed25519').privateKey;
  }
  const file = join(resolve(dataDir), DEV_KEY_FILE);
  try {
    return createPrivateKey(readFileSync(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(resolve(dataDir), { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('ed25519');
  try {
    // `wx`: two instances starting at once on one DATA_DIR keep whichever key was written first.
    writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
    services.logger.info({ file }, 'no LEDGER_SIGNING_KEY: made a ledger signing key for development (production requires one)');
    return privateKey;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return createPrivateKey(readFileSync(file, 'utf8'));
  }
}

/**
 * Every published public key, newest first: the document at /.well-known/consent-ledger-keys.json. Each key's
 * validity: `notBefore` (when it began signing here; null for a key only published, from before this database)
 * and `notAfter` (when a newer key took over; null for the current key).
 */
export async function publishedKeys(services: Services) {
  const rows = await services.db.query<{
    id: string;
    public_key: PublicJwk | string;
    created_at: Date | string;
    not_before: Date | string | null;
    not_after: Date | string | null;
  }>(
    // A key only published (never signing here) signed before the first key that signed here began. Derived, not
    // stored: a key published ahead of its rotation can still begin signing when an instance starts with it.
    `SELECT id, public_key, created_at, not_before,
            COALESCE(not_after, CASE WHEN not_before IS NULL THEN (SELECT min(not_before) FROM ledger_keys) END) AS not_after
       FROM ledger_keys ORDER BY created_at DESC, id`,
  );
  const time = (value: Date | string | null) => (value === null ? null : new Date(value));
  return rows.map((row) => {
    const jwk = typeof row.public_key === 'string' ? (JSON.parse(row.public_key) as PublicJwk) : row.public_key;
    return {
      kty: jwk.kty,
      crv: jwk.crv,
      x: jwk.x,
      kid: row.id,
      alg: 'EdDSA',
      use: 'sig',
      createdAt: new Date(row.created_at),
      notBefore: time(row.not_before),
      notAfter: time(row.not_after),
    };
  });
}
