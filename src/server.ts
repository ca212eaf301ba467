import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import { allRoutes } from '../rest/routes/index.js';
import { schema } from '../schema/index.js';
import { createApp } from './app.js';
import { loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { ReadReplica } from './db/replica.js';
import { startSocketServer } from './db/socket.js';
import { openLedgerSigner } from './ledger/keys.js';
import { legacyReceipts } from './receipts/ids.js';
import { enableMetrics } from './metrics/metrics.js';
import { serveMetrics } from './metrics/listener.js';
import { RateLimits } from './rate-limit/index.js';
import { receiptWriter } from './sdk/receipt-writer.js';
import type { ScannerNetwork } from './scanner/worker.js';
import type { Services } from './services.js';
import { startWorkers } from './workers.js';

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  server: Server;
  /** The METRICS_PORT listener's port, when there is one. */
  metricsPort?: number;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Injectable clock (tests move time instead of sleeping). */
  now?: () => Date;
  /** Where the JSON log lines go (default stdout); tests capture them. */
  logDestination?: DestinationStream;
  /** A migrated embedded-database dump to start an in-memory database from (tests: no initdb per server). */
  embeddedImage?: Blob;
  /** Tests only: the scanner's resolver and public stand-in addresses (src/scanner/worker.ts). */
  scannerNetwork?: ScannerNetwork;
}

export async function startServer(overrides: Partial<Config> = {}, options: StartOptions = {}): Promise<RunningServer> {
  const config = { ...loadConfig(), ...overrides };
  if (overrides.publicBaseUrl) config.publicBaseUrlSet = true;
  const logger = createLogger(config.logLevel, options.logDestination);
  const db = await openDatabase(config, options.embeddedImage);
  const applied = await migrate(db);
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');

  // Local tools reach the embedded database through the running server (decisions.md, Memberships).
  const socketServer =
    db.pglite && !config.dataDir.startsWith('memory://') ? await startSocketServer(db.pglite, config.dataDir) : undefined;

  const services: Services = {
    config,
    db,
    // Only a PostgreSQL primary has standbys (a test may run the embedded database with the variable set).
    replica: config.databaseReplicaUrl && db.kind === 'postgres' ? await ReadReplica.open(config, db, logger) : undefined,
    logger,
    rateLimits: await RateLimits.create(config.redisUrl, logger),
    now: options.now ?? (() => new Date()),
    scannerNetwork: options.scannerNetwork,
  };
  // Before any request: checkpoints need the key, and its public half is published from the database.
  await openLedgerSigner(services);
  // Lookups by receipt id need where the legacy partition's receipts can be (src/receipts/ids.ts).
  await legacyReceipts(db);
  const metrics = config.metricsPort !== undefined || config.metricsToken ? enableMetrics(services, () => receiptWriter(services).queueLength) : undefined;
  const metricsServer = metrics && config.metricsPort !== undefined ? await serveMetrics(metrics, config.metricsPort, config.host) : undefined;
  const app = createApp(services, schema, allRoutes(new Date()));
  // Idle keep-alive longer than a load balancer's (60 s) and than clients wait, so the client
  // always drops an idle connection first and never sends into one the server just closed.
  const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 66_000 }, app.listener);
  await new Promise<void>((done) => server.listen(config.port, config.host, done));
  const { port } = server.address() as AddressInfo;
  // The default PUBLIC_BASE_URL is http://HOST:PORT: name the port really bound (port 0 in tests).
  if (!overrides.publicBaseUrl && !process.env.PUBLIC_BASE_URL) config.publicBaseUrl = `http://${config.host}:${port}`;
  const workers = startWorkers(services);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Stop accepting, answer what is in flight, stop workers, then let go of the database.
      const stopped = new Promise((done) => server.close(done));
      server.closeIdleConnections();
      await app.drain();
      server.closeAllConnections();
      await stopped;
      await metricsServer?.close();
      await Promise.all(workers.map((worker) => worker.stop()));
      await socketServer?.stop();
      await services.rateLimits.close();
      await db.close();
    })());

  return { url: `http://${config.host}:${port}`, port, services, server, metricsPort: metricsServer?.port, close };
}
