// SDK config with an independent load generator: Debian's `wrk -t1 -c32` against the built service
// (`node dist/src/main.js`, production settings, one JSON log line per request to a pipe) and against a raw
// node:http server replaying the same bytes and headers (bench/lib/raw-config-server.mjs), each in its own
// process. Rounds alternate raw and service (ABBA order, so drift hits both alike); each round reads the
// server process's CPU time (/proc/<pid>/stat utime + stime, every thread) before and after.
//   apt-get install -y wrk && npm run build
//   npx tsx bench/sdk-config-wrk.ts        (embedded database in a fresh DATA_DIR; BENCH_DATABASE_URL for PostgreSQL)
// Settings: ROUNDS (per side and case, default 6), DURATION (wrk's -d, default 10s), CONNECTIONS (32),
// CASES (200,304,v2-200), NICE (e.g. -10), SERVICE_NODE_ARGS and RAW_NODE_ARGS (e.g. --cpu-prof), PIN (default `0:1`: both servers on CPU 0, wrk on CPU 1, with taskset; PIN= to not
// pin), METRICS=1 (start the service with METRICS_PORT, as an operator scraping it would).
// Targets as bench/sdk-config.ts: 200 >= 0.7x the raw server, 304 >= 0.8x.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/service-process.js';
import { BENCH_ORIGIN, benchProject, machine } from './lib/setup.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const DURATION = process.env.DURATION ?? '10s';
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const ACCEPT_ENCODING = 'gzip, deflate, br, zstd';
const [SERVER_CPU, LOAD_CPU] = (process.env.PIN ?? '0:1').split(':');
// NICE=-10 (root) gives the servers and wrk a larger share against a loaded machine's other processes.
const NICE = process.env.NICE;
const pinned = (cpu: string | undefined, command: string[]) => [
  ...(NICE ? ['nice', '-n', NICE] : []),
  ...(cpu ? ['taskset', '-c', cpu] : []),
  ...command,
];
const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

interface Case {
  name: string;
  path: string;
  conditional: boolean;
  target: number;
}
const CASES: Case[] = [
  { name: '200', path: '/api/sdk/v1/config', conditional: false, target: 0.7 },
  { name: '304', path: '/api/sdk/v1/config', conditional: true, target: 0.8 },
  { name: 'v2-200', path: '/api/sdk/v2/config?locale=de', conditional: false, target: 0.7 },
].filter((c) => (process.env.CASES ?? '200,304').split(',').includes(c.name));

execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--if-stale'], { stdio: 'inherit' });
// This driver (which reads the service's log lines) runs beside wrk, off the servers' CPU: sharing it, it took
// 3 µs of the service's CPU per request (caches and scheduling), none of the raw server's.
if (LOAD_CPU) execFileSync('taskset', ['-a', '-cp', LOAD_CPU, String(process.pid)], { stdio: 'ignore' });

// The project, key and published version are made in-process (bench/lib/setup.ts) on a DATA_DIR the built
// service then opens: the same rows, the set-up's own server closed before the measured one starts.
const dataDir = mkdtempSync(join(tmpdir(), 'sdk-config-wrk-'));
const setup = await benchProject({ dataDir });
const { secret } = setup;
const databaseUrl = setup.server.services.config.databaseUrl;
await setup.server.close();

const servicePort = await freePort();
// SERVICE_NODE_ARGS for a profile of the measured process, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof'.
const serviceCommand = pinned(SERVER_CPU, [process.execPath, ...(process.env.SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []), 'dist/src/main.js']);
const service = spawn(serviceCommand[0]!, serviceCommand.slice(1), {
  cwd: ROOT,
  env: {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(servicePort),
    DATA_DIR: dataDir,
    ...(databaseUrl && { DATABASE_URL: databaseUrl }),
    BILLING_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: 'sk_test_bench_never_called',
    BILLING_WEBHOOK_SECRET: 'bench',
    // Production's level: one line per request (LOG_LEVEL=warn measures without them).
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    // Out of the load's way; the limiter still counts every request.
    RATE_LIMIT_SDK_CONFIG_PER_MINUTE: '1000000000',
    ...(process.env.METRICS === '1' && { METRICS_PORT: '0' }),
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
process.once('exit', () => service.kill('SIGKILL')); // whatever fails below
// The log goes to a pipe, as in a container; the driver counts its lines (one per request) and drops them.
let logLines = 0;
service.stdout!.on('data', (chunk: Buffer) => {
  for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) logLines++;
});
const url = `http://127.0.0.1:${servicePort}`;
for (const deadline = Date.now() + 120_000; ; ) {
  if (service.exitCode !== null) throw new Error(`the service exited (${service.exitCode}) before it was ready`);
  if (await fetch(`${url}/api/ready`).then((res) => res.ok, () => false)) break;
  if (Date.now() > deadline) throw new Error('the service was not ready within 120 s');
  await new Promise((resolve) => setTimeout(resolve, 200));
}

interface Captured {
  body: string; // base64
  headers: Record<string, string>;
  etag: string;
}
function capture(path: string, acceptEncoding: string): Promise<Captured> {
  const headers = { authorization: `Bearer ${secret}`, origin: BENCH_ORIGIN, ...(acceptEncoding && { 'accept-encoding': acceptEncoding }) };
  return new Promise((resolve, reject) => {
    get(`${url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${path} answered ${res.statusCode}`));
        const kept: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          // The request id is the service's own per request; the raw server sends the captured one (same size).
          if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) kept[name] = String(value);
        }
        resolve({ body: Buffer.concat(chunks).toString('base64'), headers: kept, etag: kept.etag! });
      });
    }).on('error', reject);
  });
}
const captured: Record<string, { plain: Captured; encoded: Captured }> = {};
for (const { path } of CASES) captured[path] ??= { plain: await capture(path, ''), encoded: await capture(path, ACCEPT_ENCODING) };
const answersFile = join(dataDir, 'raw-answers.json');
writeFileSync(answersFile, JSON.stringify(captured));

const rawCommand = pinned(SERVER_CPU, [process.execPath, ...(process.env.RAW_NODE_ARGS?.split(' ').filter(Boolean) ?? []), join(ROOT, 'bench/lib/raw-config-server.mjs'), answersFile]);
const raw = spawn(rawCommand[0]!, rawCommand.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
process.once('exit', () => raw.kill('SIGKILL'));
const rawPort = await new Promise<number>((resolve) => raw.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));

/** The server process's CPU seconds so far (utime + stime of every thread; /proc/<pid>/stat fields 14 and 15). */
function cpuSeconds(child: ChildProcess): number {
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

// taskset runs the program in its own process (exec): the pid spawned is the server's.
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

// Syscalls and context switches per request, when perf can count them (tracepoints; counts do not depend on load).
const perfWorks = (() => {
  try {
    execFileSync('perf', ['stat', '-e', 'raw_syscalls:sys_enter,context-switches', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
function perfCounting(pid: number): () => Promise<Record<string, number>> {
  if (!perfWorks) return async () => ({});
  const perf = spawn('perf', ['stat', '-x,', '-e', 'raw_syscalls:sys_enter,context-switches', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let out = '';
  perf.stderr!.on('data', (chunk: Buffer) => (out += chunk));
  const exited = new Promise((done) => perf.once('exit', done));
  return async () => {
    perf.kill('SIGINT');
    await exited;
    const counts: Record<string, number> = {};
    for (const line of out.split('\n')) {
      const [value, , event] = line.split(',');
      if (event && Number.isFinite(Number(value))) counts[event] = Number(value);
    }
    return counts;
  };
}

interface Round {
  perSecond: number;
  syscallsPerRequest?: number;
  switchesPerRequest?: number;
  requests: number;
  errors: number;
  cpuMicrosPerRequest: number;
  p50Ms: number;
  p99Ms: number;
  logLinesPerRequest?: number;
  load: string;
}

const milliseconds = (text: string) => {
  const [, value, unit] = /([\d.]+)(us|ms|s)/.exec(text) ?? [];
  return Number(value) * (unit === 'us' ? 1e-3 : unit === 's' ? 1e3 : 1);
};

function wrk(port: number, c: Case, duration: string): Promise<string> {
  const headers = [`Authorization: Bearer ${secret}`, `Origin: ${BENCH_ORIGIN}`, `Accept-Encoding: ${ACCEPT_ENCODING}`];
  if (c.conditional) headers.push(`If-None-Match: ${captured[c.path]!.encoded.etag}`);
  const command = pinned(LOAD_CPU, ['wrk', '-t1', `-c${CONNECTIONS}`, `-d${duration}`, '--latency', ...headers.flatMap((h) => ['-H', h]), `http://127.0.0.1:${port}${c.path}`]);
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`wrk exited ${code}: ${out}`))));
  });
}

async function round(server: ChildProcess, port: number, c: Case, duration = DURATION): Promise<Round> {
  const load = loadAverage();
  const cpu = cpuSeconds(server);
  const lines = logLines;
  const counted = perfCounting(server.pid!);
  const out = await wrk(port, c, duration);
  const used = cpuSeconds(server) - cpu;
  const counts = await counted();
  const requests = Number(/(\d+) requests in/.exec(out)![1]);
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors:.*?(\d+)/.exec(out)?.[1] ?? 0);
  return {
    perSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]),
    requests,
    errors,
    cpuMicrosPerRequest: (used * 1e6) / requests,
    p50Ms: milliseconds(/50%\s+(\S+)/.exec(out)![1]!),
    p99Ms: milliseconds(/99%\s+(\S+)/.exec(out)![1]!),
    ...(server === service && { logLinesPerRequest: (logLines - lines) / requests }),
    ...(counts['raw_syscalls:sys_enter'] !== undefined && {
      syscallsPerRequest: counts['raw_syscalls:sys_enter'] / requests,
      switchesPerRequest: counts['context-switches']! / requests,
    }),
    load,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const best = (rounds: Round[]) => Math.max(...rounds.map((r) => r.perSecond));

const gitCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const dirty = execFileSync('git', ['status', '--porcelain', 'src', 'rest'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
const report: Record<string, unknown> = {
  machine: await machine(),
  code: `${gitCommit}${dirty ? '+changes' : ''}`,
  database: databaseUrl ? 'postgresql' : 'embedded',
  wrk: `-t1 -c${CONNECTIONS} -d${DURATION}`,
  pin: SERVER_CPU ? `servers on CPU ${SERVER_CPU}, wrk on CPU ${LOAD_CPU}` : 'none',
  nice: NICE ?? 0,
  metrics: process.env.METRICS === '1',
  logLevel: process.env.LOG_LEVEL ?? 'info',
  bodyBytes: Object.fromEntries(Object.entries(captured).map(([path, c]) => [path, { plain: Buffer.from(c.plain.body, 'base64').length, sent: Buffer.from(c.encoded.body, 'base64').length }])),
  loadBefore: loadAverage(),
};

try {
  for (const c of CASES) {
    // Warm-up (JIT, caches) on both.
    await round(raw, rawPort, c, '3s');
    await round(service, servicePort, c, '3s');
    const rawRounds: Round[] = [];
    const serviceRounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // ABBA: raw first in even rounds, service first in odd ones.
      const order = i % 2 === 0 ? (['raw', 'service'] as const) : (['service', 'raw'] as const);
      for (const side of order) {
        if (side === 'raw') rawRounds.push(await round(raw, rawPort, c));
        else serviceRounds.push(await round(service, servicePort, c));
      }
      const [r, s] = [rawRounds.at(-1)!, serviceRounds.at(-1)!];
      process.stderr.write(
        `${c.name} round ${i + 1}: raw ${Math.round(r.perSecond)}/s ${r.cpuMicrosPerRequest.toFixed(1)} µs, service ${Math.round(s.perSecond)}/s ` +
          `${s.cpuMicrosPerRequest.toFixed(1)} µs (ratio ${(s.perSecond / r.perSecond).toFixed(2)}), load ${s.load}\n`,
      );
    }
    const rawCpu = median(rawRounds.map((r) => r.cpuMicrosPerRequest));
    const serviceCpu = median(serviceRounds.map((r) => r.cpuMicrosPerRequest));
    report[c.name] = {
      target: c.target,
      ratioOfMedians: Number((median(serviceRounds.map((r) => r.perSecond)) / median(rawRounds.map((r) => r.perSecond))).toFixed(3)),
      ratioOfBest: Number((best(serviceRounds) / best(rawRounds)).toFixed(3)),
      // Requests/s per CPU second of the server: what the machine's neighbours disturb least.
      cpuRatio: Number((rawCpu / serviceCpu).toFixed(3)),
      rawPerSecond: { median: Math.round(median(rawRounds.map((r) => r.perSecond))), best: Math.round(best(rawRounds)) },
      servicePerSecond: { median: Math.round(median(serviceRounds.map((r) => r.perSecond))), best: Math.round(best(serviceRounds)) },
      cpuMicrosPerRequest: { raw: Number(rawCpu.toFixed(1)), service: Number(serviceCpu.toFixed(1)) },
      ...(perfWorks && {
        syscallsPerRequest: {
          raw: Number(median(rawRounds.map((r) => r.syscallsPerRequest!)).toFixed(3)),
          service: Number(median(serviceRounds.map((r) => r.syscallsPerRequest!)).toFixed(3)),
        },
        contextSwitchesPerRequest: {
          raw: Number(median(rawRounds.map((r) => r.switchesPerRequest!)).toFixed(3)),
          service: Number(median(serviceRounds.map((r) => r.switchesPerRequest!)).toFixed(3)),
        },
      }),
      serviceP50P99Ms: [median(serviceRounds.map((r) => r.p50Ms)), median(serviceRounds.map((r) => r.p99Ms))],
      logLinesPerRequest: Number(median(serviceRounds.map((r) => r.logLinesPerRequest!)).toFixed(3)),
      errors: [...rawRounds, ...serviceRounds].reduce((n, r) => n + r.errors, 0),
      rounds: {
        raw: rawRounds.map((r) => `${Math.round(r.perSecond)}/s ${r.cpuMicrosPerRequest.toFixed(1)}µs`),
        service: serviceRounds.map((r) => `${Math.round(r.perSecond)}/s ${r.cpuMicrosPerRequest.toFixed(1)}µs`),
        load: serviceRounds.map((r) => r.load.split(' ')[0]),
      },
    };
  }
  report.loadAfter = loadAverage();
  console.log(JSON.stringify(report, null, 2));
} finally {
  raw.kill('SIGTERM');
  service.kill('SIGTERM');
  await new Promise((done) => service.once('exit', done));
  rmSync(dataDir, { recursive: true, force: true });
}
