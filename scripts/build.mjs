// `npm run build`: the service compiled by tsc to dist/ (no bundler: node resolves `graphql` to one copy for
// our files and the libraries alike, see vitest.config.ts), plus the files it reads at run time, at the same
// relative places (dist/prisma/migrations, dist/rest/operations, dist/sdk/dist, dist/console/dist,
// dist/package.json), so `node dist/src/main.js` needs nothing but dist/ and node_modules/.
//   node scripts/build.mjs             always builds
//   node scripts/build.mjs --if-stale  builds only when dist is missing or older than a source (`npm start`
//                                      and the test suite use it, so they never run yesterday's build)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.built');
const INPUTS = ['src', 'schema', 'rest', 'prisma/migrations', 'sdk/dist', 'console/dist', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
const ASSETS = ['prisma/migrations', 'rest/operations', 'sdk/dist', 'console/dist', 'package.json'];

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
  const started = new Date(); // a source saved while tsc runs is newer than the stamp: the next start rebuilds
  // Incremental (dist/.tsbuildinfo): a rebuild after a small change takes seconds. Without the stamp the
  // last build did not finish: start over, tsc would trust outputs it did not check.
  if (!existsSync(STAMP)) rmSync(DIST, { recursive: true, force: true });
  rmSync(STAMP, { force: true });
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit', cwd: ROOT });
  for (const asset of ASSETS) {
    rmSync(join(DIST, asset), { recursive: true, force: true }); // a removed migration must not linger
    cpSync(join(ROOT, asset), join(DIST, asset), { recursive: true });
  }
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && distIsFresh()) process.exit(0);
  if (ifStale && existsSync(STAMP) && !existsSync(join(ROOT, 'node_modules/typescript'))) {
    // A production install without dev dependencies (`npm ci --omit=dev` after `npm run build`): run what was built.
    console.warn('dist/ looks older than the sources, but TypeScript is not installed: starting the existing build');
    process.exit(0);
  }
  // On stderr: `npm start`'s stdout carries only the service's JSON log lines, `npm run admin --json` only JSON.
  if (ifStale) console.error('dist/ is missing or older than the sources: building the service');
  build();
}
