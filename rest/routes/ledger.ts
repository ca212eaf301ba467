import { z } from 'zod';
import { WELL_KNOWN_KEYS_PATH } from '../../src/ledger/service.js';
import { route, type RouteDef } from '../route.js';
import { ErrorBody, pick, sessionErrors, timestamp, validationError } from '../schemas.js';

// The receipts ledger (extensions.md section 8, docs/ledger.md).

const hex = (what: string) => z.string().regex(/^[0-9a-f]{64}$/).describe(what);

const LedgerCheckpoint = z
  .object({
    projectId: z.string(),
    sequence: z.number().int().describe('1, 2, 3, … per project'),
    previous: hex('SHA-256 of the previous checkpoint’s signed JSON').nullable().describe('null for the first checkpoint'),
    root: hex('Merkle root (RFC 9162) of the sealed receipts in leaf order'),
    count: z.number().int().describe('Receipts sealed by this checkpoint'),
    firstReceiptId: z.string().describe('Leaf 0 (leaves are in receipt id order)'),
    lastReceiptId: z.string(),
    createdAt: timestamp,
    keyId: z.string().describe(`Id (RFC 7638 thumbprint) of the signing key in ${WELL_KNOWN_KEYS_PATH}`),
    signature: z.string().describe('Ed25519 over the canonical JSON (RFC 8785) of the eight fields above, base64'),
  })
  .meta({ id: 'LedgerCheckpoint' });

/** `limit` arrives as text; numbers go to GraphQL as Int, anything else fails its coercion as validation_failed. */
const intOrRaw = (value: string | undefined) => (value !== undefined && /^-?\d{1,15}$/.test(value) ? Number(value) : value);

const base = '/api/platform/projects/:projectId';

const LedgerSettings = z
  .object({ checkpointWebhook: z.boolean().describe('Each checkpoint is sent to the project webhook as ledger.checkpoint') })
  .meta({ id: 'LedgerSettings' });

export const ledgerRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: `${base}/ledger/settings`,
    summary: 'The project’s ledger settings (Viewer or above)',
    auth: 'session',
    operation: 'LedgerSettings',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: { settings: data.ledgerSettings } }),
    responses: { 200: { description: 'Settings', schema: z.object({ settings: LedgerSettings }) }, ...sessionErrors },
  }),
  route({
    method: 'PUT',
    path: `${base}/ledger/settings`,
    summary: 'Opt in or out of ledger.checkpoint webhook events (Admin or above; off by default)',
    auth: 'session',
    operation: 'UpdateLedgerSettings',
    requestBody: LedgerSettings,
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, ['checkpointWebhook']) }),
    respond: (data) => ({ status: 200, body: { settings: data.updateLedgerSettings } }),
    responses: { 200: { description: 'Settings', schema: z.object({ settings: LedgerSettings }) }, ...validationError, ...sessionErrors },
  }),
  route({
    method: 'GET',
    path: `${base}/ledger/checkpoints`,
    summary: 'Signed ledger checkpoints, newest first, by cursor (Viewer or above)',
    auth: 'session',
    operation: 'LedgerCheckpoints',
    queryParams: z.object({ limit: z.number().int().min(1).max(200).default(50).optional(), cursor: z.string().optional() }),
    variables: ({ params, query }) => ({ projectId: params.projectId, limit: intOrRaw(query.limit), cursor: query.cursor }),
    respond: (data) => ({ status: 200, body: data.ledgerCheckpoints }),
    responses: {
      200: { description: 'A page of checkpoints', schema: z.object({ checkpoints: z.array(LedgerCheckpoint), nextCursor: z.string().nullable() }) },
      ...validationError,
      ...sessionErrors,
    },
  }),
  route({
    method: 'GET',
    path: `${base}/receipts/:receiptId/proof`,
    summary: 'A receipt, its Merkle inclusion path and the signed checkpoint that seals it (Viewer or above)',
    auth: 'session',
    operation: 'ReceiptProof',
    variables: ({ params }) => ({ projectId: params.projectId, receiptId: params.receiptId }),
    respond: (data) => ({ status: 200, body: data.receiptProof }),
    responses: {
      200: {
        description:
          'Enough to check the receipt without the service: SHA-256(0x00 || canonical JSON of `receipt`) is `proof.leafHash`; ' +
          'folding it with `path` (RFC 9162 2.1.3.2) gives `checkpoint.root`; the signature verifies with the published key ' +
          '(`npx consent-verify --proof <file> --keys <keys you kept>`, docs/ledger.md)',
        schema: z.object({
          receipt: z.record(z.string(), z.unknown()).describe('The receipt exactly as the ndjson export writes it'),
          proof: z.object({
            leafIndex: z.number().int(),
            treeSize: z.number().int().describe('Equals checkpoint.count'),
            leafHash: hex('SHA-256(0x00 || canonical JSON of the receipt)'),
            path: z.array(hex('sibling hash')).describe('Bottom up'),
          }),
          checkpoint: LedgerCheckpoint,
        }),
      },
      409: {
        description: 'receipt_not_sealed: recorded too recently to be in a checkpoint (receipts are sealed within a minute); try again shortly',
        schema: ErrorBody,
      },
      ...sessionErrors,
    },
  }),
  route({
    method: 'GET',
    path: WELL_KNOWN_KEYS_PATH,
    summary: 'The public keys that sign ledger checkpoints, old ones included (a JWK set)',
    auth: 'public',
    operation: 'LedgerKeys',
    respond: (data) => ({
      status: 200,
      headers: { 'Cache-Control': 'public, max-age=300' },
      body: { keys: data.ledgerKeys },
    }),
    responses: {
      200: {
        description: 'Ed25519 keys as JWKs (RFC 8037), newest first; `kid` is the RFC 7638 thumbprint that checkpoints name as keyId',
        schema: z
          .object({
            keys: z.array(
              z.object({
                kty: z.literal('OKP'),
                crv: z.literal('Ed25519'),
                x: z.string(),
                kid: z.string(),
                alg: z.literal('EdDSA'),
                use: z.literal('sig'),
                createdAt: timestamp.describe('When the service first used or published it'),
                notBefore: timestamp
                  .nullable()
                  .describe('When it began signing checkpoints here; null for a key only published (retired before this service’s records)'),
                notAfter: timestamp
                  .nullable()
                  .describe('When a newer key took over: a checkpoint it signed at or after this time is not genuine; null for the current key'),
              }),
            ),
          })
          .meta({ id: 'LedgerKeys' }),
      },
    },
  }),
];
