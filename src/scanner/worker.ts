// The scanner worker (registered in src/workers.ts): up to SCANNER_CONCURRENCY scans at once per instance,
// claimed from the database queue (src/scanner/queue.ts), each run in one Chromium this worker launches on
// first need and keeps. Scheduled scans are queued by the same loop.
import { hostname } from 'node:os';
import type { Browser } from 'playwright-core';
import { uuidv7 } from 'uuidv7';
import { sha256Hex } from '../auth/tokens.js';
import { readDraft } from '../consent/draft.js';
import { readExperience } from '../consent/experience.js';
import { outageMonitor } from '../db/unavailable.js';
import type { Prisma } from '../generated/prisma/client.js';
import { notifyMembers } from '../notifications/notify.js';
import type { Services } from '../services.js';
import { isAllowedAddress } from '../webhooks/address.js';
import { projectWebhookEvent } from '../webhooks/outbox.js';
import { wakeWebhookWorker } from '../webhooks/worker.js';
import type { Worker } from '../workers.js';
import { ArtifactCollector } from './artifacts.js';
import { launchScanningBrowser } from './browser.js';
import { loadCatalogue } from './catalogue.js';
import { loadTrackerList } from './trackers.js';
import { scannerLaunchOptions } from './chromium.js';
import { CLOSE_GRACE_MS, Deadline, settleWithin } from './deadline.js';
import type { Finding } from './findings.js';
import type { AddressPolicy } from './guard-proxy.js';
import { claimScan, failAbandoned, failOrRetry, failScan, queueDueSchedules, releaseScan, renewLease, type ClaimedScan } from './queue.js';
import { buildReport, LeaseLostError, ScanBudgetSpent, scanPages, type ScanEnvironment, type ScanReport } from './run.js';
import { onScanQueued, scansInLastDay } from './service.js';
import { checkTransport, TRANSPORT_LIMITS } from './transport.js';

/** How often an idle worker looks for a queued scan (a scan started on this instance wakes it at once). */
const POLL_MS = 2000;
/** Due schedules and abandoned scans need no hurry: looked at every 30 s, not on every poll. */
const HOUSEKEEPING_MS = 30_000;
/** A scan whose visits all raced their deadlines still ends this long after its budget, or its browser is closed. */
const STUCK_GRACE_MS = 30_000;

const byServices = new WeakMap<Services, ScannerWorker>();
/** The worker running for a server's services (tests wake it after moving the clock). */
export const scannerWorkerOf = (services: Services) => byServices.get(services);

/**
 * How the scanner's browser reaches the network. Production: public addresses only; development: loopback
 * too (webhook rules). Tests may name a resolver and addresses to treat as public (StartOptions only, never
 * from the environment), to play a public site on loopback.
 */
export interface ScannerNetwork {
  resolve?(host: string): Promise<string[]>;
  publicStandIns?: string[];
  /** Accept any TLS certificate (a fixture's self-signed one for an https "ad pixel" host); tests only. */
  ignoreHttpsErrors?: boolean;
}

export function addressPolicy(services: Services): AddressPolicy {
  const standIns = new Set(services.scannerNetwork?.publicStandIns ?? []);
  const allowLoopback = !services.config.production;
  return {
    allowAddress: (address) => standIns.has(address) || isAllowedAddress(address, allowLoopback),
    resolve: services.scannerNetwork?.resolve,
  };
}

/** What a scan needs to know about its project: its keys, the draft's purposes and cookie lists, the live version. */
async function projectContext(services: Services, projectId: string) {
  const db = services.db.prisma;
  const [keys, draft, experience, version] = await Promise.all([
    db.apiKey.findMany({ where: { projectId, revokedAt: null }, select: { secretHash: true } }),
    readDraft(db, projectId),
    readExperience(db, projectId),
    db.consentVersion.findFirst({ where: { projectId }, orderBy: { number: 'desc' }, select: { number: true } }),
  ]);
  const hashes = new Set(keys.map((key) => key.secretHash));
  const categoryName = new Map(draft.categories.map((category) => [category.id, category.name]));
  return {
    isProjectKey: (key: string) => hashes.has(sha256Hex(key)),
    findings: {
      mappedCookies: Object.values(experience?.cookies ?? {}).flat(),
      purposes: draft.purposes.map((p) => ({ key: p.key, name: p.name, required: p.required, categoryName: categoryName.get(p.categoryId) ?? '' })),
    },
    versionNumber: version?.number ?? null,
  };
}

/** A finding's identity across scans (the page does not count: a cookie that moves page is not new). */
const identity = (finding: Finding) => `${finding.type} ${finding.subject.kind} ${finding.subject.name}`;
const NOTIFIED_TYPES = new Set(['before_consent', 'after_reject', 'unmapped']);

type Tx = Prisma.TransactionClient;

/** Stores the report while the lease is ours; a scheduled scan with new violations or unmapped cookies tells the project. */
export async function finishScan(services: Services, scan: ClaimedScan, owner: string, report: ScanReport, artifacts?: ArtifactCollector): Promise<boolean> {
  const now = services.now();
  let notified = false;
  const done = await services.db.prisma.$transaction(async (tx) => {
    const { count } = await tx.scan.updateMany({
      where: { id: scan.id, leaseOwner: owner, status: 'running' },
      data: {
        status: 'done',
        report: report as unknown as Prisma.InputJsonObject,
        summary: report.summary as unknown as Prisma.InputJsonObject,
        reportHash: report.hashes.reportHash,
        versionNumber: report.versionNumber,
        finishedAt: now,
        leaseOwner: null,
        leaseUntil: null,
        error: null,
      },
    });
    if (!count) return false;
    // The files the report lists by sha256, with it or not at all.
    await artifacts?.store(tx, scan.id, now);
    if (scan.trigger === 'schedule') notified = await announceNew(tx, scan, report, now);
    return true;
    // Up to SCANNER_MAX_ARTIFACT_BYTES of files go in with the report: more than Prisma's default 5 s on a busy database.
  }, { timeout: 60_000 });
  if (notified) wakeWebhookWorker();
  return done;
}

async function announceNew(tx: Tx, scan: ClaimedScan, report: ScanReport, now: Date): Promise<boolean> {
  const previous = await tx.scan.findFirst({
    where: { projectId: scan.projectId, status: 'done', id: { not: scan.id } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { id: true, report: true },
  });
  const known = new Set(((previous?.report as ScanReport | null)?.findings ?? []).map(identity));
  const fresh = report.findings.filter((finding) => NOTIFIED_TYPES.has(finding.type) && !known.has(identity(finding)));
  if (!fresh.length) return false;
  const project = await tx.project.findUniqueOrThrow({ where: { id: scan.projectId }, select: { organizationId: true, name: true } });
  const count = (type: string) => fresh.filter((finding) => finding.type === type).length;
  await notifyMembers(tx, {
    organizationId: project.organizationId,
    projectId: scan.projectId,
    product: 'consent',
    type: 'consent.scan_found_new',
    title: `The scheduled scan of ${project.name} found something new`,
    body: `New since the last scan: ${count('before_consent')} before consent, ${count('after_reject')} after Reject all, ${count('unmapped')} unmapped cookies.`,
    link: `/projects/${scan.projectId}/scans/${scan.id}`,
    createdAt: now,
  });
  const data = {
    projectId: scan.projectId,
    scanId: scan.id,
    previousScanId: previous?.id ?? null,
    reportHash: report.hashes.reportHash,
    versionNumber: report.versionNumber,
    summary: report.summary,
    newFindings: fresh.map(({ type, pageUrl, subject, category, vendor }) => ({ type, pageUrl, subject, category, vendor })),
  };
  const event = projectWebhookEvent(scan.projectId, 'scan.completed', data, now);
  await tx.$queryRawUnsafe(event.sql, ...event.params);
  return true;
}

export class ScannerWorker implements Worker {
  readonly name = 'scanner';
  /** Names this instance in leases (diagnostics only; the lease time is what protects a scan). */
  readonly owner = `${hostname()}:${process.pid}:${uuidv7().slice(-12)}`;
  private readonly running = new Map<string, Promise<void>>();
  private browser: Promise<Browser> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private housekeptAt = 0;
  private housekeepNow = false;

  constructor(
    private readonly services: Services,
    private readonly executablePath: string,
  ) {}

  start(): this {
    byServices.set(this.services, this);
    onScanQueued(this.services, () => this.wake());
    this.wake();
    return this;
  }

  /** Looks for work now; `housekeeping` also queues due schedules and fails abandoned scans now. */
  wake(housekeeping = false): void {
    if (this.stopped) return;
    this.housekeepNow ||= housekeeping;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick().finally(() => {
      this.ticking = undefined;
      if (this.stopped) return;
      if (this.again) return void ((this.again = false), this.wake());
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.wake(), POLL_MS);
    });
  }

  /** Stops claiming; scans in progress are cut short and handed back (queued again, their attempt not spent). */
  async stop(): Promise<void> {
    this.stopped = true;
    onScanQueued(this.services, undefined);
    if (byServices.get(this.services) === this) byServices.delete(this.services);
    clearTimeout(this.timer);
    await this.ticking;
    const browser = this.browser;
    this.browser = undefined;
    if (browser) await browser.then((b) => b.close()).catch(() => {});
    await Promise.allSettled([...this.running.values()]);
  }

  /** The scans in progress here (tests wait for them). */
  idle(): Promise<unknown> {
    return Promise.allSettled([this.ticking, ...this.running.values()]);
  }

  private async tick(): Promise<void> {
    const services = this.services;
    try {
      await outageMonitor(services).whenAvailable();
      if (this.housekeepNow || performance.now() - this.housekeptAt >= HOUSEKEEPING_MS || !this.housekeptAt) {
        this.housekeepNow = false;
        this.housekeptAt = performance.now();
        await queueDueSchedules(services, uuidv7, (tx, projectId) => this.withinQuota(tx, projectId));
        await failAbandoned(services);
      }
      while (!this.stopped && this.running.size < services.config.scanner.concurrency) {
        const scan = await claimScan(services, this.owner);
        if (!scan) break;
        const run = this.run(scan).finally(() => {
          this.running.delete(scan.id);
          this.wake();
        });
        this.running.set(scan.id, run);
      }
    } catch (error) {
      if (!outageMonitor(services).report(error)) services.logger.error({ err: error }, 'scanner: claiming failed');
    }
  }

  private async withinQuota(tx: Prisma.TransactionClient, projectId: string): Promise<boolean> {
    const project = await tx.project.findUnique({ where: { id: projectId }, select: { organizationId: true } });
    if (!project) return false;
    return (await scansInLastDay(tx, project.organizationId, this.services.now())).length < this.services.config.scanner.dailyScansPerOrg;
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      // The profile that allows third-party cookies (browser.ts), launched with the hostile-page rules (chromium.ts).
      const launching = launchScanningBrowser(scannerLaunchOptions(this.executablePath));
      this.browser = launching;
      launching.then(
        (browser) => browser.on('disconnected', () => this.browser === launching && (this.browser = undefined)),
        () => this.browser === launching && (this.browser = undefined),
      );
    }
    return this.browser;
  }

  /** Closes the shared browser (stuck beyond its pages' deadlines); the next scan launches another. */
  private async closeBrowser(): Promise<void> {
    const browser = this.browser;
    this.browser = undefined;
    if (browser) await settleWithin(browser.then((b) => b.close()), CLOSE_GRACE_MS, undefined);
  }

  private async run(scan: ClaimedScan): Promise<void> {
    const { services, owner } = this;
    const budget = new Deadline(services.config.scanner.scanBudgetMs, 'the scan');
    const log = services.logger.child({ scanId: scan.id, projectId: scan.projectId, attempt: scan.attempts });
    let lost = false;
    // The heartbeat: while this process lives the scan stays ours; once it dies the lease runs out.
    const renew = setInterval(() => {
      renewLease(services, scan.id, owner).then(
        (ours) => (lost ||= !ours),
        (error) => log.warn({ err: error }, 'scanner: renewing the lease failed'),
      );
    }, services.config.scanner.leaseMs / 3);
    try {
      log.info({ urls: scan.urls.length, followLinks: scan.followLinks }, 'scan started');
      const browser = await this.launch();
      const project = await projectContext(services, scan.projectId);
      const env: ScanEnvironment = {
        browser,
        catalogue: loadCatalogue(services.config.publicBaseUrl),
        trackers: loadTrackerList(),
        policy: addressPolicy(services),
        visitTimeoutMs: services.config.scanner.visitTimeoutMs,
        maxPageBytes: services.config.scanner.maxPageBytes,
        dwellMs: services.config.scanner.dwellMs,
        ignoreHttpsErrors: services.scannerNetwork?.ignoreHttpsErrors === true,
        maxReportBytes: services.config.scanner.maxReportBytes,
        budget,
        now: services.now,
        stillOurs: async () => !lost && !this.stopped,
        artifacts: new ArtifactCollector(services.config.scanner.artifacts),
        ...project,
      };
      // Every visit keeps to the budget; should something still hang past it, the browser goes and the scan fails.
      const pages = await new Deadline(budget.left() + STUCK_GRACE_MS, 'the scan').race(scanPages(scan, env)).catch(async (error: unknown) => {
        if (!budget.passed) throw error;
        if (!(error instanceof ScanBudgetSpent)) await this.closeBrowser();
        throw error instanceof ScanBudgetSpent ? error : new ScanBudgetSpent(`The scan spent its budget of ${Math.round(budget.ms / 1000)} s (SCANNER_SCAN_BUDGET_MS); it was not tried again`);
      });
      if (this.stopped) throw new LeaseLostError('stopping');
      // Each origin's HTTPS redirect and TLS (transport.ts), through the same address guard, within the budget left.
      // A failure of the check itself (not of a site: those are in its answer) leaves the report without it.
      const transport = await checkTransport(
        pages.map((page) => page.url),
        { policy: env.policy, deadline: budget.within(TRANSPORT_LIMITS.totalMs, 'the transport check'), now: services.now },
      ).catch((error: unknown) => void log.warn({ err: error }, 'scanner: the transport check failed'));
      const report = buildReport(scan, env, pages, { browserVersion: browser.version(), finishedAt: services.now(), transport });
      const done = await finishScan(services, scan, owner, report, env.artifacts);
      log.info({ done, summary: report.summary }, done ? 'scan done' : 'scan finished after its lease was lost; report dropped');
    } catch (error) {
      if (this.stopped) {
        await releaseScan(services, scan.id, owner).catch(() => {});
        log.info('scan handed back at shutdown');
      } else if (error instanceof LeaseLostError || lost) {
        log.warn('scan lease lost; another instance has it');
      } else if (error instanceof ScanBudgetSpent) {
        await failScan(services, scan, owner, error.message).catch(() => {});
        log.warn({ budgetMs: budget.ms }, 'scan failed: budget spent');
      } else {
        const outcome = await failOrRetry(services, scan, owner, (error as Error).message ?? String(error)).catch(() => 'unrecorded');
        log.error({ err: error, outcome }, 'scan failed');
      }
    } finally {
      clearInterval(renew);
    }
  }
}

/** Started only where scans may run: a browser was found and SCANNER_CONCURRENCY is above 0. */
export function scannerWorker(services: Services): Worker {
  const { concurrency, chromiumPath } = services.config.scanner;
  if (concurrency < 1 || !chromiumPath) {
    if (concurrency > 0) services.logger.warn('site scanner off on this instance: Chromium not found (POST /scans answers 503 scanner_unavailable)');
    return { name: 'scanner', stop: async () => {} };
  }
  return new ScannerWorker(services, chromiumPath).start();
}
