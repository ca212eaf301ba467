// vitest globalSetup: the service reads sdk/dist when it starts, and the browser tests run that build, so a
// build older than the SDK's sources would test yesterday's SDK. Rebuilds only when something is newer.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('../../sdk/', import.meta.url));
const OUTPUTS = ['consent.js', 'consent.mjs', 'index.d.ts', 'v2/consent.js', 'v2/consent.mjs', 'v2/index.d.ts', 'v2/react.mjs', 'v2/gpp.js', 'v2/stub.js', 'v2/tcf.js', 'v2/declaration.js'].map((name) => join(sdk, 'dist', name));

// @consent/core (sdk/core) compiles modules of sdk/src too, so it is stale when either changed.
const CORE_OUTPUTS = ['index.mjs', 'tcf.mjs', 'index.d.ts'].map((name) => join(sdk, 'core', 'dist', name));

const files = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f));
const newest = (paths: string[]) => Math.max(...paths.map((f) => statSync(f).mtimeMs));
const stale = (outputs: string[], since: number) => !outputs.every((f) => existsSync(f) && statSync(f).mtimeMs >= since);
const rollup = (config: string) =>
  execFileSync(process.execPath, [join(sdk, '../node_modules/rollup/dist/bin/rollup'), '-c', config, '--silent'], { stdio: 'inherit' });

export default function setup(): void {
  const newestSource = newest([...files(join(sdk, 'src')), join(sdk, 'rollup.config.mjs'), join(sdk, 'package.json'), join(sdk, 'tsconfig.json')]);
  if (stale(OUTPUTS, newestSource)) {
    console.log('sdk/dist is missing or older than sdk/src: building the SDK');
    rollup(join(sdk, 'rollup.config.mjs'));
  }
  const core = join(sdk, 'core');
  const newestCore = Math.max(newestSource, newest([...files(join(core, 'src')), join(core, 'rollup.config.mjs'), join(core, 'package.json'), join(core, 'tsconfig.json')]));
  if (stale(CORE_OUTPUTS, newestCore)) {
    console.log('sdk/core/dist is missing or older than its sources: building @consent/core');
    rollup(join(core, 'rollup.config.mjs'));
  }
}
