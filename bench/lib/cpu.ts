import { readdirSync, readFileSync } from 'node:fs';

/** CPU time (ms) of the PostgreSQL backends serving one database (same machine; Linux /proc); 0 without one. */
export function databaseCpuMs(databaseName: string | null): number {
  if (!databaseName) return 0;
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${databaseName} `)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * 10; // USER_HZ = 100
}

/** CPU ticks of each PostgreSQL backend serving one database, by pid. */
function backendTicks(databaseName: string): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${databaseName} `)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks;
}

/**
 * CPU time (ms) of one database's backends over a stretch of time, including backends that start or end
 * within it (the pool closes connections idle for 10 s; a plain before/after sum lost their time and could go
 * negative). Sampled every 200 ms: a backend that ends loses at most its last 200 ms, when it was idle.
 */
export function databaseCpuMeter(databaseName: string | null): { stop(): number } {
  if (!databaseName) return { stop: () => 0 };
  const start = backendTicks(databaseName);
  const last = new Map(start);
  const sample = () => {
    for (const [pid, ticks] of backendTicks(databaseName)) last.set(pid, ticks);
  };
  const timer = setInterval(sample, 200);
  return {
    stop() {
      clearInterval(timer);
      sample();
      let ticks = 0;
      for (const [pid, value] of last) ticks += value - (start.get(pid) ?? 0);
      return ticks * 10; // USER_HZ = 100
    },
  };
}
