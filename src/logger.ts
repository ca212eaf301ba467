import { pino, type DestinationStream, type Level, type Logger } from 'pino';

// One JSON line per request goes to stdout. Written as they come, the lines cost the SDK hot path one write
// through the thread pool per answer or two (a hop to a pool thread and back, two system calls and a context
// switch each): more than the rest of the line together (bench/README.md, "SDK config with wrk"). They wait in
// memory instead, up to LOG_BUFFER_BYTES or LOG_FLUSH_MS, and go out in one write; pino flushes what is left
// when the process exits (a SIGKILL loses at most that much).
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 1000;

export function createLogger(level: Level | 'silent', destination?: DestinationStream): Logger {
  return pino(
    { level, base: undefined, timestamp: isoTime },
    destination ?? pino.destination({ dest: 1, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}

let stampedAt = -1;
let stamp = '';

/**
 * pino's `stdTimeFunctions.isoTime`, formatted once per millisecond: under load the lines of one millisecond
 * share it (`toISOString` was the largest single cost of a request's log line in a CPU profile).
 */
export function isoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}
