import type { SignedCheckpoint } from '../../verify/ledger.mjs';
import { publishedKeys } from '../../src/ledger/keys.js';
import { getLedgerSettings, listCheckpoints, receiptProof, updateLedgerSettings, type LedgerSettings } from '../../src/ledger/service.js';
import { builder } from '../builder.js';

// The receipts ledger (extensions.md section 8, docs/ledger.md): signed checkpoints, inclusion proofs, public keys.

export const LedgerCheckpoint = builder.objectRef<SignedCheckpoint>('LedgerCheckpoint').implement({
  description:
    'A signed Merkle checkpoint over a project’s receipts. The signature (Ed25519, base64) covers the canonical JSON ' +
    '(RFC 8785) of projectId, sequence, previous, root, count, firstReceiptId, lastReceiptId and createdAt',
  fields: (t) => ({
    projectId: t.exposeID('projectId'),
    sequence: t.exposeInt('sequence', { description: '1, 2, 3, … per project' }),
    previous: t.exposeString('previous', { nullable: true, description: 'Hex SHA-256 of the previous checkpoint’s signed JSON; null for the first' }),
    root: t.exposeString('root', { description: 'Hex Merkle root (RFC 9162 hashing) of the sealed receipts, in leaf order' }),
    count: t.exposeInt('count', { description: 'Receipts sealed by this checkpoint' }),
    firstReceiptId: t.exposeID('firstReceiptId'),
    lastReceiptId: t.exposeID('lastReceiptId'),
    createdAt: t.exposeString('createdAt', { description: 'ISO 8601 UTC with milliseconds, as signed' }),
    keyId: t.exposeString('keyId', { description: 'Id (RFC 7638 thumbprint) of the key in /.well-known/consent-ledger-keys.json' }),
    signature: t.exposeString('signature', { description: 'Ed25519 signature, base64' }),
  }),
});

const LedgerCheckpointPage = builder.simpleObject('LedgerCheckpointPage', {
  fields: (t) => ({
    checkpoints: t.field({ type: [LedgerCheckpoint] }),
    nextCursor: t.string({ nullable: true }),
  }),
});

const InclusionProof = builder.simpleObject('InclusionProof', {
  description: 'RFC 9162 inclusion proof of one receipt’s leaf in its checkpoint’s tree',
  fields: (t) => ({
    leafIndex: t.int(),
    treeSize: t.int({ description: 'The checkpoint’s count' }),
    leafHash: t.string({ description: 'Hex SHA-256(0x00 || canonical JSON of the receipt)' }),
    path: t.stringList({ description: 'Hex sibling hashes, bottom up' }),
  }),
});

const ReceiptProof = builder.simpleObject('ReceiptProof', {
  fields: (t) => ({
    receipt: t.field({ type: 'JSON', description: 'The receipt exactly as the ndjson export writes it (what its leaf hashes)' }),
    proof: t.field({ type: InclusionProof }),
    checkpoint: t.field({ type: LedgerCheckpoint }),
  }),
});

const LedgerKey = builder.simpleObject('LedgerKey', {
  description: 'An Ed25519 public key as a JWK (RFC 8037); kid is its RFC 7638 thumbprint',
  fields: (t) => ({
    kty: t.string(),
    crv: t.string(),
    x: t.string(),
    kid: t.string(),
    alg: t.string(),
    use: t.string(),
    createdAt: t.field({ type: 'DateTime', description: 'When the service first used or published it' }),
    notBefore: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it began signing checkpoints here; null for a key only published (retired before this service’s records)',
    }),
    notAfter: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When a newer key took over: it signs nothing from then on; null for the current key',
    }),
  }),
});

builder.queryFields((t) => ({
  ledgerCheckpoints: t.field({
    type: LedgerCheckpointPage,
    description: 'The project’s ledger checkpoints, newest first, by cursor (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }), limit: t.arg.int(), cursor: t.arg.string() },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, { projectId, limit, cursor }, ctx) =>
      listCheckpoints(ctx.services, String(projectId), { ...(limit != null && { limit }), ...(cursor != null && { cursor }) }),
  }),
  receiptProof: t.field({
    type: ReceiptProof,
    description: 'A receipt, its inclusion path and the signed checkpoint (Viewer or above); receipt_not_sealed until it is sealed',
    args: { projectId: t.arg.id({ required: true }), receiptId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, { projectId, receiptId }, ctx) => receiptProof(ctx.services, String(projectId), String(receiptId)),
  }),
  ledgerKeys: t.field({
    type: [LedgerKey],
    description: 'Every public key that signs or signed ledger checkpoints, newest first (public)',
    resolve: (_root, _args, ctx) => publishedKeys(ctx.services),
  }),
}));

const LedgerSettingsRef = builder.objectRef<LedgerSettings>('LedgerSettings').implement({
  fields: (t) => ({
    checkpointWebhook: t.exposeBoolean('checkpointWebhook', {
      description: 'Each checkpoint is sent to the project webhook as a ledger.checkpoint event (off by default)',
    }),
  }),
});

const LedgerSettingsInput = builder.inputType('LedgerSettingsInput', {
  fields: (t) => ({ checkpointWebhook: t.boolean() }),
});

builder.queryField('ledgerSettings', (t) =>
  t.field({
    type: LedgerSettingsRef,
    description: 'The project’s ledger settings (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, args, ctx) => getLedgerSettings(ctx.services, String(args.projectId)),
  }),
);

builder.mutationField('updateLedgerSettings', (t) =>
  t.field({
    type: LedgerSettingsRef,
    description: 'Opts the project in or out of ledger.checkpoint webhook events (Admin or above)',
    args: { projectId: t.arg.id({ required: true }), input: t.arg({ type: LedgerSettingsInput, required: true }) },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'ADMIN' } }),
    resolve: (_root, args, ctx) =>
      updateLedgerSettings(ctx.services, String(args.projectId), {
        ...(args.input.checkpointWebhook != null && { checkpointWebhook: args.input.checkpointWebhook }),
      }),
  }),
);
