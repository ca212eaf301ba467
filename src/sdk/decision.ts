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
 * (project_id, installation_id, created_at DESC) answers it with one index probe.
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
  const receipt = await services.db.prisma.receipt.findFirst({
    where: { projectId: project.projectId, installationId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { versionId: true, consentHash: true, choices: true, createdAt: true },
  });
  return receipt && { ...receipt, choices: receipt.choices as Record<string, boolean> };
}
