import type { AppError } from '../errors.js';
import { KEY_PATTERN, keyPrefixOf } from '../keys/service.js';
import type { Services } from '../services.js';
import { sdkCache, type ProjectAccess } from './cache.js';
import { invalidKey, originNotAllowed, revokedKey } from './errors.js';
import { sdkRefusals } from './refusals.js';

export interface SdkCaller {
  keyId: string;
  project: ProjectAccess;
}

const serviceOrigins = new WeakMap<Services, string>();

/**
 * Who is calling the SDK API: a publishable key (never an operator session),
 * not revoked, from an allowed origin. Requests without an Origin header are
 * not browser cross-origin calls and pass; so do calls from the service's own
 * origin (PUBLIC_BASE_URL), where the hosted preferences page runs.
 */
export async function authenticateSdk(services: Services, token: string | undefined, origin: string | undefined): Promise<SdkCaller> {
  const unknown = () => (sdkRefusals(services).recordUnknownKey(token, origin), invalidKey());
  if (!token || !KEY_PATTERN.test(token)) throw unknown();
  const cache = sdkCache(services);
  const key = await cache.key(token);
  if (!key) throw unknown();
  const project = await cache.project(key.projectId);
  const refused = refusal(services, key.keyId, project, origin);
  if (refused) {
    // Remembered for the go-live checklist (throttled, not awaited): what the operator's site was refused.
    sdkRefusals(services).record(key.projectId, refused.code as 'revoked_key' | 'origin_not_allowed', origin, keyPrefixOf(token));
    throw refused;
  }
  await cache.touchKey(key.keyId);
  return { keyId: key.keyId, project };
}

/**
 * The same decision from memory alone, for the config hot path: the caller when the key and
 * project are cached and the request passes; undefined when anything is missing, refused or a
 * `lastUsedAt` write is due, so the full path decides (and says why).
 */
export function authenticateSdkFromMemory(services: Services, token: string | undefined, origin: string | undefined): SdkCaller | undefined {
  if (!token) return undefined;
  const cache = sdkCache(services);
  // Only secrets that matched a key are remembered, so a hit has passed KEY_PATTERN already.
  const key = cache.knownKey(token);
  const project = key && cache.knownProject(key.projectId);
  if (!project || refusal(services, key.keyId, project, origin) || cache.touchDue(key.keyId)) return undefined;
  return { keyId: key.keyId, project };
}

function refusal(services: Services, keyId: string, project: ProjectAccess, origin: string | undefined): AppError | null {
  if (project.revokedKeyIds.has(keyId)) return revokedKey();
  if (origin !== undefined && project.enforceOrigins && !project.origins.allows(origin) && origin !== ownOrigin(services)) {
    return originNotAllowed();
  }
  return null;
}

function ownOrigin(services: Services): string {
  let origin = serviceOrigins.get(services);
  if (origin === undefined) {
    origin = new URL(services.config.publicBaseUrl).origin;
    serviceOrigins.set(services, origin);
  }
  return origin;
}

export type KeyStatus = 'ACTIVE' | 'REVOKED' | 'UNKNOWN';

/** Whether a publishable key would be accepted (the hosted preferences page checks it before rendering). */
export async function publishableKeyStatus(services: Services, token: string): Promise<KeyStatus> {
  if (!KEY_PATTERN.test(token)) return 'UNKNOWN';
  const cache = sdkCache(services);
  const key = await cache.key(token);
  if (!key) return 'UNKNOWN';
  const project = await cache.project(key.projectId);
  return project.revokedKeyIds.has(key.keyId) ? 'REVOKED' : 'ACTIVE';
}
