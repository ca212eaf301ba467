import { generateKeyPairSync } from 'node:crypto';

/** An Ed25519 signing key as LEDGER_SIGNING_KEY takes it: production configurations in tests need one (docs/ledger.md). */
export const TEST_LEDGER_SIGNING_KEY = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
