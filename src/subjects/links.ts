import { z } from 'zod';
import { recordAudit } from '../audit/record.js';
import type { Connection } from '../db/database.js';
import { notFound } from '../errors.js';
import type { Services } from '../services.js';
import { authenticateSdk } from '../sdk/access.js';
import { INSTALLATION_ID } from '../sdk/consent.js';
import { decisionOf, type SdkDecision } from '../sdk/decision.js';
import { parseSdkBody } from '../sdk/errors.js';
import { parseInput } from '../validation.js';
import { subjectKeys } from './secret.js';
import { invalidSubjectToken, MAX_TOKEN_LENGTH, SUBJECT_HASH, subjectHashOf, subjectOfToken } from './token.js';

type Caller = { token: string | undefined; origin: string | undefined; address: string };

const installationId = z.string().regex(INSTALLATION_ID, 'installationId must be 8 to 64 of [A-Za-z0-9_-]');
/** Exactly these fields. The token is the operator's, signed for this installation's signed-in person. */
export const identifyBody = z
  .object({
    installationId,
    token: z.string().min(1).max(MAX_TOKEN_LENGTH).describe('The subject token: an HS256 JWT the operator’s backend signed (docs/subjects.md)'),
  })
  .strict();
export const forgetBody = z.object({ installationId }).strict();

/**
 * Key, origin and the consent POST's per key and address allowance (docs/security.md): a caller guessing tokens
 * or flooding links gets no further than its own address's allowance.
 */
async function sdkCaller(services: Services, caller: Caller, name: string) {
  const { keyId, project } = await authenticateSdk(services, caller.token, caller.origin);
  const limits = services.config.rateLimits;
  await services.rateLimits.consume(
    { name, points: limits.sdkConsentPerAddressPerMinute, durationSeconds: 60 },
    `${keyId}|${caller.address}`,
  );
  return project.projectId;
}

/**
 * POST /api/sdk/v2/identify: links the installation to the person the token names (only the hash of its `sub`
 * is kept), then answers the decision the installation now follows. When the device's own latest decision is
 * newer than the subject's, it becomes the subject's (the `subjects` row points at it): the newer wins, and both
 * receipts stay as they were. A bad token changes nothing.
 */
export async function identifyInstallation(services: Services, caller: Caller, input: unknown): Promise<{ decision: SdkDecision | null }> {
  const projectId = await sdkCaller(services, caller, 'sdk-identify-address');
  const body = parseSdkBody(identifyBody, input);
  const keys = await subjectKeys(services, projectId);
  if (!keys) throw invalidSubjectToken('This project has no subject secret');
  const now = services.now();
  const subjectHash = subjectHashOf(keys.pepper, await subjectOfToken(body.token, projectId, keys.secrets, now));
  const decision = await services.db.transaction(async (conn) => {
    await conn.query(
      `INSERT INTO subjects (project_id, subject_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [projectId, subjectHash, now],
    );
    // The subject's row is locked, so two devices signing in at once compare against each other's outcome.
    await conn.query(`SELECT 1 FROM subjects WHERE project_id = $1 AND subject_hash = $2 FOR UPDATE`, [projectId, subjectHash]);
    await conn.query(`DELETE FROM subject_links WHERE project_id = $1 AND installation_id = $2`, [projectId, body.installationId]);
    const subjectBefore = await subjectDecisionAt(conn, projectId, subjectHash);
    await conn.query(
      `INSERT INTO subject_links (project_id, installation_id, subject_hash, linked_at) VALUES ($1, $2, $3, $4)`,
      [projectId, body.installationId, subjectHash, now],
    );
    const [own] = await conn.query<{ id: string; created_at: Date | string }>(
      `SELECT id, created_at FROM receipts WHERE project_id = $1 AND installation_id = $2
          AND created_at = (SELECT max(created_at) FROM receipts WHERE project_id = $1 AND installation_id = $2)
        ORDER BY id DESC LIMIT 1`,
      [projectId, body.installationId],
    );
    if (own && (subjectBefore === null || new Date(own.created_at) > subjectBefore)) {
      await conn.query(
        `UPDATE subjects SET decision_receipt_id = $3, decision_created_at = $4 WHERE project_id = $1 AND subject_hash = $2`,
        [projectId, subjectHash, own.id, new Date(own.created_at)],
      );
    }
    return decisionOf(conn, projectId, body.installationId);
  });
  return { decision };
}

/** When the subject's newest decision was made (its receipts and the one identify() adopted), or null. */
async function subjectDecisionAt(conn: Pick<Connection, 'query'>, projectId: string, subjectHash: string): Promise<Date | null> {
  const [row] = await conn.query<{ at: Date | string | null }>(
    `SELECT greatest(
       (SELECT max(created_at) FROM receipts WHERE project_id = $1 AND subject_hash = $2),
       (SELECT decision_created_at FROM subjects WHERE project_id = $1 AND subject_hash = $2)) AS at`,
    [projectId, subjectHash],
  );
  return row?.at ? new Date(row.at) : null;
}

/** POST /api/sdk/v2/forget: the installation is signed out (its link deleted; nothing else changes). */
export async function forgetInstallation(services: Services, caller: Caller, input: unknown): Promise<{ ok: true }> {
  const projectId = await sdkCaller(services, caller, 'sdk-identify-address');
  const body = parseSdkBody(forgetBody, input);
  await services.db.query(`DELETE FROM subject_links WHERE project_id = $1 AND installation_id = $2`, [projectId, body.installationId]);
  return { ok: true };
}

const subjectHashInput = z.string().regex(SUBJECT_HASH, 'Must be a subject hash (64 hexadecimal characters, as receipts show it)');

/**
 * An erasure request (Admin): every installation of the subject is unlinked and the subject's row deleted. Its
 * receipts stay as they are, hash included, so the ledger's leaves still match them (docs/subjects.md).
 */
export async function deleteSubject(services: Services, projectId: string, subjectHashArg: unknown) {
  const subjectHash = parseInput(z.object({ subjectHash: subjectHashInput }), { subjectHash: subjectHashArg }).subjectHash;
  return services.db.prisma.$transaction(async (tx) => {
    const unlinked = await tx.subjectLink.deleteMany({ where: { projectId, subjectHash } });
    const subjects = await tx.subject.deleteMany({ where: { projectId, subjectHash } });
    if (!unlinked.count && !subjects.count) throw notFound('Subject');
    await recordAudit(tx, {
      action: 'subject.erased',
      projectId,
      target: { type: 'subject', id: subjectHash },
      changes: { unlinkedInstallations: { before: unlinked.count, after: 0 } },
    });
    return { subjectHash, unlinkedInstallations: unlinked.count };
  });
}
