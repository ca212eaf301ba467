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
