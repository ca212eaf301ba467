import type { VersionTcf } from '../tcf/tc-string.js';
import type { PublishedTcf } from '../tcf/settings.js';
import pg from 'pg';
import { sha256Hex } from '../auth/tokens.js';
import { storedConfig } from '../consent/config.js';
import type { Experience } from '../consent/experience.js';
import type { PublishedVersion } from '../consent/versions.js';
import { outageMonitor } from '../db/unavailable.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';
import { OriginRules } from './origins.js';

/** What an SDK request needs to know about a project; replaced whole when anything in it changes. */
export interface ProjectAccess {
  projectId: string;
  enforceOrigins: boolean;
  origins: OriginRules;
  revokedKeyIds: Set<string>;
  version: PublishedVersion | null;
  /** Whether the project made a subject secret: only then can an installation be signed in (docs/subjects.md). */
  subjects: boolean;
}

/** A version as the consent endpoint checks receipts against it. Versions are immutable. */
export interface VersionFacts {
  id: string;
  projectId: string;
  number: number;
  consentHash: string;
  /** Purpose key → required. */
  purposes: Map<string, boolean>;
  /** The published IAB TCF settings receipts' TC strings are checked against; null without TCF (docs/tcf.md). */
  tcf: VersionTcf | null;
}

interface KeyIdentity {
  keyId: string;
  projectId: string;
}

/** A shared load that also keeps its value once it has one, so the hot path can read it without awaiting. */
interface Loaded<T> {
  promise: Promise<T>;
  value?: T;
}

function loaded<T>(promise: Promise<T>): Loaded<T> {
  const entry: Loaded<T> = { promise };
  void promise.then((value) => (entry.value = value), () => {});
  return entry;
}

const MAX_KEYS = 10_000;
const MAX_VERSIONS = 1_000;
export const CACHE_CHANNEL = 'sdk_cache';

/**
 * The SDK hot path's in-process cache. A key's id and project never change and
 * versions are immutable, so those are kept as long as there is room. A project's
 * mutable part (origins, revoked keys, latest version) is dropped whenever the
 * database announces a change on the `sdk_cache` channel (triggers in the
 * 20261124000000_sdk_cache_notify migration fire on publish, key revocation and
 * origin changes), so every instance sharing the database forgets it at commit.
 * While this instance is not listening (start-up, a lost connection) project
 * data is read fresh on every request instead.
 * Entries hold promises, so concurrent misses share one query, and their values once
 * loaded, so the config hot path can answer without waiting (`knownKey`, `knownProject`).
 */
export class SdkCache {
  listening = false;
  private readonly keys = new Map<string, Loaded<KeyIdentity | null>>();
  private readonly projects = new Map<string, Loaded<ProjectAccess>>();
  private readonly versions = new Map<string, Promise<VersionFacts | null>>();
  private readonly projectsWithReceipts = new Set<string>();
  private readonly keysTouchedAt = new Map<string, number>();

  constructor(private readonly services: Services) {}

  /**
   * The key behind a publishable secret, or null when none has its SHA-256. Found keys are
   * remembered by the secret itself (publishable, and in this process anyway) so the hot path
   * skips hashing; unknown secrets are not kept, so guessing keys cannot fill memory.
   */
  key(secret: string): Promise<KeyIdentity | null> {
    let entry = this.keys.get(secret);
    if (!entry) {
      entry = loaded(
        this.services.db.prisma.apiKey
          .findUnique({ where: { secretHash: sha256Hex(secret) }, select: { id: true, projectId: true } })
          .then((row) => row && { keyId: row.id, projectId: row.projectId }),
      );
      const settled = entry;
      void settled.promise.then((found) => found || this.keys.delete(secret), () => this.keys.delete(secret));
      if (this.keys.size >= MAX_KEYS) this.keys.clear();
      this.keys.set(secret, settled);
    }
    return entry.promise;
  }

  project(projectId: string): Promise<ProjectAccess> {
    if (!this.listening) return this.loadProject(projectId);
    let entry = this.projects.get(projectId);
    if (!entry) {
      entry = loaded(this.loadProject(projectId));
      const settled = entry;
      void settled.promise.catch(() => this.projects.get(projectId) === settled && this.projects.delete(projectId));
      this.projects.set(projectId, settled);
    }
    return entry.promise;
  }

  /** The key already found for this secret, without waiting: undefined when it is not in memory. */
  knownKey(secret: string): KeyIdentity | undefined {
    return this.keys.get(secret)?.value ?? undefined;
  }

  /** The project as already loaded, without waiting: undefined when not in memory or not trustworthy (not listening). */
  knownProject(projectId: string): ProjectAccess | undefined {
    return this.listening ? this.projects.get(projectId)?.value : undefined;
  }

  version(versionId: string): Promise<VersionFacts | null> {
    let entry = this.versions.get(versionId);
    if (!entry) {
      entry = this.loadVersion(versionId);
      void entry.then((found) => found || this.versions.delete(versionId), () => this.versions.delete(versionId));
      if (this.versions.size >= MAX_VERSIONS) this.versions.clear();
      this.versions.set(versionId, entry);
    }
    return entry;
  }

  invalidateProject(projectId: string): void {
    this.projects.delete(projectId);
  }

  invalidateAllProjects(): void {
    this.projects.clear();
  }

  /** True once this instance knows the project has a receipt (the go-live check can be skipped). */
  knowsReceipts(projectId: string): boolean {
    return this.projectsWithReceipts.has(projectId);
  }

  rememberReceipts(projectId: string): void {
    this.projectsWithReceipts.add(projectId);
  }

  /** Whether this instance owes the key a `lastUsedAt` write (at most one a minute per key and instance). */
  touchDue(keyId: string): boolean {
    const last = this.keysTouchedAt.get(keyId);
    return last === undefined || this.services.now().getTime() - last >= 60_000;
  }

  /** Records `lastUsedAt` when due, not on every request. */
  async touchKey(keyId: string): Promise<void> {
    if (!this.touchDue(keyId)) return;
    const now = this.services.now();
    if (this.keysTouchedAt.size >= MAX_KEYS) this.keysTouchedAt.clear();
    this.keysTouchedAt.set(keyId, now.getTime());
    await this.services.db.prisma.apiKey.updateMany({ where: { id: keyId }, data: { lastUsedAt: now } });
  }

  private async loadProject(projectId: string): Promise<ProjectAccess> {
    const prisma = this.services.db.prisma;
    const [project, revoked, version, subjectSecret] = await Promise.all([
      prisma.project.findUniqueOrThrow({ where: { id: projectId }, select: { enforceOrigins: true, allowedOrigins: true } }),
      prisma.apiKey.findMany({ where: { projectId, revokedAt: { not: null } }, select: { id: true } }),
      prisma.consentVersion.findFirst({
        where: { projectId },
        orderBy: { number: 'desc' },
        select: { id: true, number: true, publishedAt: true, contentHash: true, consentHash: true, config: true, experience: true },
      }),
      prisma.subjectSecret.findUnique({ where: { projectId }, select: { projectId: true } }),
    ]);
    return {
      projectId,
      enforceOrigins: project.enforceOrigins,
      origins: new OriginRules(project.allowedOrigins),
      revokedKeyIds: new Set(revoked.map((key) => key.id)),
      // JSONB keeps keys in its own order: serve them in the contract's.
      version: version && { ...version, config: storedConfig(version.config), experience: version.experience as Experience | null },
      subjects: subjectSecret !== null,
    };
  }

  private async loadVersion(versionId: string): Promise<VersionFacts | null> {
    const row = await this.services.db.prisma.consentVersion.findUnique({
      where: { id: versionId },
      select: { id: true, projectId: true, number: true, consentHash: true, config: true, experience: true },
    });
    if (!row) return null;
    const purposes = ((row.config as { purposes?: { key: string; required: boolean }[] }).purposes ?? []).map(
      (purpose) => [purpose.key, purpose.required === true] as const,
    );
    const tcf = (row.experience as { tcf?: PublishedTcf } | null)?.tcf;
    return {
      id: row.id,
      projectId: row.projectId,
      number: row.number,
      consentHash: row.consentHash,
      purposes: new Map(purposes),
      tcf:
        tcf?.enabled && tcf.cmpId !== null && tcf.vendorListVersion !== undefined
          ? { cmpId: tcf.cmpId, vendorListVersion: tcf.vendorListVersion, vendors: new Set(tcf.vendors), googleAtps: new Set(tcf.googleAtps) }
          : null,
    };
  }
}

const caches = new WeakMap<Services, SdkCache>();

/** The cache of one running service (one per Services object). */
export function sdkCache(services: Services): SdkCache {
  let cache = caches.get(services);
  if (!cache) {
    cache = new SdkCache(services);
    caches.set(services, cache);
  }
  return cache;
}

/**
 * Listens on `sdk_cache` so project entries are dropped when another instance
 * (or this one) publishes, revokes a key or changes origins. PostgreSQL: a
 * dedicated connection that reconnects; the embedded database: its own listen().
 */
export function startSdkCacheListener(services: Services): Worker {
  const cache = sdkCache(services);
  let stopped = false;
  let stop: () => Promise<void> = async () => {};
  let retry: NodeJS.Timeout | undefined;
  const log = services.logger;

  const listenPglite = async () => {
    const unlisten = await services.db.pglite!.listen(CACHE_CHANNEL, (projectId) => cache.invalidateProject(projectId));
    cache.invalidateAllProjects();
    cache.listening = true;
    stop = async () => {
      cache.listening = false;
      if (!services.db.pglite!.closed) await unlisten();
    };
  };

  const listenPostgres = async () => {
    // TCP keep-alive: a connection that dies silently (NAT, firewall) ends after the probes fail,
    // and the cache stops trusting itself instead of missing notifications for good.
    const client = new pg.Client({ connectionString: services.config.databaseUrl, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    const lost = () => {
      cache.listening = false;
      if (!stopped) retry = setTimeout(() => void connect(), 1000);
    };
    client.on('notification', (message) => message.payload && cache.invalidateProject(message.payload));
    // An outage is logged once by its monitor (src/db/unavailable.ts), not by every reconnection attempt.
    client.on('error', (error) => outageMonitor(services).report(error) || log.warn({ err: error }, 'sdk cache listener error'));
    client.on('end', lost);
    stop = async () => {
      cache.listening = false;
      await client.end().catch(() => {});
    };
    try {
      await client.connect();
      await client.query(`LISTEN ${CACHE_CHANNEL}`);
    } catch (error) {
      if (!outageMonitor(services).report(error)) log.warn({ err: error }, 'sdk cache listener could not connect; reading projects uncached');
      client.removeListener('end', lost);
      await client.end().catch(() => {});
      if (!stopped) retry = setTimeout(() => void connect(), 1000);
      return;
    }
    // Whatever changed while nobody listened is forgotten before the cache is trusted again.
    cache.invalidateAllProjects();
    cache.listening = !stopped;
  };

  const connect = () => (services.db.pglite ? listenPglite() : listenPostgres());
  const started = connect().catch((error) => log.error({ err: error }, 'sdk cache listener failed'));

  return {
    name: 'sdk-cache-listener',
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await started;
      await stop();
    },
  };
}
