import { createHash, timingSafeEqual } from 'node:crypto';
import client from 'prom-client';
import { outageMonitor } from '../db/unavailable.js';
import type { Services } from '../services.js';

/** Request duration buckets, seconds: the SDK answers in well under a millisecond, exports take seconds. */
const DURATION_BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_BOUNDS = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const WEBHOOK_BOUNDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The outbox question at scrape time waits no longer than this; past it the gauges are left out. */
const OUTBOX_QUERY_TIMEOUT_MS = 1000;
/** The label of every path no route matches: one series, however many URLs are tried. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Requests to one route (its path pattern) with one method: plain numbers bumped on the
 * request path, turned into Prometheus samples only when scraped. prom-client's own
 * `labels().observe()` hashes the label set on every call; this costs an array bump and
 * one small map update, so the SDK hot path does not pay for being measured.
 */
export class RouteTiming {
  private readonly buckets = new Float64Array(DURATION_BOUNDS.length);
  private readonly statuses = new Map<number, number>();
  private sum = 0;
  private count = 0;

  constructor(
    readonly route: string,
    readonly method: string,
  ) {}

  /** `started`: the request's `performance.now()`. */
  observe(status: number, started: number): void {
    const seconds = (performance.now() - started) / 1e3;
    let bound = 0;
    while (bound < DURATION_BOUNDS.length && seconds > DURATION_BOUNDS[bound]!) bound++;
    if (bound < DURATION_BOUNDS.length) this.buckets[bound]!++;
    this.sum += seconds;
    this.count++;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  requestSamples(): { labels: Record<string, string | number>; value: number }[] {
    return [...this.statuses].map(([status, value]) => ({ labels: { route: this.route, method: this.method, status }, value }));
  }

  durationSamples(name: string): { metricName: string; labels: Record<string, string>; value: number }[] {
    if (!this.count) return [];
    const labels = { route: this.route, method: this.method };
    const samples = [];
    let cumulative = 0;
    for (let i = 0; i < DURATION_BOUNDS.length; i++) {
      cumulative += this.buckets[i]!;
      samples.push({ metricName: `${name}_bucket`, labels: { ...labels, le: String(DURATION_BOUNDS[i]) }, value: cumulative });
    }
    samples.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: this.count });
    samples.push({ metricName: `${name}_sum`, labels, value: this.sum });
    samples.push({ metricName: `${name}_count`, labels, value: this.count });
    return samples;
  }
}

/**
 * The service's Prometheus metrics (docs/operations.md, "Metrics"): one registry per running
 * server, so test servers in one process never mix their numbers. Built only when METRICS_PORT
 * or METRICS_TOKEN is set; otherwise `metricsOf` is undefined and nothing is measured.
 */
export class Metrics {
  readonly registry = new client.Registry();
  private readonly timings = new Map<string, RouteTiming>();
  private outboxRow: OutboxRow | undefined;

  readonly receiptsWritten: client.Counter;
  readonly receiptBatchSize: client.Histogram;
  readonly receiptsShed: client.Counter;
  readonly webhookDeliveries: client.Counter<'outcome'>;
  readonly webhookLatency: client.Histogram;

  constructor(
    private readonly services: Services,
    /** The receipt writer's queue length, read at scrape time. */
    receiptQueueLength: () => number,
  ) {
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
    const timings = this.timings;
    this.registry.registerMetric({
      name: 'http_requests_total',
      get: () => ({
        name: 'http_requests_total',
        help: 'HTTP requests answered, by route pattern (unmatched for any unknown path), method and status',
        type: 'counter',
        values: [...timings.values()].flatMap((timing) => timing.requestSamples()),
        aggregator: 'sum',
      }),
    } as unknown as client.Metric);
    this.registry.registerMetric({
      name: 'http_request_duration_seconds',
      get: () => ({
        name: 'http_request_duration_seconds',
        help: 'HTTP request duration in seconds, by route pattern and method',
        type: 'histogram',
        values: [...timings.values()].flatMap((timing) => timing.durationSamples('http_request_duration_seconds')),
        aggregator: 'sum',
      }),
    } as unknown as client.Metric);

    this.receiptsWritten = new client.Counter({ name: 'consent_receipts_written_total', help: 'Consent receipts committed to the database', registers });
    this.receiptBatchSize = new client.Histogram({
      name: 'consent_receipt_batch_size',
      help: 'Receipts per group-commit transaction',
      buckets: BATCH_BOUNDS,
      registers,
    });
    this.receiptsShed = new client.Counter({
      name: 'consent_receipts_shed_total',
      help: 'Receipts refused with 503 because the queue was full or they waited DATABASE_WAIT_MS',
      registers,
    });
    new client.Gauge({
      name: 'consent_receipt_queue_length',
      help: 'Receipts waiting for a group-commit transaction',
      registers,
      collect() {
        this.set(receiptQueueLength());
      },
    });
    this.webhookDeliveries = new client.Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (succeeded, retrying, failed, lease_lost)',
      labelNames: ['outcome'],
      registers,
    });
    this.webhookLatency = new client.Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: "Time for the receiver's answer (or the timeout) per delivery attempt",
      buckets: WEBHOOK_BOUNDS,
      registers,
    });

    const db = services.db;
    const pool = (name: string, help: string, read: (p: NonNullable<typeof db.pool>) => number) =>
      new client.Gauge({
        name,
        help,
        registers,
        collect() {
          // The embedded database has one connection and no pool: reported as one, in use.
          this.set(db.pool ? read(db.pool) : name.endsWith('in_use') ? 1 : 0);
        },
      });
    pool('db_pool_connections_in_use', 'Pool connections running a query or transaction', (p) => p.totalCount - p.idleCount);
    pool('db_pool_connections_idle', 'Pool connections open and idle', (p) => p.idleCount);
    pool('db_pool_waiting', 'Queries waiting for a pool connection', (p) => p.waitingCount);
    new client.Gauge({
      name: 'db_unavailable',
      help: '1 while the outage monitor sees the database unavailable, else 0',
      registers,
      collect() {
        this.set(outageMonitor(services).down ? 1 : 0);
      },
    });

    // The read replica (DATABASE_REPLICA_URL): its verdict, lag and where reads went; not registered without one.
    const replica = services.replica;
    const replicaMetric = (name: string, help: string, type: 'gauge' | 'counter', values: () => { labels: Record<string, string>; value: number }[]) =>
      replica &&
      this.registry.registerMetric({
        name,
        get: () => ({ name, help, type, values: values(), aggregator: 'sum' }),
      } as unknown as client.Metric);
    replicaMetric('db_replica_in_use', '1 while lists, exports and stats may read from the replica, 0 while they fall back to the primary', 'gauge', () => [
      { labels: {}, value: replica!.serves() ? 1 : 0 },
    ]);
    replicaMetric('db_replica_lag_seconds', "The replica's last measured lag behind the primary, seconds (no sample when unknown)", 'gauge', () =>
      replica!.lagMs === null ? [] : [{ labels: {}, value: replica!.lagMs / 1000 }],
    );
    replicaMetric('db_replica_fallbacks_total', 'Times reads were sent back to the primary, by reason (lagging, unreachable, failed_query, not_a_standby)', 'counter', () =>
      Object.entries(replica!.fallbacks).map(([reason, value]) => ({ labels: { reason }, value })),
    );
    replicaMetric('db_replica_reads_total', 'Replica-eligible reads by where they ran (replica, primary)', 'counter', () =>
      Object.entries(replica!.reads).map(([target, value]) => ({ labels: { target }, value })),
    );

    // Set by each scrape; undefined (no sample at all, not 0) when the database did not answer in time.
    const outboxGauge = (name: string, help: string, read: (row: OutboxRow) => number) =>
      this.registry.registerMetric({
        name,
        get: () => ({ name, help, type: 'gauge', values: this.outboxRow ? [{ labels: {}, value: read(this.outboxRow) }] : [], aggregator: 'sum' }),
      } as unknown as client.Metric);
    outboxGauge('webhook_outbox_pending', 'Webhook events waiting for delivery (pending)', (row) => row.pending);
    outboxGauge('webhook_outbox_oldest_pending_age_seconds', 'Age of the oldest pending webhook event, seconds (0 when none)', (row) =>
      row.oldest === null ? 0 : Math.max(0, (services.now().getTime() - row.oldest.getTime()) / 1000),
    );
  }

  /** The timing of one route and method: call once per route at start-up, keep the object. */
  timing(route: string, method: string): RouteTiming {
    const key = `${method} ${route}`;
    let timing = this.timings.get(key);
    if (!timing) {
      timing = new RouteTiming(route, method);
      this.timings.set(key, timing);
    }
    return timing;
  }

  /** The Prometheus text exposition. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    // One cheap query per scrape for both outbox gauges; when it fails or is slow (an outage)
    // they are left out (no sample) and the scrape still answers.
    this.outboxRow = await this.outbox().catch(() => undefined);
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  private async outbox(): Promise<OutboxRow | undefined> {
    if (outageMonitor(this.services).down) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), OUTBOX_QUERY_TIMEOUT_MS);
    });
    const query = this.services.db
      .query<{ pending: number | string; oldest: Date | string | null }>(
        `SELECT count(*) AS pending, min(created_at) AS oldest FROM webhook_events WHERE status = 'pending'`,
      )
      .then(([row]) => ({ pending: Number(row!.pending), oldest: row!.oldest === null ? null : new Date(row!.oldest) }));
    return Promise.race([query, timeout]).finally(() => clearTimeout(timer));
  }
}

interface OutboxRow {
  pending: number;
  oldest: Date | null;
}

const registry = new WeakMap<Services, Metrics>();

export function enableMetrics(services: Services, receiptQueueLength: () => number): Metrics {
  const metrics = new Metrics(services, receiptQueueLength);
  registry.set(services, metrics);
  return metrics;
}

/** The metrics of a running server, or undefined when they are off (nothing is counted then). */
export const metricsOf = (services: Services): Metrics | undefined => registry.get(services);

/** Whether an Authorization header carries the metrics token (compared in constant time). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(header.slice(7)), digest(token));
}
