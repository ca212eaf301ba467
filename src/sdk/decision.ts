import type { Connection } from '../db/database.js';
import type { Services } from '../services.js';
import { authenticateSdk } from './access.js';
import { consumeConfigAllowance, type SdkCallerInfo } from './config.js';
import { INSTALLATION_ID } from './consent.js';
import { invalidBody } from './errors.js';

/** The latest decision recorded for an installation: what the SDK adopts after the hosted preferences page. */
export interface SdkDecision {
  versionId: string;
  consentHash: string;
  choices: Record<string, boolean>;
  createdAt: Date;
}

/**
 * GET /api/sdk/v2/decision: the installation's latest receipt in the key's project, or null; for an installation
 * signed in as a subject (docs/subjects.md), the newest decision of that subject across its installations.
 * Key and origin as for the config, and the config's rate limit (the SDK calls it only after
 * the visitor went to the hosted page or signed in, never on every page load).
 * Always on the primary, never the read replica: the SDK asks right after the visitor decided on the hosted
 * page (a POST by the same installation), and a replica behind by a second would answer the old decision.
 */
export async function latestDecision(
  services: Services,
  caller: SdkCallerInfo,
  installationId: string | undefined,
): Promise<SdkDecision | null> {
  const { keyId, project } = await authenticateSdk(services, caller.token, caller.origin);
  if (!installationId || !INSTALLATION_ID.test(installationId)) {
    throw invalidBody('X-Consent-Installation must be 8 to 64 of [A-Za-z0-9_-]');
  }
  await consumeConfigAllowance(services, keyId, caller.address);
  return decisionOf(services.db, project.projectId, installationId);
}

/**
 * The newest of: the installation's own latest receipt; when it is linked to a subject, the subject's latest
 * receipt and the decision identify() adopted for the subject (`subjects`). Each is found by an index probe per
 * month partition newer than it, then the last id of that millisecond (ORDER BY created_at DESC, id DESC
 * LIMIT 1 would read every older partition too, to be sure none ties: docs/scaling.md), so how many
 * installations a subject has never matters (bench/subjects-decision.ts). An installation with no link never
 * reads a subject's receipts: the link exists only after a valid token for that subject.
 */
export async function decisionOf(db: Pick<Connection, 'query'>, projectId: string, installationId: string): Promise<SdkDecision | null> {
  const [receipt] = await db.query<{ version_id: string; consent_hash: string; choices: unknown; created_at: Date | string }>(
    `WITH link AS (SELECT subject_hash FROM subject_links WHERE project_id = $1 AND installation_id = $2)
     SELECT version_id, consent_hash, choices, created_at FROM (
       (SELECT id, version_id, consent_hash, choices, created_at FROM receipts
         WHERE project_id = $1 AND installation_id = $2
           AND created_at = (SELECT max(created_at) FROM receipts WHERE project_id = $1 AND installation_id = $2)
         ORDER BY id DESC LIMIT 1)
       UNION ALL
       (SELECT id, version_id, consent_hash, choices, created_at FROM receipts
         WHERE project_id = $1 AND subject_hash = (SELECT subject_hash FROM link)
           AND created_at = (SELECT max(created_at) FROM receipts WHERE project_id = $1 AND subject_hash = (SELECT subject_hash FROM link))
         ORDER BY id DESC LIMIT 1)
       UNION ALL
       (SELECT r.id, r.version_id, r.consent_hash, r.choices, r.created_at
          FROM subjects AS s JOIN receipts AS r
            ON r.project_id = s.project_id AND r.created_at = s.decision_created_at AND r.id = s.decision_receipt_id
         WHERE s.project_id = $1 AND s.subject_hash = (SELECT subject_hash FROM link))
     ) AS candidates
     ORDER BY created_at DESC, id DESC LIMIT 1`,
    [projectId, installationId],
  );
  if (!receipt) return null;
  return {
    versionId: receipt.version_id,
    consentHash: receipt.consent_hash,
    choices: (typeof receipt.choices === 'string' ? JSON.parse(receipt.choices) : receipt.choices) as Record<string, boolean>,
    createdAt: new Date(receipt.created_at),
  };
}
