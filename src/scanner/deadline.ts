// Deadlines for work a scanned page can hold up. A page's script can keep its renderer busy for good
// (`for (;;) {}`): every call that needs the renderer (evaluate, locators, CDP domains) then never answers,
// and Playwright puts no timeout on most of them. So each browser or CDP call of a visit races the visit's
// deadline, a visit past it closes its context (the renderer goes with it; the browser when even that hangs),
// and a scan as a whole has a wall-clock budget (docs/scanner.md "Deadlines").
import type { Browser, BrowserContext } from 'playwright-core';

/** The visit's (or scan's) time ran out before the call answered. */
export class DeadlinePassed extends Error {
  override name = 'DeadlinePassed';
}

/** How long closing a context, reading its cookies or closing the browser may take once a visit is over. */
export const CLOSE_GRACE_MS = 5000;

export class Deadline {
  /** performance.now() time at which it passes (monotonic: a clock change does not move it). */
  readonly at: number;

  constructor(
    readonly ms: number,
    private readonly what = 'the visit',
  ) {
    this.at = performance.now() + ms;
  }

  get passed(): boolean {
    return performance.now() >= this.at;
  }

  /** Milliseconds left, at most `cap`, at least 1 (a Playwright timeout of 0 means none). */
  left(cap = Number.POSITIVE_INFINITY): number {
    return Math.max(1, Math.min(cap, Math.ceil(this.at - performance.now())));
  }

  /** A deadline that passes at `ms` from now or at this one, whichever comes first. */
  within(ms: number, what = this.what): Deadline {
    return new Deadline(Math.max(0, Math.min(ms, this.at - performance.now())), what);
  }

  /** `work`'s answer, or DeadlinePassed when the deadline comes first (work's later failure is ignored). */
  race<T>(work: Promise<T>): Promise<T> {
    return raceTimer(work, this.at - performance.now(), () => new DeadlinePassed(`${this.what} did not finish within ${Math.round(this.ms / 1000)} s`));
  }
}

/** `work`'s answer, or `fallback` when it does not come within `ms` or fails. */
export async function settleWithin<T, F>(work: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  return raceTimer(work, ms, () => new DeadlinePassed('timed out')).catch(() => fallback);
}

function raceTimer<T>(work: Promise<T>, ms: number, timeout: () => Error): Promise<T> {
  work.catch(() => {}); // the loser of the race may fail later: nobody is waiting for it
  if (ms <= 0) return Promise.reject(timeout());
  let timer: NodeJS.Timeout | undefined;
  const timed = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(timeout()), ms)));
  return Promise.race([work, timed]).finally(() => clearTimeout(timer));
}

/**
 * Closes a visit's context, which ends its renderer however busy the page keeps it; when even that does not
 * answer, closes the whole browser (the worker launches another for the next scan). Answers whether the
 * browser had to go.
 */
export async function closeContext(context: BrowserContext, browser: Browser): Promise<boolean> {
  const closed = await settleWithin(context.close().then(() => true), CLOSE_GRACE_MS, false);
  if (closed) return false;
  await settleWithin(browser.close(), CLOSE_GRACE_MS, undefined);
  return true;
}
