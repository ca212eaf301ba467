import { describe, expect, it } from 'vitest';
import { BatchedLines, createLogger, requestLineWriter, type RequestLine } from '../src/logger.js';

/** A logger writing to memory, as the service's own (level, time format, no base fields). */
function memoryLogger() {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

const sameMillisecond = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"');

describe('the request line (src/logger.ts)', () => {
  it('is byte for byte what pino writes for the same fields, with what a client chose escaped', () => {
    const { logger, lines } = memoryLogger();
    const write = requestLineWriter(logger);
    const cases: RequestLine[] = [
      { reqId: 'c0ffee-1', method: 'GET', path: '/api/sdk/v1/config', status: 304, durationMs: 0.084213, aborted: false },
      { reqId: 'x.y:z', method: 'POST', path: '/api/sdk/v1/consent', status: 201, durationMs: 12, aborted: true },
      // Paths arrive as the client sent them: quotes, backslashes, control and non-ASCII characters.
      { reqId: 'r', method: 'GET', path: '/a"b\\c\u0001d/é/\u2028', status: 404, durationMs: 1.5, aborted: false },
    ];
    for (const { aborted, ...fields } of cases) {
      write({ ...fields, aborted });
      logger.info(aborted ? { ...fields, aborted } : fields, 'request');
      const [ours, pinos] = lines.splice(0, 2).map(sameMillisecond);
      expect(ours).toBe(pinos);
      expect(JSON.parse(ours!)).toMatchObject({ level: 30, msg: 'request', path: fields.path, status: fields.status });
    }
  });

  it('in the service’s batched output: held until the turn is over, then in order with the other lines, byte for byte', async () => {
    const written: string[] = [];
    const batched = new BatchedLines({ write: (text: string) => void written.push(text) === 0, flush: (done) => done?.(), flushSync: () => {} });
    const logger = createLogger('info', batched);
    const write = requestLineWriter(logger);
    const line: RequestLine = { reqId: 'first', method: 'GET', path: '/api/sdk/v1/config', status: 200, durationMs: 0.5, aborted: false };
    write(line);
    logger.warn('in between');
    write({ ...line, reqId: 'second', status: 304, path: '/a"b\\é' });
    logger.flush();
    const lines = written.join('').split('\n').filter(Boolean);
    expect(lines.map((text) => JSON.parse(text).reqId ?? JSON.parse(text).msg)).toEqual(['first', 'in between', 'second']);
    const { logger: reference, lines: expected } = memoryLogger();
    reference.info({ reqId: 'second', method: 'GET', path: '/a"b\\é', status: 304, durationMs: 0.5 }, 'request');
    expect(sameMillisecond(lines[2]!)).toBe(sameMillisecond(expected[0]!.trimEnd()));

    // Alone, a request's line is formatted once the event loop's turn is over, and goes out with the next flush.
    write({ ...line, reqId: 'third' });
    await new Promise((resolve) => setImmediate(resolve));
    logger.flush();
    expect(written.join('')).toContain('"reqId":"third"');
  });
});
