import pg from 'pg';
import { currentRequestId } from '../../src/audit/record.js';
import type { TestServer } from './server.js';

/**
 * Counts the SQL statements the server sends while `work` runs: pg's Client.query on PostgreSQL
 * (Prisma's adapter and the raw pool both end there), the PGlite instance's query/exec embedded.
 */
export async function statementsDuring(server: Pick<TestServer, 'services'>, work: () => Promise<unknown>): Promise<number> {
  return (await statementsSent(server, work)).length;
}

/**
 * The statements one GraphQL execution sends: those issued inside the execution's scope (src/audit/record.ts)
 * under `requestId`, which the test sends as `x-request-id`. A background worker's statements (webhook outbox,
 * sealing, the scanner's poll) and other requests' never count, however the machine's load interleaves them.
 * The session lookup before execution is not counted (one statement, whatever the query).
 */
export async function statementsOfRequest(server: Pick<TestServer, 'services'>, requestId: string, work: () => Promise<unknown>): Promise<number> {
  return (await statementsSent(server, work)).filter((statement) => statement.requestId === requestId).length;
}

export interface SentStatement {
  sql: string;
  params: unknown[];
  /** The GraphQL execution that sent it (its x-request-id), if any. */
  requestId?: string;
}

/** The SQL statements (with their parameters) the server sends while `work` runs, as statementsDuring counts them. */
export async function statementsSent(server: Pick<TestServer, 'services'>, work: () => Promise<unknown>): Promise<SentStatement[]> {
  const sent: SentStatement[] = [];
  type Methods = Record<'query' | 'exec', (...args: unknown[]) => unknown>;
  const pglite = server.services.db.pglite as unknown as Methods | undefined;
  const target = pglite ?? (pg.Client.prototype as unknown as Methods);
  const methods = (pglite ? ['query', 'exec'] : ['query']) as ('query' | 'exec')[];
  const originals = methods.map((method) => [method, target[method]!] as const);
  for (const [method, original] of originals) {
    target[method] = function (this: unknown, ...args: unknown[]) {
      // pg: (text, values) or ({ text, values, ... }); PGlite: (sql, params) or exec(sql).
      const [first, second] = args as [string | { text: string; values?: unknown[] }, unknown];
      const statement = typeof first === 'string' ? { sql: first, params: Array.isArray(second) ? second : [] } : { sql: first.text, params: first.values ?? [] };
      sent.push({ ...statement, requestId: currentRequestId() });
      return original.apply(this, args);
    };
  }
  try {
    await work();
  } finally {
    for (const [method, original] of originals) {
      if (pglite) delete (target as Record<string, unknown>)[method];
      else target[method] = original;
    }
  }
  return sent;
}
