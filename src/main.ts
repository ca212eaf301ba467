import { loadConfig } from './config.js';
import { startServer } from './server.js';

// A configuration that must not run (a bad value, the mock billing provider in production)
// stops here with exit 1 and one line naming the variable, before anything is opened.
try {
  loadConfig();
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}

// `npm start`: apply pending migrations, serve, and stop gracefully on SIGTERM/SIGINT.
const running = await startServer();
running.services.logger.info({ url: running.url, database: running.services.db.kind }, 'listening');
// Log lines go out in batches (src/logger.ts): whoever waits for this one (an orchestrator, a test) gets it now.
running.services.logger.flush();

const SHUTDOWN_DEADLINE_MS = 25_000;
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    if (stopping) return;
    stopping = true;
    running.services.logger.info({ signal }, 'shutting down');
    running.services.logger.flush();
    // A request that never ends must not keep the process alive past the orchestrator's patience.
    setTimeout(() => {
      running.services.logger.error({ afterMs: SHUTDOWN_DEADLINE_MS }, 'shutdown deadline passed, exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    try {
      await running.close();
      process.exit(0);
    } catch (error) {
      running.services.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  });
}
