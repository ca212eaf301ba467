// Issue 27: two `npm start` at once on a missing or stale dist/ raced in the build and one crashed (a cpSync
// error, or a start that loaded a dist/ the other was deleting). scripts/build.mjs now builds under a lock into
// a directory of its own and swaps it in. Run in a copy of the checkout, so the suite's own dist/ (which other
// files run while this one does) is never touched.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { INPUTS } from '../scripts/build.mjs';
import { freePort, migratedDataDir } from './helpers/service-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What `npm start` needs of a checkout: the build's own inputs (so a new one cannot be forgotten here) and the script. */
const CHECKOUT = [...INPUTS, 'scripts'];

const temps: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL'); // the process group we started, if any of it is left
    } catch {
      // already gone
    }
  }
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function checkoutCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'consent-build-'));
  temps.push(dir);
  for (const part of CHECKOUT) {
    mkdirSync(join(dir, part, '..'), { recursive: true });
    cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function run(cwd: string, file: string, args: string[], env: Record<string, string> = {}): Run {
  const { DATABASE_URL: _url, ...inherited } = process.env; // the embedded database, in DATA_DIR
  const child = spawn(file, args, { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

async function ready(port: number, start: Run): Promise<void> {
  for (;;) {
    if (start.child.exitCode !== null) throw new Error(`npm start exited (${start.child.exitCode}):\n${start.output()}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A complete build: the entry point, the assets it reads and the stamp written last. */
function expectBuilt(dir: string) {
  for (const file of ['dist/src/main.js', 'dist/.built', 'dist/rest/operations', 'dist/prisma/migrations', 'dist/sdk/dist', 'dist/console/dist/index.html']) {
    expect(existsSync(join(dir, file)), file).toBe(true);
  }
  // No build directory or lock is left behind.
  expect(readdirSync(dir).filter((name) => name.startsWith('.dist'))).toEqual([]);
}

describe('two starts from one checkout (scripts/build.mjs)', () => {
  it('two `npm start` at once on a missing dist/ both build-or-wait and serve', async () => {
    const dir = checkoutCopy();
    const starts = await Promise.all(
      [0, 1].map(async (i) => {
        const port = await freePort();
        const start = run(dir, 'npm', ['start', '--silent'], {
          PORT: String(port),
          HOST: '127.0.0.1',
          NODE_ENV: 'development',
          LOG_LEVEL: 'warn',
          DATA_DIR: migratedDataDir(`consent-build-data-${i}-`),
        });
        return { port, start };
      }),
    );
    await Promise.all(starts.map(({ port, start }) => ready(port, start)));
    expectBuilt(dir);
    for (const { start } of starts) {
      process.kill(-start.child.pid!, 'SIGTERM'); // npm and the service it started
      await start.exited;
    }
  });

  it('three builds at once on a stale dist/, and a forced build beside them, all succeed and leave one complete dist/', async () => {
    const dir = checkoutCopy();
    const first = run(dir, process.execPath, ['scripts/build.mjs']);
    expect(await first.exited, first.output()).toBe(0);
    // A build older than the sources is stale.
    const earlier = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, 'dist/.built'), earlier, earlier);
    const builds = [
      run(dir, process.execPath, ['scripts/build.mjs', '--if-stale']),
      run(dir, process.execPath, ['scripts/build.mjs', '--if-stale']),
      run(dir, process.execPath, ['scripts/build.mjs', '--if-stale']),
      run(dir, process.execPath, ['scripts/build.mjs']),
    ];
    const codes = await Promise.all(builds.map((build) => build.exited));
    expect(codes, builds.map((build) => build.output()).join('\n---\n')).toEqual([0, 0, 0, 0]);
    expectBuilt(dir);
  });
});
