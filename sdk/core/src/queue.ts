// The receipt queue: no receipt lost, none counted twice (extensions.md section 13).
// - A receipt is stored before it is sent (the caller awaits add()), so a process killed at any moment sends it at
//   the next launch.
// - Each receipt has an Idempotency-Key made with it (a UUID) and keeps it for every send: when an answer is lost
//   after the service committed, the repeat is answered with the first answer and stores nothing new.
// - Sent oldest first, one at a time; again at launch, on return to the foreground and when the network is back
//   (flush(true): now, whatever the backoff said), and after a failure with exponential backoff (2 s doubling to
//   5 min, with jitter so a fleet of apps does not come back at once).
// - Dropped with an error event: a 4xx other than 408 and 429 (the service will never take it: retrying would
//   only fail forever), and the oldest when more than MAX are kept.
import type { Store } from './store';

export interface Receipt {
  /** The Idempotency-Key. */
  key: string;
  /** The consent POST's body. */
  body: Record<string, unknown> & { installationId: string };
  attempts: number;
  /** Not sent again before this time (the app's clock), unless flushed by an event. */
  next: number;
}

export const MAX_RECEIPTS = 100;
const FIRST_DELAY = 2_000;
const LONGEST_DELAY = 300_000;

interface Options {
  store: Store;
  now: () => number;
  send(receipt: Receipt): Promise<{ createdAt: string }>;
  acknowledged(receipt: Receipt, createdAt: string): void;
  report(code: string, message: string, status?: number): void;
  changed(): void;
}

const valid = (r: unknown): r is Receipt => {
  const x = r as Receipt;
  return !!x && typeof x.key == 'string' && !!x.body && typeof x.body == 'object' && typeof x.attempts == 'number' && typeof x.next == 'number';
};

export function createQueue(o: Options) {
  let receipts: Receipt[] = [];
  let flushing: Promise<void> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const save = () => o.store.write('queue', receipts.length ? receipts : undefined);

  function schedule(at: number) {
    if (timer) clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush(false);
    }, Math.max(0, at - o.now()));
    // Node: a retry timer must not keep a process alive (a server script, a test); React Native has no unref.
    (timer as { unref?: () => void }).unref?.();
  }

  async function run(now: boolean) {
    while (receipts.length && !stopped) {
      const r = receipts[0]!;
      if (!now && r.next > o.now()) return schedule(r.next);
      now = false;
      try {
        const answer = await o.send(r);
        receipts = receipts.filter((x) => x !== r);
        await save();
        o.acknowledged(r, answer.createdAt);
      } catch (err) {
        const e = err as { code?: string; status?: number; message?: string };
        const status = e.status || 0;
        if (status >= 400 && status < 500 && status != 408 && status != 429) {
          receipts = receipts.filter((x) => x !== r);
          await save();
          o.report(e.code || 'http_error', `receipt dropped: the service refused it (${e.message})`, status);
        } else {
          r.attempts++;
          const delay = Math.min(FIRST_DELAY * 2 ** (r.attempts - 1), LONGEST_DELAY);
          r.next = o.now() + delay / 2 + Math.random() * (delay / 2);
          await save();
          o.report(e.code || 'network_error', `receipt kept, sent again later: ${e.message}`, status);
          o.changed();
          return schedule(r.next);
        }
      }
      o.changed();
    }
  }

  /** Sends what is due (`now`: everything, at once); one run at a time, a call during a run runs after it. */
  function flush(now: boolean): Promise<void> {
    if (flushing) return flushing.then(() => flush(now));
    flushing = run(now).finally(() => (flushing = undefined));
    return flushing;
  }

  return {
    async load() {
      const kept = await o.store.read<unknown[]>('queue', Array.isArray);
      receipts = (kept || []).filter(valid);
    },
    async add(r: Receipt) {
      receipts.push(r);
      while (receipts.length > MAX_RECEIPTS) {
        const dropped = receipts.shift()!;
        o.report('queue_full', `more than ${MAX_RECEIPTS} receipts waiting: the oldest (${dropped.body.timestamp}) was dropped`);
      }
      await save();
    },
    flush,
    size: () => receipts.length,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
