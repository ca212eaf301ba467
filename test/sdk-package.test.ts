// The npm package as a consumer gets it: `npm pack` of sdk/, unpacked into a scratch project's node_modules,
// imported by TypeScript (moduleResolution bundler and node16) and by Node. Fails when `exports`, a types
// path or a public type is wrong, or when a file the exports name is missing from the tarball.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-package-'));
  const [packed] = JSON.parse(execFileSync('npm', ['pack', join(root, 'sdk'), '--pack-destination', dir, '--json', '--silent'], { encoding: 'utf8' }));
  mkdirSync(join(dir, 'node_modules/@consent/sdk'), { recursive: true });
  execFileSync('tar', ['xzf', join(dir, packed.filename), '-C', join(dir, 'node_modules/@consent/sdk'), '--strip-components=1']);
  // The consumer's own React (the package only names it as an optional peer).
  mkdirSync(join(dir, 'node_modules/@types'), { recursive: true });
  symlinkSync(join(root, 'node_modules/react'), join(dir, 'node_modules/react'));
  symlinkSync(join(root, 'node_modules/@types/react'), join(dir, 'node_modules/@types/react'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(
    join(dir, 'consumer.ts'),
    `import { init, SDK_VERSION, type ConsentClient, type ConsentState, type InitOptions } from '@consent/sdk';
import { useConsent } from '@consent/sdk/react';
import { init as initV1 } from '@consent/sdk/v1';

const options: InitOptions = { publicKey: 'pk_live_x', locale: 'de', onChange: (s: ConsentState) => s.choices };
const client: Promise<ConsentClient> = init(options);
client.then((c) => {
  const off: () => void = c.on('change', (state) => state.gpc);
  const url: string = c.preferencesUrl();
  off();
  return url;
});
const granted: boolean = useConsent('analytics');
const version: string = SDK_VERSION;
initV1({ publicKey: 'pk_live_x' });
// @ts-expect-error v1 has no onChange option
initV1({ publicKey: 'pk_live_x', onChange: () => {} });
export { granted, version };
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tsc = (moduleResolution: string, module: string) =>
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--skipLibCheck', 'false', '--target', 'ES2020', '--lib', 'ES2020,DOM', '--module', module, '--moduleResolution', moduleResolution, 'consumer.ts'],
    { cwd: dir, encoding: 'utf8' },
  );

describe('npm package @consent/sdk', () => {
  it('ships what its exports name, with README and types', () => {
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules/@consent/sdk/package.json'), 'utf8'));
    expect(Object.keys(pkg.exports)).toEqual(expect.arrayContaining(['.', './react', './v1']));
    // The build's .br and .gz copies are for the service to serve, not for a bundler to find.
    expect(execFileSync('find', [join(dir, 'node_modules/@consent/sdk'), '-name', '*.br', '-o', '-name', '*.gz'], { encoding: 'utf8' })).toBe('');
    for (const file of ['README.md', 'dist/v2/consent.mjs', 'dist/v2/consent.js', 'dist/v2/index.d.ts', 'dist/v2/public.d.ts', 'dist/v2/react.mjs', 'dist/v2/react.d.ts', 'dist/v2/gpp.js', 'dist/consent.mjs', 'dist/index.d.ts']) {
      expect(() => readFileSync(join(dir, 'node_modules/@consent/sdk', file)), file).not.toThrow();
    }
  });

  it('type-checks a consumer importing the SDK, the React hook and v1 (bundler and node16 resolution)', () => {
    expect(tsc('bundler', 'ESNext')).toBe('');
    expect(tsc('node16', 'node16')).toBe('');
  });

  it('imports in Node without a DOM (server rendering): init is exported and the hook answers false', () => {
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', `const sdk = await import('@consent/sdk'); const r = await import('@consent/sdk/react'); console.log(typeof sdk.init, sdk.SDK_VERSION, typeof r.useConsent);`],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(out.trim()).toBe('function 2.0.0 function');
  });
});
