// Issue 47 (docs/subjects.md): one decision for a signed-in person. The subject secret (Admin; shown once),
// erasure of a subject (Admin), and the SDK's identify / forget (publishable key).
import { deleteSubject, forgetInstallation, identifyInstallation } from '../../src/subjects/links.js';
import { rotateSubjectSecret, subjectSecretStatus, type SubjectSecretStatus } from '../../src/subjects/secret.js';
import { builder } from '../builder.js';
import { SdkDecisionRef } from './sdk.js';

const projectScope = (role: 'ADMIN' | 'VIEWER') => (_root: unknown, args: { projectId: string | number }) => ({
  projectRole: { projectId: String(args.projectId), role },
});

// The secret itself is not a field: it is shown once, in the payload of the mutation that made it.
const SubjectSecretRef = builder.objectRef<SubjectSecretStatus>('SubjectSecret').implement({
  description: 'The project’s subject secret, which signs subject tokens (docs/subjects.md); never the secret itself',
  fields: (t) => ({
    secretPrefix: t.exposeString('secretPrefix', { description: 'subsec_ and its first 6 characters' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When this secret was made' }),
    previousValidUntil: t.expose('previousValidUntil', {
      type: 'DateTime',
      nullable: true,
      description: 'Until when tokens signed with the previous secret are still accepted (24 hours after a rotation); null when none',
    }),
  }),
});

const SubjectSecretWithSecret = builder.simpleObject('SubjectSecretWithSecret', {
  fields: (t) => ({
    subjectSecret: t.field({ type: SubjectSecretRef }),
    secret: t.string({ description: 'subsec_…, shown only now: the HS256 key (its UTF-8 bytes) the backend signs subject tokens with' }),
  }),
});

const ErasedSubject = builder.simpleObject('ErasedSubject', {
  fields: (t) => ({
    subjectHash: t.string(),
    unlinkedInstallations: t.int({ description: 'How many installations were signed in as the subject' }),
  }),
});

const IdentifyAnswer = builder.simpleObject('SdkIdentifyAnswer', {
  fields: (t) => ({
    decision: t.field({ type: SdkDecisionRef, nullable: true, description: 'The decision the installation now follows, as /decision answers it' }),
  }),
});

const ForgetAnswer = builder.simpleObject('SdkForgetAnswer', { fields: (t) => ({ ok: t.boolean() }) });

builder.queryField('subjectSecret', (t) =>
  t.field({
    type: SubjectSecretRef,
    nullable: true,
    description: 'The project’s subject secret (its prefix and dates), or null when none was made (Viewer or above)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: projectScope('VIEWER'),
    resolve: (_root, args, ctx) => subjectSecretStatus(ctx.services, String(args.projectId)),
  }),
);

builder.mutationField('rotateSubjectSecret', (t) =>
  t.field({
    type: SubjectSecretWithSecret,
    description: 'Makes the project’s subject secret, or replaces it; the previous one is honoured for 24 hours (Admin or above; audited)',
    args: { projectId: t.arg.id({ required: true }) },
    authScopes: projectScope('ADMIN'),
    resolve: (_root, args, ctx) => rotateSubjectSecret(ctx.services, String(args.projectId)),
  }),
);

builder.mutationField('deleteSubject', (t) =>
  t.field({
    type: ErasedSubject,
    description:
      'An erasure request: unlinks every installation signed in as the subject and deletes the subject; receipts and the ledger stay (Admin or above; audited)',
    args: { projectId: t.arg.id({ required: true }), subjectHash: t.arg.string({ required: true }) },
    authScopes: projectScope('ADMIN'),
    resolve: (_root, args, ctx) => deleteSubject(ctx.services, String(args.projectId), args.subjectHash),
  }),
);

builder.mutationField('sdkIdentify', (t) =>
  t.field({
    type: IdentifyAnswer,
    description: 'SDK v2: signs the installation in as the subject a subject token names (Bearer publishable key; docs/subjects.md)',
    args: { input: t.arg({ type: 'JSON', required: true }) },
    resolve: (_root, args, ctx) => identifyInstallation(ctx.services, { token: ctx.bearer, origin: ctx.origin, address: ctx.ip }, args.input),
  }),
);

builder.mutationField('sdkForget', (t) =>
  t.field({
    type: ForgetAnswer,
    description: 'SDK v2: signs the installation out: it no longer follows the subject’s decision (Bearer publishable key)',
    args: { input: t.arg({ type: 'JSON', required: true }) },
    resolve: (_root, args, ctx) => forgetInstallation(ctx.services, { token: ctx.bearer, origin: ctx.origin, address: ctx.ip }, args.input),
  }),
);
