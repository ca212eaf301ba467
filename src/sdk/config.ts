import type { Services } from '../services.js';
import { authenticateSdk } from './access.js';
import type { PublishedVersion } from './cache.js';
import { noPublishedVersion } from './errors.js';

export interface SdkConfig {
  projectId: string;
  version: PublishedVersion;
  config: unknown;
}

/** The latest published version of the key's project (never a draft). */
export async function sdkConfig(
  services: Services,
  caller: { token: string | undefined; origin: string | undefined },
): Promise<SdkConfig> {
  const { keyId, project } = await authenticateSdk(services, caller.token, caller.origin);
  await services.rateLimits.consume(
    { name: 'sdk-config', points: services.config.rateLimits.sdkConfigPerMinute, durationSeconds: 60 },
    keyId,
  );
  const version = project.version;
  if (!version) throw noPublishedVersion();
  return { projectId: project.projectId, version, config: version.config };
}
