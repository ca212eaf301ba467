import { chmodSync, existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** Where local tools (the admin CLI, `psql -h DATA_DIR`) reach the running server's embedded database. */
export const socketPathFor = (dataDir: string) => join(resolve(dataDir), '.s.PGSQL.5432');

/**
 * Exposes the running server's embedded database on a Unix socket in DATA_DIR
 * (decisions.md, Memberships), so `npm run admin` and `psql -h DATA_DIR` work
 * while the server runs.
 */
export async function startSocketServer(pglite: PGlite, dataDir: string): Promise<PGLiteSocketServer> {
  const path = socketPathFor(dataDir);
  if (existsSync(path)) rmSync(path); // left by a crash; PGlite's own lock guards the data
  const server = new PGLiteSocketServer({ db: outsideAppTransactions(pglite), path, maxConnections: 8 });
  await server.start();
  // Whoever can connect can read and change everything: the service user only (umask 077 made it so; say it).
  chmodSync(path, 0o600);
  return server;
}

/**
 * pglite-socket runs each client message under PGlite's query lock only, so a
 * message could land between the BEGIN and COMMIT of one of the app's
 * transactions (and be rolled back with it). Taking PGlite's transaction lock
 * too makes every socket message wait for the app's transaction to finish.
 * A socket client's own multi-statement transaction is not isolated from the
 * app's single queries: tools should send single statements (the admin CLI does).
 */
function outsideAppTransactions(pglite: PGlite): PGlite {
  const internal = pglite as PGlite & { _runExclusiveTransaction?: <T>(fn: () => Promise<T>) => Promise<T> };
  if (typeof internal._runExclusiveTransaction !== 'function') return pglite;
  const runExclusive = <T>(fn: () => Promise<T>) => internal._runExclusiveTransaction!(() => pglite.runExclusive(fn));
  return new Proxy(pglite, {
    get(target, property) {
      if (property === 'runExclusive') return runExclusive;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
