// `npm run build`: the service's TypeScript turned into JavaScript in dist/, file by file with esbuild (no bundle:
// node resolves `graphql` to one copy for our files and the libraries alike, see vitest.config.ts), plus the
// files it reads at run time, at the same relative places (dist/prisma/migrations, dist/rest/operations,
// dist/sdk/dist, dist/console/dist, dist/package.json), so `node dist/src/main.js` needs nothing but dist/ and
// node_modules/. esbuild only strips the types (0.4 s where tsc took 8.7 s on a fresh clone, which every first
// `npm start` and test run waited for); the types are checked by `npm run typecheck`, which CI runs first.
//   node scripts/build.mjs             always builds
//   node scripts/build.mjs --if-stale  builds only when dist is missing or older than a source (`npm start`
//                                      and the test suite use it, so they never run yesterday's build)
import { cpSync, existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.built');
const SOURCES = ['src', 'schema', 'rest'];
const INPUTS = [...SOURCES, 'verify', 'prisma/migrations', 'sdk/dist', 'console/dist', 'package.json', 'tsconfig.json'];
// verify/: the ledger's hashing, shared with the standalone verifier (plain JavaScript, copied as it is).
const ASSETS = ['verify', 'prisma/migrations', 'rest/operations', 'sdk/dist', 'console/dist', 'package.json'];

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

export function build() {
  const started = new Date(); // a source saved during the build is newer than the stamp: the next start rebuilds
  // From scratch every time: a removed source leaves no module behind.
  rmSync(DIST, { recursive: true, force: true });
  // Loaded here, not at the top: `npm start` runs this script on every start and mostly finds dist/ fresh.
  const { buildSync } = createRequire(import.meta.url)('esbuild');
  const entryPoints = SOURCES.flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => join(dir, file)),
  );
  buildSync({ entryPoints, outdir: DIST, outbase: '.', absWorkingDir: ROOT, tsconfig: 'tsconfig.json', format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  for (const asset of ASSETS) cpSync(join(ROOT, asset), join(DIST, asset), { recursive: true });
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
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
  build();
}
