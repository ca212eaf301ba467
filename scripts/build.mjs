// `npm run build`: the service's TypeScript turned into JavaScript in dist/, file by file with esbuild (no bundle:
// node resolves `graphql` to one copy for our files and the libraries alike, see vitest.config.ts), plus the
// files it reads at run time, at the same relative places (dist/prisma/migrations, dist/rest/operations,
// dist/sdk/dist, dist/console/dist, dist/package.json), so `node dist/src/main.js` needs nothing but dist/ and
// node_modules/. esbuild only strips the types (0.4 s where tsc took 8.7 s on a fresh clone, which every first
// `npm start` and test run waited for); the types are checked by `npm run typecheck`, which CI runs first.
//   node scripts/build.mjs             always builds
//   node scripts/build.mjs --if-stale  builds only when dist is missing or older than a source (`npm start`
//                                      and the test suite use it, so they never run yesterday's build)
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.built');
const SOURCES = ['src', 'schema', 'rest'];
export const INPUTS = [...SOURCES, 'verify', 'prisma/migrations', 'sdk/dist', 'console/dist', 'package.json', 'tsconfig.json'];
const ASSETS = [
  // verify/: the ledger's hashing, shared with the standalone verifier (plain JavaScript, copied as it is).
  'verify',
  'prisma/migrations',
  'rest/operations',
  'sdk/dist',
  'console/dist',
  'package.json',
  // The site scanner's catalogue snapshot, read at run time beside src/scanner/catalogue.js.
  'src/scanner/catalogue/open-cookie-database.csv',
  'src/scanner/catalogue/SNAPSHOT.json',
  'src/scanner/catalogue/LICENSE-open-cookie-database',
  'src/scanner/catalogue/easyprivacy.txt',
  'src/scanner/catalogue/EASYPRIVACY.json',
  'src/scanner/catalogue/LICENSE-easyprivacy',
];

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

export function distIsFresh() {
  if (!existsSync(STAMP)) return false;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.every((input) => newestMtime(join(ROOT, input)) <= built);
}

/**
 * Builds dist/ (always, or with `ifStale` only when it is still stale once this process holds the lock).
 * Two starts from one checkout at once (issue 27) must not race: one builder at a time holds a lock, a
 * waiter finds the fresh build when it gets the lock and leaves it alone, and a build is written to a
 * directory of its own and renamed into place, so dist/ is never half-written or half-deleted under a
 * service that is loading it. The lock is a directory (mkdir is atomic) holding its owner's pid, so one
 * left by a killed build is taken over; a library (proper-lockfile) would be a runtime dependency of
 * `npm start` for these few lines, and its synchronous lock does not wait.
 */
export function build({ ifStale = false } = {}) {
  const release = lock();
  try {
    if (ifStale && distIsFresh()) return false;
    buildUnlocked();
    return true;
  } finally {
    release();
  }
}

function buildUnlocked() {
  const started = new Date(); // a source saved during the build is newer than the stamp: the next start rebuilds
  // From scratch every time, beside dist/: a removed source leaves no module behind.
  const out = join(ROOT, `.dist-build-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  // Loaded here, not at the top: `npm start` runs this script on every start and mostly finds dist/ fresh.
  const { buildSync } = createRequire(import.meta.url)('esbuild');
  const entryPoints = SOURCES.flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => join(dir, file)),
  );
  buildSync({ entryPoints, outdir: out, outbase: '.', absWorkingDir: ROOT, tsconfig: 'tsconfig.json', format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  for (const asset of ASSETS) cpSync(join(ROOT, asset), join(out, asset), { recursive: true });
  const stamp = join(out, '.built');
  writeFileSync(stamp, `${started.toISOString()}\n`);
  utimesSync(stamp, started, started);
  // Two renames: dist/ is missing only between them (a rename cannot replace a directory that has files).
  const old = join(ROOT, `.dist-old-${process.pid}`);
  rmSync(old, { recursive: true, force: true });
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(out, DIST);
  rmSync(old, { recursive: true, force: true });
}

const LOCK = join(ROOT, '.dist-lock');
const LOCK_WAIT_MS = 120_000;

/** Waits for the build lock (synchronously: the vitest global setup calls build() too) and returns its release. */
function lock() {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    if (!ownerAlive()) {
      rmSync(LOCK, { recursive: true, force: true }); // left by a build that was killed
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another build has held ${LOCK} for ${LOCK_WAIT_MS / 1000} s; remove it if no build is running`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}

function ownerAlive() {
  let pid;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    // Just made, its pid not written yet (or just released): give the owner a moment, unless that moment is long past.
    try {
      return Date.now() - statSync(LOCK).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  if (!pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM'; // alive, another user's
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && distIsFresh()) process.exit(0);
  if (ifStale && existsSync(STAMP) && !existsSync(join(ROOT, 'node_modules/esbuild'))) {
    // A production install without dev dependencies (`npm ci --omit=dev` after `npm run build`): run what was built.
    console.warn('dist/ looks older than the sources, but esbuild (a dev dependency) is not installed: starting the existing build');
    process.exit(0);
  }
  // On stderr: `npm start`'s stdout carries only the service's JSON log lines, `npm run admin --json` only JSON.
  if (ifStale) console.error('dist/ is missing or older than the sources: building the service');
  // With --if-stale, a start that waited for another's build finds it fresh and starts it.
  build({ ifStale });
}
