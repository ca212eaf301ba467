import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as sent (the signature covers these bytes). */
  raw: string;
  json: any;
  /** The status this receiver answered (null while held or when it never answered). */
  answered: number | null;
}

/** What the receiver does with request number `index` (0-based): a status, or hold it unanswered. */
export type Behaviour = (request: ReceivedRequest, index: number) => number | 'hold';

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** Changes how later requests are answered. */
  behave(behaviour: Behaviour): void;
  /** Answers every held request with `status`. */
  release(status?: number): void;
  /** Resolves once `predicate` holds (checked on every request), or rejects after `ms`. */
  until(predicate: (received: ReceivedRequest[]) => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP webhook receiver on 127.0.0.1, as an integrator would run one. */
export async function startReceiver(behaviour: Behaviour = () => 200): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const held: { request: ReceivedRequest; res: ServerResponse }[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const request: ReceivedRequest = { headers: req.headers, raw, json: safeJson(raw), answered: null };
      const answer = behaviour(request, received.length);
      received.push(request);
      if (answer === 'hold') held.push({ request, res });
      else respond(request, res, answer);
      for (const check of waiters) check();
    });
  });
  const respond = (request: ReceivedRequest, res: ServerResponse, status: number) => {
    request.answered = status;
    if (status >= 300 && status < 400) res.setHeader('location', 'http://127.0.0.1:1/elsewhere');
    res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
  };
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/consent`,
    port,
    received,
    behave: (next) => void (behaviour = next),
    release(status = 200) {
      for (const { request, res } of held.splice(0)) if (!res.destroyed) respond(request, res, status);
    },
    until(predicate, ms = 30_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: condition not met within ${ms} ms (${received.length} requests so far)`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

/** How a receiver verifies a delivery: HMAC-SHA256 of the raw body, compared in constant time. */
export function verifySignature(request: ReceivedRequest, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(request.raw).digest('hex')}`);
  const sent = Buffer.from(String(request.headers['x-consent-signature'] ?? ''));
  return sent.length === expected.length && timingSafeEqual(sent, expected);
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
