import { z } from 'zod';
import type { DeleteSubjectMutation, RotateSubjectSecretMutation, SubjectSecretQuery } from '../generated/operations.js';
import { route } from '../route.js';
import { ErrorBody, sessionErrors, timestamp, validationError } from '../schemas.js';

// Issue 47 (docs/subjects.md): Viewer reads the subject secret's prefix and dates, Admin makes or rotates it and
// erases subjects. The SDK's identify and forget are in rest/routes/sdk.ts.
const base = '/api/platform/projects/:projectId';

const SubjectSecret = z
  .object({
    secretPrefix: z.string().describe('subsec_ and its first 6 characters'),
    createdAt: timestamp,
    previousValidUntil: timestamp
      .nullable()
      .describe('Until when tokens signed with the previous secret are still accepted (24 hours after a rotation); null when none'),
  })
  .meta({ id: 'SubjectSecret' });

export const subjectsRoutes = [
  route<SubjectSecretQuery>({
    method: 'GET',
    path: `${base}/subject-secret`,
    summary: "The project's subject secret (prefix and dates, never the secret), or null (Viewer or above)",
    auth: 'session',
    operation: 'SubjectSecret',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: { subjectSecret: data.subjectSecret } }),
    responses: { 200: { description: 'Subject secret', schema: z.object({ subjectSecret: SubjectSecret.nullable() }) }, ...sessionErrors },
  }),
  route<RotateSubjectSecretMutation>({
    method: 'POST',
    path: `${base}/subject-secret`,
    summary:
      'Make the subject secret, or rotate it (Admin or above; audited without the secret). The secret is in this answer only; ' +
      'tokens signed with the previous one are accepted for 24 more hours',
    auth: 'session',
    operation: 'RotateSubjectSecret',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: data.rotateSubjectSecret }),
    responses: {
      200: {
        description: 'Made or rotated',
        schema: z.object({
          subjectSecret: SubjectSecret,
          secret: z.string().describe('subsec_ plus 43 base62 characters, shown only now: the HS256 key (its UTF-8 bytes)'),
        }),
      },
      ...sessionErrors,
    },
  }),
  route<DeleteSubjectMutation>({
    method: 'DELETE',
    path: `${base}/subjects/:subjectHash`,
    summary:
      'Erase a subject (an erasure request; Admin or above; audited): every installation signed in as it is unlinked and the ' +
      'subject deleted. Its receipts stay, with their subject hash, so the ledger still verifies',
    auth: 'session',
    operation: 'DeleteSubject',
    variables: ({ params }) => ({ projectId: params.projectId, subjectHash: params.subjectHash }),
    respond: (data) => ({ status: 200, body: data.deleteSubject }),
    responses: {
      200: {
        description: 'Erased',
        schema: z.object({ subjectHash: z.string(), unlinkedInstallations: z.number().int() }),
      },
      ...validationError,
      ...sessionErrors,
      404: { description: 'Not a member, or no such subject', schema: ErrorBody },
    },
  }),
];
