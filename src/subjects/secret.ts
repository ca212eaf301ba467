import { randomBytes } from 'node:crypto';
import { randomBase62 } from '../auth/tokens.js';
import { recordAudit } from '../audit/record.js';
import type { Services } from '../services.js';

const SECRET_PREFIX = 'subsec_';
/** `subsec_` + 43 base62 characters (over 256 bits): the HS256 key is the secret's UTF-8 bytes. */
const newSecret = () => SECRET_PREFIX + randomBase62(43);
/** What an operator sees of the secret afterwards, as of webhook secrets: the prefix plus 6 characters. */
const prefixOf = (secret: string) => secret.slice(0, SECRET_PREFIX.length + 6);

/**
 * How long the previous secret still verifies tokens after a rotation: 24 hours, the longest a token may live,
 * so every token signed just before the rotation expires before its secret stops counting.
 */
export const SUBJECT_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** What anyone with the project may see of its subject secret: never the secret. */
export interface SubjectSecretStatus {
  secretPrefix: string;
  createdAt: Date;
  /** Until when tokens signed with the previous secret are still accepted; null when there is none. */
  previousValidUntil: Date | null;
}

export async function subjectSecretStatus(services: Services, projectId: string): Promise<SubjectSecretStatus | null> {
  return services.db.prisma.subjectSecret.findUnique({
    where: { projectId },
    select: { secretPrefix: true, createdAt: true, previousValidUntil: true },
  });
}

/**
 * Makes the project's subject secret, or replaces it: the old one then verifies tokens for
 * SUBJECT_SECRET_GRACE_MS more. The secret is returned here only (shown once); the audit entry holds prefixes.
 * The first call also makes the project's pepper, which is never rotated (subject hashes stay the same).
 */
export async function rotateSubjectSecret(services: Services, projectId: string): Promise<{ subjectSecret: SubjectSecretStatus; secret: string }> {
  const secret = newSecret();
  const now = services.now();
  const subjectSecret = await services.db.prisma.$transaction(async (tx) => {
    // Locks the row, so two rotations at once keep a consistent previous secret.
    const [before] = await tx.$queryRaw<{ secret: string; secret_prefix: string }[]>`
      SELECT secret, secret_prefix FROM subject_secrets WHERE project_id = ${projectId} FOR UPDATE`;
    const after = before
      ? await tx.subjectSecret.update({
          where: { projectId },
          data: {
            secret,
            secretPrefix: prefixOf(secret),
            createdAt: now,
            previousSecret: before.secret,
            previousValidUntil: new Date(now.getTime() + SUBJECT_SECRET_GRACE_MS),
          },
        })
      : await tx.subjectSecret.create({
          data: { projectId, pepper: randomBytes(32), secret, secretPrefix: prefixOf(secret), createdAt: now },
        });
    await recordAudit(tx, {
      action: before ? 'subject.secret_rotated' : 'subject.secret_created',
      projectId,
      target: { type: 'subject_secret', id: projectId },
      changes: { secretPrefix: { before: before?.secret_prefix ?? null, after: after.secretPrefix } },
    });
    return { secretPrefix: after.secretPrefix, createdAt: after.createdAt, previousValidUntil: after.previousValidUntil };
  });
  return { subjectSecret, secret };
}

/** The secrets that verify a token now (the current one first) and the pepper; null when the project has none. */
export async function subjectKeys(services: Services, projectId: string): Promise<{ secrets: string[]; pepper: Buffer } | null> {
  const row = await services.db.prisma.subjectSecret.findUnique({ where: { projectId } });
  if (!row) return null;
  const secrets = [row.secret];
  if (row.previousSecret && row.previousValidUntil && row.previousValidUntil > services.now()) secrets.push(row.previousSecret);
  return { secrets, pepper: Buffer.from(row.pepper) };
}
