// The scanner's network door: every connection a scanned page makes leaves Chromium through this forward
// proxy (one per visit), which resolves the host itself, checks every address with the webhook rules
// (src/webhooks/address.ts) and connects to the address it checked. So a name that resolves to a public
// address at check time cannot be rebound to an internal one for the connection (DNS rebinding), and
// redirects, subresources, workers and WebSockets (tunnelled with CONNECT) all pass the same check.
// No library: the usual forward proxies (`proxy`, `http-proxy`) have no hook between resolving and connecting,
// and the whole of what is needed is the ~100 lines below.
import { lookup as dnsLookup } from 'node:dns/promises';
import { createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { bareHost } from '../webhooks/address.js';

export interface RefusedRequest {
  /** `http://host:port/path` for plain http; `host:port` for a tunnel (https, wss), whose path the proxy never sees. */
  target: string;
  host: string;
  address: string | null;
  reason: string;
}

export interface AddressPolicy {
  /** Whether the browser may connect to this address (after DNS resolution). */
  allowAddress(address: string): boolean;
  /** Resolves a host name to its addresses (tests map names to loopback; production uses DNS). */
  resolve?(host: string): Promise<string[]>;
}

/** A connection the proxy let through: each plain-http request, each tunnel (https, wss) as it opened. */
export interface ProxiedConnection {
  /** `http`: `url` is the request's URL without its query; `tunnel`: `url` is `https://host:port` (the path is never seen). */
  kind: 'http' | 'tunnel';
  url: string;
  host: string;
  /** Date.now() when the browser asked for it. */
  at: number;
}

/** How many connections a visit's log keeps (the hostile page's 2,000 pings need not all be listed). */
export const MAX_LOGGED_CONNECTIONS = 5000;

export interface GuardProxy {
  /** `http://127.0.0.1:<port>`: give it to Chromium as the context's proxy. */
  url: string;
  refused: RefusedRequest[];
  /** Every connection let through, in order (at most MAX_LOGGED_CONNECTIONS): what the browser really sent. */
  connections: ProxiedConnection[];
  /** Bytes sent to the browser so far. */
  bytes: number;
  /** The byte limit was reached: every connection was cut and later ones are refused. */
  overLimit: boolean;
  close(): Promise<void>;
}

const defaultResolve = async (host: string) => (await dnsLookup(host, { all: true })).map((entry) => entry.address);

export async function startGuardProxy(policy: AddressPolicy, maxBytes: number): Promise<GuardProxy> {
  const sockets = new Set<Duplex>();
  const resolve = policy.resolve ?? defaultResolve;

  const guard: GuardProxy = { url: '', refused: [], connections: [], bytes: 0, overLimit: false, close: async () => {} };
  const log = (connection: ProxiedConnection) => void (guard.connections.length < MAX_LOGGED_CONNECTIONS && guard.connections.push(connection));

  /** The address to connect to, or null after recording why not. */
  async function checked(target: string, hostname: string): Promise<string | null> {
    const host = bareHost(hostname);
    if (guard.overLimit) return refuse(target, host, null, 'byte limit of the page reached');
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await resolve(host);
    } catch (error) {
      return refuse(target, host, null, `DNS: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    // Every address must be allowed, as for webhooks: a name with one private address among public ones is refused.
    const blocked = addresses.find((address) => !policy.allowAddress(address));
    if (blocked !== undefined || !addresses.length) return refuse(target, host, blocked ?? null, `address ${blocked ?? '(none)'} is not allowed`);
    return addresses[0]!;
  }

  const refusedKeys = new Set<string>();
  function refuse(target: string, host: string, address: string | null, reason: string): null {
    // A browser may retry a failed request: each target and reason is reported once.
    const key = `${target} ${reason}`;
    if (!refusedKeys.has(key) && guard.refused.length < 500) guard.refused.push({ target, host, address, reason });
    refusedKeys.add(key);
    return null;
  }

  function count(chunk: Buffer): boolean {
    guard.bytes += chunk.length;
    if (guard.bytes <= maxBytes) return true;
    if (!guard.overLimit) {
      guard.overLimit = true;
      for (const socket of sockets) socket.destroy();
    }
    return false;
  }

  function track(socket: Duplex): void {
    // Node's keep-alive agent hands the same upstream socket to request after request: listen to it once.
    if (sockets.has(socket)) return;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  // Plain http: the browser sends the absolute URL; we connect to the checked address and relay.
  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return void res.writeHead(400).end();
    }
    if (url.protocol !== 'http:') {
      refuse(req.url ?? '', url.hostname, null, `scheme ${url.protocol} is not allowed`);
      return void res.writeHead(403).end();
    }
    const target = `${url.origin}${url.pathname}`;
    const asked = Date.now();
    const address = await checked(target, url.hostname);
    // Cut, not answered: the browser sees a network error (as for a refused tunnel), never a page from us.
    if (!address) return void req.socket.destroy();
    log({ kind: 'http', url: target, host: bareHost(url.hostname), at: asked });
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!name.startsWith('proxy-')) headers[name] = value;
    const upstream = httpRequest({ host: address, port: Number(url.port || 80), method: req.method, path: url.pathname + url.search, headers, setHost: false });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.on('data', (chunk: Buffer) => (count(chunk) ? res.write(chunk) : res.destroy()));
      answer.on('end', () => res.end());
      answer.on('error', () => res.destroy());
    });
    upstream.on('socket', track);
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  }

  // https and wss: a CONNECT tunnel to host:port, opened only to the checked address.
  async function onConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    track(client);
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? '');
    if (!match) return void client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    const [, host, port] = match;
    const asked = Date.now();
    const address = await checked(req.url!, host!);
    if (!address) return void client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    log({ kind: 'tunnel', url: `https://${req.url}`, host: bareHost(host!), at: asked });
    const upstream: Socket = connect(Number(port), address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.on('data', (chunk: Buffer) => (count(chunk) ? client.write(chunk) : client.destroy()));
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  }

  const server = createServer((req, res) => void onRequest(req, res));
  server.on('connect', (req, client, head) => void onConnect(req, client, head));
  // A plain-http WebSocket upgrade sent to the proxy itself is not relayed (Chromium tunnels WebSockets with CONNECT).
  server.on('upgrade', (_req, socket) => socket.destroy());
  server.on('connection', track);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  guard.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  guard.close = () =>
    new Promise<void>((done) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => done());
    });
  return guard;
}
