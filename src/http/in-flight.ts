/** Counts requests still being answered, so a shutdown can wait for them (cheaper per request than keeping their promises). */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  start(): void {
    this.count++;
  }

  end(): void {
    if (--this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** Resolves when every request that has started has been answered. */
  drained(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
