import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** `target` with its host and port replaced by the proxy's (a postgres:// URL). */
  url(target: string): string;
  /** Stops listening (new connections get ECONNREFUSED) and, with `cut`, ends the open ones too. */
  refuse(options?: { cut?: boolean }): Promise<void>;
  /** Resets every open connection, as a database that died would. */
  cut(): void;
  /** Listens again on the same port, forwarding as before. */
  restore(): Promise<void>;
  /** Holds every chunk this long, in both directions (order kept): a slow database or network. */
  delay(ms: number): void;
  /** Connections currently forwarded. */
  readonly open: number;
  /** False between refuse() and restore(). */
  readonly listening: boolean;
  close(): Promise<void>;
}

/**
 * A TCP proxy the test controls, between the service and PostgreSQL: the
 * database can be made unreachable, cut or slow without touching the shared
 * server. node:net only; no library does refuse/cut/delay on one port this simply.
 */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let delayMs = 0;
  let server: Server;
  let port = 0;

  const pipe = (from: Socket, to: Socket) => {
    // Chunks leave in arrival order, each no earlier than `delayMs` after it came.
    let last = 0;
    from.on('data', (chunk) => {
      if (!delayMs) return void (to.writable && to.write(chunk));
      const at = Math.max(Date.now() + delayMs, last);
      last = at;
      setTimeout(() => to.writable && to.write(chunk), at - Date.now()).unref();
    });
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        const end = () => {
          pairs.delete(pair);
          client.destroy();
          upstream.destroy();
        };
        for (const socket of pair) socket.on('error', end).on('close', end);
        pipe(client, upstream);
        pipe(upstream, client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();

  const cut = () => {
    for (const [client, upstream] of pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
  };

  return {
    get port() {
      return port;
    },
    get open() {
      return pairs.size;
    },
    get listening() {
      return server.listening;
    },
    url(target) {
      const url = new URL(target);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    async refuse(options = {}) {
      // close() stops accepting at once; its callback would wait for the open connections to end.
      server.close();
      if (options.cut) cut();
    },
    cut,
    restore: listen,
    delay(ms) {
      delayMs = ms;
    },
    async close() {
      cut();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}
