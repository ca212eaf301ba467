// A tiny HTTP/1.1 keep-alive load loop on raw sockets: each connection sends one request, reads the
// whole response (Content-Length framing), then sends the next. Far cheaper per request than
// http.request, so on a small machine the loader takes less CPU from the server under test.
import { fork } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface LoadSpec {
  port: number;
  connections: number;
  durationMs: number;
  /**
   * Request bytes per request number (a fixed request, or one per row for POSTs: `marker` replaced by the number in
   * 12 digits, and `scatteredMarker` by those digits reversed, so consecutive requests' values land far apart in an
   * index, as visitors' random ids and UUID v4s do).
   */
  requests: { fixed: string } | { template: string; marker: string; scatteredMarker?: string };
  expectStatus: number;
}

export interface LoadResult {
  /** Every response, whatever its status. */
  requests: number;
  /** Responses with another status than `expectStatus`: reported, never counted as throughput. */
  errors: number;
  /** Responses with `expectStatus` per second: the throughput. */
  perSecond: number;
  /** Latency percentiles of the expected responses only. */
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  let sent = 0;
  let done = 0;
  let errors = 0;
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + spec.durationMs;
  const requestFor = (n: number) => {
    if ('fixed' in spec.requests) return spec.requests.fixed;
    const { template, marker, scatteredMarker } = spec.requests;
    const numbered = String(n).padStart(12, '0');
    const request = template.replaceAll(marker, numbered);
    return scatteredMarker ? request.replaceAll(scatteredMarker, [...numbered].reverse().join('')) : request;
  };

  const connection = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect(spec.port, '127.0.0.1');
      socket.setNoDelay(true);
      let buffer: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const next = () => {
        if (performance.now() >= deadline) {
          socket.end();
          return resolve();
        }
        sentAt = performance.now();
        socket.write(requestFor(sent++));
      };
      socket.on('connect', next);
      socket.on('error', reject);
      socket.on('data', (chunk: Buffer) => {
        buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
        for (;;) {
          const end = buffer.indexOf(HEADER_END);
          if (end < 0) return;
          const head = buffer.subarray(0, end).toString('latin1');
          const status = Number(head.slice(9, 12));
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          const total = end + 4 + length;
          if (buffer.length < total) return;
          buffer = buffer.subarray(total);
          done++;
          statuses[status] = (statuses[status] ?? 0) + 1;
          // A wrong answer (a 429, a 500) is often faster than the real work: it must not count as throughput.
          if (status !== spec.expectStatus) errors++;
          else latencies.push(performance.now() - sentAt);
          next();
        }
      });
    });

  await Promise.all(Array.from({ length: spec.connections }, connection));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { requests: done, errors, perSecond: latencies.length / seconds, p50Ms: at(0.5), p99Ms: at(0.99), statuses };
}

/** Runs the load loop in a child process, so it does not share the server's event loop. */
export function loadFromChild(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--child'], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (result) => resolve(result as LoadResult));
    child.once('error', reject);
    child.once('exit', (code) => code && reject(new Error(`load child exited ${code}`)));
    child.send(spec);
  });
}

if (process.argv.includes('--child')) {
  process.once('message', async (spec) => {
    const result = await runLoad(spec as LoadSpec);
    process.send!(result, () => process.exit(0));
  });
}
