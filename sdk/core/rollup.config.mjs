// Builds @consent/core: `npx rollup -c sdk/core/rollup.config.mjs` from the repo root (any cwd works).
//   dist/index.mjs  the core (ES module), at most 12 KiB min+gzip (bench/core-budget.ts, test/core-size.test.ts)
//   dist/tcf.mjs    the IAB part (TC and GPP strings, in-app keys) with @iabtechlabtcf/core and @iabgpp/cmpapi
//                   bundled in; the core imports it lazily (import('./tcf')), only for TCF and US opt-out projects
//   dist/index.d.ts + dist/public.d.ts  type declarations (only public.ts's types: the check in ../rollup.config.mjs)
// The core shares the browser SDK v2's DOM-free modules (../src/v2/consent.ts, api.ts, gcm.ts, gdpr.ts, gpp.ts,
// tcf-encoding.ts), compiled from there.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import terser from '@rollup/plugin-terser';
import typescript from '@rollup/plugin-typescript';
import { declarations } from '../rollup.config.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const { version } = JSON.parse(readFileSync(here('./package.json'), 'utf8'));

export default {
  input: { index: here('./src/index.ts'), tcf: here('./src/tcf.ts') },
  onwarn: (warning, warn) => warning.code != 'CIRCULAR_DEPENDENCY' && warn(warning), // inside the IAB's libraries
  plugins: [
    // rootDir: the core compiles modules of ../src as well.
    typescript({ tsconfig: here('./tsconfig.json'), rootDir: here('..'), include: [here('./src/**'), here('../src/**')], noEmitOnError: true, outputToFilesystem: false }),
    nodeResolve(),
    declarations(['./src/index.ts'], ['core/src/index.d.ts', 'core/src/public.d.ts'], here('.'), '..'),
  ],
  output: {
    dir: here('./dist'),
    format: 'es',
    entryFileNames: '[name].mjs',
    chunkFileNames: 'chunk-[name].mjs',
    plugins: [terser({ format: { comments: false, preamble: `/*! @consent/core ${version} */` } })],
  },
};
