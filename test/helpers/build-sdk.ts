// vitest globalSetup: the service reads sdk/dist when it starts, and the browser tests run that build, so a
// build older than the SDK's sources would test yesterday's SDK. Rebuilds only when something is newer.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('../../sdk/', import.meta.url));
const OUTPUTS = ['consent.js', 'consent.mjs', 'index.d.ts', 'v2/consent.js', 'v2/consent.mjs', 'v2/index.d.ts', 'v2/react.mjs', 'v2/gpp.js', 'v2/stub.js', 'v2/tcf.js', 'v2/declaration.js'].map((name) => join(sdk, 'dist', name));

export default function setup(): void {
  const sources = [...readdirSync(join(sdk, 'src'), { recursive: true, encoding: 'utf8' }).map((f) => join(sdk, 'src', f)), join(sdk, 'rollup.config.mjs'), join(sdk, 'package.json'), join(sdk, 'tsconfig.json')];
  const newestSource = Math.max(...sources.map((f) => statSync(f).mtimeMs));
  const fresh = OUTPUTS.every((f) => existsSync(f) && statSync(f).mtimeMs >= newestSource);
  if (fresh) return;
  console.log('sdk/dist is missing or older than sdk/src: building the SDK');
  execFileSync(process.execPath, [join(sdk, '../node_modules/rollup/dist/bin/rollup'), '-c', join(sdk, 'rollup.config.mjs'), '--silent'], { stdio: 'inherit' });
}
