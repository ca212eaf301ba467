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
 * signed once stays published after a rotation.
 */
export async function openLedgerSigner(services: Services): Promise<LedgerSigner> {
  const privateKey = services.config.ledger.signingKey ?? developmentKey(services);
  const publicJwk = publicJwkOf(privateKey);
  const signer: LedgerSigner = {
    keyId: publicJwk.kid,
    publicJwk,
    sign: (message) => sign(null, Buffer.from(message, 'utf8'), privateKey).toString('base64'),
  };
  const published = [publicJwk, ...services.config.ledger.publicKeys.map(publicJwkOf)];
  for (const { kid, ...jwk } of published) {
    await services.db.query('INSERT INTO ledger_keys (id, public_key) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING', [kid, JSON.stringify(jwk)]);
  }
  signers.set(services, signer);
  return signer;
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

/** Every published public key, newest first: the document at /.well-known/consent-ledger-keys.json. */
export async function publishedKeys(services: Services) {
  const rows = await services.db.query<{ id: string; public_key: PublicJwk | string; created_at: Date | string }>(
    'SELECT id, public_key, created_at FROM ledger_keys ORDER BY created_at DESC, id',
  );
  return rows.map((row) => {
    const jwk = typeof row.public_key === 'string' ? (JSON.parse(row.public_key) as PublicJwk) : row.public_key;
    return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid: row.id, alg: 'EdDSA', use: 'sig', createdAt: new Date(row.created_at) };
  });
}
