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
 * GET /api/sdk/v2/decision: the installation's latest receipt in the key's project, or null.
 * Key and origin as for the config, and the config's rate limit (the SDK calls it only after
 * the visitor went to the hosted page, never on every page load). The receipts index on
 * (project_id, installation_id, created_at DESC) answers it with one index probe per month partition newer
 * than the installation's last receipt, and one more.
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
  // The newest time first, month partition by month partition through receipts_decision, stopping at the first
  // that has one; then the last id of that millisecond, in that partition alone. (ORDER BY created_at DESC, id
  // DESC LIMIT 1 would read every older partition too, to be sure none ties on created_at: docs/scaling.md.)
  const [receipt] = await services.db.query<{ version_id: string; consent_hash: string; choices: unknown; created_at: Date | string }>(
    `SELECT version_id, consent_hash, choices, created_at FROM receipts
      WHERE project_id = $1 AND installation_id = $2
        AND created_at = (SELECT max(created_at) FROM receipts WHERE project_id = $1 AND installation_id = $2)
      ORDER BY id DESC LIMIT 1`,
    [project.projectId, installationId],
  );
  if (!receipt) return null;
  return {
    versionId: receipt.version_id,
    consentHash: receipt.consent_hash,
    choices: (typeof receipt.choices === 'string' ? JSON.parse(receipt.choices) : receipt.choices) as Record<string, boolean>,
    createdAt: new Date(receipt.created_at),
  };
}
