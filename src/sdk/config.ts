import type { Services } from '../services.js';
import { authenticateSdk, authenticateSdkFromMemory } from './access.js';
import type { PublishedVersion } from '../consent/versions.js';
import type { ProjectAccess } from './cache.js';
import { noPublishedVersion } from './errors.js';

export interface SdkConfig {
  projectId: string;
  version: PublishedVersion;
  config: unknown;
}

interface SdkCallerInfo {
  token: string | undefined;
  origin: string | undefined;
  /** The client address (src/http/client-address.ts): the rate limit counts per key and address. */
  address: string;
}

/** The latest published version of the key's project (never a draft). */
export async function sdkConfig(services: Services, caller: SdkCallerInfo): Promise<SdkConfig> {
  const { keyId, project } = await authenticateSdk(services, caller.token, caller.origin);
  return served(services, keyId, project, caller.address);
}

/**
 * The hot path's answer: the same checks and rate limit, with the key and project taken from
 * memory. Undefined when they are not there (or the request would be refused): run `sdkConfig`.
 */
export function sdkConfigFromMemory(services: Services, caller: SdkCallerInfo): Promise<SdkConfig> | undefined {
  const found = authenticateSdkFromMemory(services, caller.token, caller.origin);
  return found && served(services, found.keyId, found.project, caller.address);
}

/**
 * Counted per key AND client address: the key is public (it is in every visitor's page), so one
 * client spending the key's whole budget would otherwise shut the site's banner for everyone.
 */
function served(services: Services, keyId: string, project: ProjectAccess, address: string): Promise<SdkConfig> {
  const limit = { name: 'sdk-config', points: services.config.rateLimits.sdkConfigPerMinute, durationSeconds: 60 };
  return services.rateLimits.consume(limit, `${keyId}|${address}`).then(() => {
    const version = project.version;
    if (!version) throw noPublishedVersion();
    return { projectId: project.projectId, version, config: version.config };
  });
}
