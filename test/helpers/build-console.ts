// vitest globalSetup (before build-service.ts: dist/ carries a copy of console/dist): the service reads
// console/dist when it starts, so a build older than the console's sources would test yesterday's console.
// Rebuilds only when a source is newer than the built index.html.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const consoleDir = join(root, 'console');

export function consoleIsFresh(): boolean {
  const built = join(consoleDir, 'dist', 'index.html');
  if (!existsSync(built)) return false;
  const sources = [
    ...readdirSync(join(consoleDir, 'src'), { recursive: true, encoding: 'utf8' }).map((f) => join(consoleDir, 'src', f)),
    ...['index.html', 'vite.config.ts', 'public'].map((f) => join(consoleDir, f)).filter(existsSync),
    join(root, 'package-lock.json'),
  ];
  const newest = Math.max(...sources.map((f) => statSync(f).mtimeMs));
  return statSync(built).mtimeMs >= newest;
}

export default function setup(): void {
  if (consoleIsFresh()) return;
  console.log('console/dist is missing or older than console/src: building the console');
  execFileSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(consoleDir, 'vite.config.ts'), '--logLevel', 'warn'], {
    stdio: 'inherit',
    cwd: root,
    // vitest sets NODE_ENV=test, which would make Vite bundle React's development build.
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
