import pg from 'pg';

// node-postgres 8 queues a query sent to a connection that is still running one, and warns once per process
// ("Calling client.query() when the client is already executing a query is deprecated and will be removed in
// pg@9.0"), which hides where it came from. In the tests every connection keeps pg@9's rule instead: such a
// query fails at once with the stack of its caller, so the request that sent it answers 500 and its test fails.
// Typical cause: Promise.all over queries inside a transaction (one connection): src/db/prisma.ts readTogether.

const PATCHED = Symbol.for('consent-service.one-query-per-connection');
type Query = (this: pg.Client, ...args: unknown[]) => unknown;
const prototype = pg.Client.prototype as unknown as { query: Query; [PATCHED]?: true };

if (!prototype[PATCHED]) {
  const busy = new WeakSet<pg.Client>();
  const original = prototype.query;
  const settle = (client: pg.Client) => busy.delete(client);
  prototype[PATCHED] = true;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    // A query object of its own (pg-cursor, streams) or a pipelining client: outside this rule.
    const submittable = typeof (args[0] as { submit?: unknown } | null)?.submit === 'function';
    if (submittable || (this as { pipeline?: boolean }).pipeline) return original.apply(this, args);
    if (busy.has(this)) {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 40; // deep enough to pass Prisma's frames and reach ours
      const error = new Error('A query was sent to a PostgreSQL connection still running another (pg@9 refuses this; see test/helpers/one-query-per-connection.ts)');
      Error.stackTraceLimit = limit;
      throw error;
    }
    busy.add(this);
    try {
      return track(this, args);
    } catch (error) {
      settle(this);
      throw error;
    }
  };

  function track(client: pg.Client, args: unknown[]) {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (...results: unknown[]) => {
        settle(client);
        return callback(...results);
      };
      return original.apply(client, args);
    }
    const result = original.apply(client, args) as Promise<unknown>;
    void result.then(
      () => settle(client),
      () => settle(client),
    );
    return result;
  }
}
