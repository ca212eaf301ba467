import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

/**
 * The METRICS_PORT listener: GET /metrics and nothing else, no token (reach it over a private
 * network or firewall it). Kept apart from the public port so scrapes never queue behind traffic.
 */
export async function serveMetrics(metrics: Metrics, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    metrics.scrape().then(
      ({ body, contentType }) => res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((done) => server.listen(port, host, done));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
