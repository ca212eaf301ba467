// What the service last refused from a project's sites (issue 28, item 5): the go-live checklist says "your key
// was refused", "your origin is not allowed" or "no request yet" instead of staying "to do" without a hint.
// Refusals are the SDK API's error path, never its success path; still, a site pasting a wrong key refuses on
// every page view, so a refusal is written at most once a minute per project and kind (in memory first, like a
// key's lastUsedAt), without delaying the answer, and a failed write is only logged.
import type { Services } from '../services.js';
import { KEY_PREFIX, keyPrefixOf } from '../keys/service.js';

export type RefusalKind = 'invalid_key' | 'revoked_key' | 'origin_not_allowed';

export interface SdkRefusalRow {
  kind: RefusalKind;
  origin: string | null;
  keyPrefix: string | null;
  seenAt: Date;
}

const WRITE_EVERY_MS = 60_000;
const MAX_ENTRIES = 10_000;
/** An unknown key is tied to a project by its prefix: one lookup per prefix a minute, and at most this many a minute. */
const MAX_PREFIX_LOOKUPS_PER_MINUTE = 60;
const PREFIX_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{6}`);

class RefusalLog {
  private readonly writtenAt = new Map<string, number>();
  private readonly prefixLookedUpAt = new Map<string, number>();
  private lookups = { minute: 0, count: 0 };

  constructor(private readonly services: Services) {}

  /** Records a refusal tied to a project (a revoked key, an origin not allowed), unless one was written this minute. */
  record(projectId: string, kind: RefusalKind, origin: string | undefined, keyPrefix: string | null): void {
    const now = this.services.now();
    if (!this.due(this.writtenAt, `${projectId} ${kind}`, now.getTime())) return;
    const row = { kind, origin: origin?.slice(0, 255) ?? null, keyPrefix, seenAt: now };
    void this.services.db.prisma.sdkRefusal
      .upsert({ where: { projectId_kind: { projectId, kind } }, create: { projectId, ...row }, update: row })
      .catch((error) => this.services.logger.warn({ err: error, projectId, kind }, 'sdk refusal not recorded'));
  }

  /**
   * An unknown key cannot name its project; one that starts like a key of a project (a truncated or mistyped copy,
   * or an old key's prefix) is recorded for that project with the prefix only. Lookups are bounded per prefix
   * and in all, so a flood of random keys costs at most a query a second.
   */
  recordUnknownKey(token: string | undefined, origin: string | undefined): void {
    if (!token || !PREFIX_SHAPE.test(token)) return;
    const prefix = keyPrefixOf(token);
    const now = this.services.now().getTime();
    const minute = Math.floor(now / WRITE_EVERY_MS);
    if (this.lookups.minute !== minute) this.lookups = { minute, count: 0 };
    if (this.lookups.count >= MAX_PREFIX_LOOKUPS_PER_MINUTE || !this.due(this.prefixLookedUpAt, prefix, now)) return;
    this.lookups.count++;
    void this.services.db.prisma.apiKey
      .findMany({ where: { prefix }, select: { projectId: true }, distinct: ['projectId'], take: 5 })
      .then((keys) => keys.forEach((key) => this.record(key.projectId, 'invalid_key', origin, prefix)))
      .catch((error) => this.services.logger.warn({ err: error }, 'sdk refusal not attributed'));
  }

  private due(times: Map<string, number>, id: string, now: number): boolean {
    const last = times.get(id);
    if (last !== undefined && now - last < WRITE_EVERY_MS) return false;
    if (times.size >= MAX_ENTRIES) times.clear();
    times.set(id, now);
    return true;
  }
}

const logs = new WeakMap<Services, RefusalLog>();

/** The refusal log of one running service. */
export function sdkRefusals(services: Services): RefusalLog {
  let log = logs.get(services);
  if (!log) {
    log = new RefusalLog(services);
    logs.set(services, log);
  }
  return log;
}

/** A project's last refusals, newest first (the console's go-live checklist). */
export async function listSdkRefusals(services: Services, projectId: string): Promise<SdkRefusalRow[]> {
  const rows = await services.db.prisma.sdkRefusal.findMany({
    where: { projectId },
    select: { kind: true, origin: true, keyPrefix: true, seenAt: true },
    orderBy: { seenAt: 'desc' },
  });
  return rows.map((row) => ({ ...row, kind: row.kind as RefusalKind }));
}
