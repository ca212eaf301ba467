import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ANSWER, sendWebhook } from '../src/webhooks/send.js';

// A receiver that keeps connections alive but closes one with a reset when a second request arrives on it:
// what a receiver does when its idle timeout fires just as a kept-alive connection is reused (seen in the
// suite under load as attempts failing in 50 ms with "the receiver did not answer").
describe('webhook connections', () => {
  const connections: Socket[] = [];
  let requestsSeen = 0;
  let port = 0;
  const server = createServer((socket) => {
    connections.push(socket);
    let onThisSocket = 0;
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        const [head, ...rest] = buffered.split('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(head!)?.[1] ?? 0);
        const body = rest.join('\r\n\r\n');
        if (body.length < length) return;
        buffered = body.slice(length);
        onThisSocket += 1;
        if (onThisSocket > 1) {
          socket.resetAndDestroy();
          return;
        }
        requestsSeen += 1;
        socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\nKeep-Alive: timeout=30\r\n\r\n');
      }
    });
    socket.on('error', () => {});
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of connections) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const message = (eventId: string) => ({
    url: `http://127.0.0.1:${port}/hook`,
    secret: 'whsec_test',
    eventId,
    eventType: 'consent.recorded',
    body: JSON.stringify({ id: eventId }),
  });
  const options = { timeoutMs: 5_000, allowLoopback: true };

  // Fails on the old main: the second delivery reused the kept-alive connection, got the reset and was
  // recorded as failed (and retried only after the backoff).
  it('sends again on a fresh connection when a kept-alive one was reset before any answer', async () => {
    expect(await sendWebhook(message('evt-1'), options)).toMatchObject({ ok: true, responseStatus: 204, error: null });
    expect(await sendWebhook(message('evt-2'), options)).toMatchObject({ ok: true, responseStatus: 204, error: null });
    expect(requestsSeen).toBe(2);
    expect(connections.length).toBe(2);
  });

  it('still reports a receiver that resets a fresh connection as not answering, without trying again', async () => {
    const refusing = createServer((socket) => socket.on('data', () => socket.resetAndDestroy()).on('error', () => {}));
    let accepted = 0;
    refusing.on('connection', () => (accepted += 1));
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const refusingPort = (refusing.address() as { port: number }).port;
    try {
      const outcome = await sendWebhook({ ...message('evt-3'), url: `http://127.0.0.1:${refusingPort}/hook` }, options);
      expect(outcome).toMatchObject({ ok: false, responseStatus: null, error: NO_ANSWER });
      expect(accepted).toBe(1);
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  });
});
