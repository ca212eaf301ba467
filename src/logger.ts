import { pino, type DestinationStream, type Level, type Logger } from 'pino';

// One JSON line per request goes to stdout. Written as they come, the lines cost the SDK hot path one write
// through the thread pool per answer or two (a hop to a pool thread and back, two system calls and a context
// switch each): more than the rest of the line together (bench/sdk-config-wrk.ts; the runs: git show 89b3c83 --
// bench/README.md). They wait in memory instead, up to LOG_BUFFER_BYTES or LOG_FLUSH_MS, and go out in one
// write; what is left is written when the process exits (a SIGKILL loses at most that much).
const LOG_BUFFER_BYTES = 16 * 1024;
const LOG_FLUSH_MS = 1000;

export function createLogger(level: Level | 'silent', destination?: DestinationStream): Logger {
  return pino({ level, base: undefined, timestamp: isoTime }, destination ?? new BatchedLines(pino.destination({ dest: 1, sync: true })));
}

/**
 * Lines joined in memory and handed to SonicBoom (pino's destination) as one string per batch. SonicBoom's own
 * `minLength` buffering measures its whole pending buffer in bytes on every line (`Buffer.byteLength`, sonic-boom
 * 4.2 and 5.0): 3 µs of a request's 11 µs log line on the SDK config path, against 0.2 µs for a plain string
 * append (the runs: git show 19a77cc -- bench/README.md). Writing, retries on EAGAIN and broken pipes stay SonicBoom's.
 *
 * Request lines are kept as their fields and formatted together once the event loop's current turn is over (or
 * before any other line, so the order holds): formatted one by one between a request's other work they cost
 * about 1.3 µs more each on the SDK config path (git show 19a77cc -- bench/README.md).
 */
export class BatchedLines implements DestinationStream {
  private pending = '';
  private requests: RequestLine[] = [];
  private requestTimes: number[] = [];

  constructor(private readonly out: Pick<ReturnType<typeof pino.destination>, 'write' | 'flush' | 'flushSync'>) {
    setInterval(() => this.handOver(), LOG_FLUSH_MS).unref();
    live.add(this);
  }

  write(line: string): void {
    if (this.requests.length) this.formatRequests();
    this.append(line);
  }

  /** A request's line, formatted with the others of this turn of the event loop. */
  request(line: RequestLine): void {
    if (!this.requests.length) setImmediate(this.formatRequests);
    this.requests.push(line);
    this.requestTimes.push(Date.now());
  }

  /** pino's `logger.flush()`: what waits goes out now. */
  flush(done?: (error?: Error) => void): void {
    this.handOver();
    if (done) this.out.flush(done);
  }

  flushSync(): void {
    this.handOver();
    this.out.flushSync();
  }

  private readonly formatRequests = (): void => {
    const lines = this.requests;
    const times = this.requestTimes;
    if (!lines.length) return;
    this.requests = [];
    this.requestTimes = [];
    let text = '';
    for (let i = 0; i < lines.length; i++) text += requestLine(lines[i]!, times[i]!);
    this.append(text);
  };

  private append(text: string): void {
    this.pending += text;
    if (this.pending.length >= LOG_BUFFER_BYTES) this.handOver();
  }

  private handOver(): void {
    this.formatRequests();
    if (!this.pending) return;
    this.out.write(this.pending);
    this.pending = '';
  }
}

// One exit hook for every logger the process made (tests start many servers in one process).
const live = new Set<BatchedLines>();
process.once('exit', () => {
  for (const lines of live) lines.flushSync();
});

export interface RequestLine {
  reqId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  aborted: boolean;
}

/**
 * Writes the line `logger.info({reqId, method, path, status, durationMs[, aborted]}, 'request')` would write, byte
 * for byte, to the logger's own destination (so level, batching and a test's destination all apply). Built as one
 * template: pino's general serialiser (escaping checks per key and value) was 3 µs of the SDK config's 30 µs per
 * request (git show 19a77cc -- bench/README.md); `JSON.stringify` escapes the three strings a client chose.
 */
export function requestLineWriter(logger: Logger): (line: RequestLine) => void {
  const destination = (logger as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  if (destination instanceof BatchedLines) return (line) => destination.request(line);
  return (line) => destination.write(requestLine(line, Date.now()));
}

/** The request's JSON line, logged at `at` (epoch ms). */
function requestLine({ reqId, method, path, status, durationMs, aborted }: RequestLine, at: number): string {
  return (
    `{"level":30${isoTime(at)},"reqId":${JSON.stringify(reqId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},` +
    `"status":${status},"durationMs":${durationMs}${aborted ? ',"aborted":true' : ''},"msg":"request"}\n`
  );
}

let stampedAt = -1;
let stamp = '';

/**
 * pino's `stdTimeFunctions.isoTime`, formatted once per millisecond: under load the lines of one millisecond
 * share it (`toISOString` was the largest single cost of a request's log line in a CPU profile).
 */
export function isoTime(now = Date.now()): string {
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}
