import { startServer } from './server.js';

// `npm start`: apply pending migrations, serve, and stop gracefully on SIGTERM/SIGINT.
const running = await startServer();
running.services.logger.info({ url: running.url, database: running.services.db.kind }, 'listening');

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    if (stopping) return;
    stopping = true;
    running.services.logger.info({ signal }, 'shutting down');
    try {
      await running.close();
      process.exit(0);
    } catch (error) {
      running.services.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  });
}
