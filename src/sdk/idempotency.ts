// The consent POST's Idempotency-Key (issue 45, docs/sdk-api.md "Idempotency-Key"). A key is taken by the
// receipt writer's own statement, together with its receipt (src/sdk/receipt-writer.ts): the primary key of
// sdk_idempotency_keys decides, across instances, which request stored the receipt; every other request with
// the key answers that receipt's 201 again, or 409 when its body differs.
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import type { Worker } from '../workers.js';

/** A key is 1 to 255 visible ASCII characters (U+0021 to U+007E): a UUID, a ULID, Stripe-style keys. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** How long a key answers for its receipt. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const PURGE_INTERVAL_MS = 60 * 60 * 1000;

export interface Idempotency {
  key: string;
  /** SHA-256 of the parsed body's canonical JSON (RFC 8785), in hex. */
  requestHash: string;
}

/** A stored key: which receipt answered it. */
export interface TakenKey {
  /** In hex, as Idempotency's. */
  requestHash: string;
  receiptId: string;
  createdAt: Date;
}

/** The header's value checked (400 `invalid_idempotency_key`), or null when the request has none. */
export function idempotencyKeyOf(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (!IDEMPOTENCY_KEY.test(value)) {
    throw new AppError('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters (U+0021 to U+007E), e.g. a UUID');
  }
  return value;
}

/** "The same body": the parsed body (after defaults and canonical casing) as RFC 8785 JSON, hashed (hex). */
export const requestHashOf = (parsedBody: unknown): string => hash('sha256', JSON.stringify(withSortedKeys(parsedBody)));

/**
 * A copy of a parsed JSON value with every object's keys in sorted order, which JSON.stringify then writes as RFC
 * 8785 canonical JSON: the same number and string forms (a lone surrogate is refused before: src/storable-text.ts).
 * Not the `canonicalize` package: on the consent POST's path it cost 6-8 µs a keyed request, this about 2 (its
 * generic checks; a test keeps the two equal, so keys stored before still match: bench/README.md).
 */
function withSortedKeys(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(withSortedKeys);
  // A plain object (one without a prototype is a slower dictionary): the body's keys are its strict schema's and
  // the version's purpose keys, never "__proto__".
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = withSortedKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

export const idempotencyConflict = () =>
  new AppError('idempotency_conflict', 'This Idempotency-Key was used with a different body in the last 24 hours; send a new key for a new decision');

/** A receipt that was not stored because its key answers an earlier one (the writer rejects it with this). */
export class IdempotencyKeyTaken extends Error {
  constructor(readonly taken: TakenKey) {
    super('Idempotency-Key already taken');
  }
}

/**
 * The keys among these that are stored and not expired, by `projectId \0 key`. Expired rows of these keys are
 * deleted first (the purge may not have run yet), so the writer's retry can take them again.
 */
export async function takenKeys(services: Services, keys: { projectId: string; key: string }[]): Promise<Map<string, TakenKey>> {
  const projects = keys.map((k) => k.projectId);
  const names = keys.map((k) => k.key);
  const cutoff = new Date(services.now().getTime() - IDEMPOTENCY_TTL_MS);
  await services.db.query(
    `DELETE FROM sdk_idempotency_keys WHERE (project_id, key) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND created_at <= $3`,
    [projects, names, cutoff],
  );
  const rows = await services.db.query<{ project_id: string; key: string; request_hash: Buffer | Uint8Array; receipt_id: string; created_at: Date | string }>(
    `SELECT project_id, key, request_hash, receipt_id, created_at FROM sdk_idempotency_keys
      WHERE (project_id, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [projects, names],
  );
  return new Map(
    rows.map((row) => [
      `${row.project_id}\0${row.key}`,
      { requestHash: Buffer.from(row.request_hash).toString('hex'), receiptId: row.receipt_id, createdAt: new Date(row.created_at) },
    ]),
  );
}

/**
 * Keys this instance saw taken (stored by its writer, or found taken by it), until their 24 hours end: a repeat of
 * one is answered from here, without joining a batch whose statement it would fail (the writer would then write
 * that batch's other receipts again). Repeats that reach another instance still go through the database.
 */
const recentlyTaken = new WeakMap<Services, LRUCache<string, TakenKey>>();
/** At most this many keys per instance (about 200 bytes each). */
const RECENTLY_TAKEN_MAX = 50_000;

const recentOf = (services: Services) => {
  let recent = recentlyTaken.get(services);
  if (!recent) recentlyTaken.set(services, (recent = new LRUCache<string, TakenKey>({ max: RECENTLY_TAKEN_MAX })));
  return recent;
};

/** Remembers a key as taken by its receipt, for what is left of its 24 hours. */
export function rememberTaken(services: Services, projectId: string, key: string, taken: TakenKey): void {
  const ttl = taken.createdAt.getTime() + IDEMPOTENCY_TTL_MS - services.now().getTime();
  if (ttl > 0) recentOf(services).set(`${projectId}\0${key}`, taken, { ttl });
}

/** The receipt that took this key, if this instance saw it taken in the last 24 hours (by the service's clock). */
export function takenRecently(services: Services, projectId: string, key: string): TakenKey | undefined {
  const taken = recentlyTaken.get(services)?.get(`${projectId}\0${key}`);
  return taken && services.now().getTime() - taken.createdAt.getTime() < IDEMPOTENCY_TTL_MS ? taken : undefined;
}

/** Deletes keys older than 24 hours; answers how many. */
export async function purgeExpiredIdempotencyKeys(services: Services): Promise<number> {
  const cutoff = new Date(services.now().getTime() - IDEMPOTENCY_TTL_MS);
  const rows = await services.db.query<{ purged: number }>(
    'WITH gone AS (DELETE FROM sdk_idempotency_keys WHERE created_at <= $1 RETURNING 1) SELECT count(*)::int AS purged FROM gone',
    [cutoff],
  );
  return rows[0]!.purged;
}

/** The purge as a worker: hourly, never two at once here. */
export function idempotencyPurgeWorker(services: Services): Worker {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= purgeExpiredIdempotencyKeys(services)
      .then((purged) => purged && services.logger.info({ purged }, 'expired idempotency keys purged'))
      .catch((error) => services.logger.error({ err: error }, 'idempotency key purge failed'))
      .finally(() => (running = undefined));
  }, PURGE_INTERVAL_MS);
  timer.unref();
  return {
    name: 'idempotency-purge',
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
