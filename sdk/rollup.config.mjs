// Builds the browser SDK: `npx rollup -c sdk/rollup.config.mjs` from the repo root (any cwd works).
// v1 (frozen: served at /sdk/v1/, its bytes must not change):
//   dist/consent.js   classic script defining the global `ConsentSDK`
//   dist/consent.mjs  ES module exporting `init`
//   dist/index.d.ts + dist/public.d.ts  type declarations
// v2 (served at /sdk/v2/, the npm package's main entry):
//   dist/v2/consent.js, dist/v2/consent.mjs, dist/v2/index.d.ts + public.d.ts
//   dist/v2/react.mjs + react.d.ts  the React hook (`@consent/sdk/react`), react left external
//   dist/v2/stub.js  what must exist before the core (the `__tcfapi` stub with `data-tcf`; the vendors' first-view
//                    defaults with `data-integrations`, integrations-stub.ts), at most 1 KiB: minified harder
//                    (minifyStub, below)
//   dist/v2/tcf.js  the IAB TCF CMP (CMP API, TC string, two-layer banner) with the IAB's @iabtechlabtcf/core
//                   and cmpapi bundled in, global `ConsentTcf`; loaded by stub.js on TCF pages only, at most 24 KiB
//   dist/v2/more.js  global `ConsentMore`: shared cookie, decorate()'s adoption, /decision, cookie removal
//   dist/v2/integrations.js  global `ConsentIntegrations`: the vendors' updates (loaded by more.js)
//   dist/v2/gpp.js  the IAB GPP CMP API (`__gpp`) with the IAB's @iabgpp/cmpapi bundled in, global
//                   `ConsentGpp`; loaded by the core only in opt-out jurisdictions, outside its size budget
//   dist/v2/declaration.js  the cookie declaration table, loaded by the core only on a page with a
//                   `data-consent-declaration` element, outside its size budget
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import terser from '@rollup/plugin-terser';
import typescript from '@rollup/plugin-typescript';
import ts from 'typescript';
import { precompressed } from '../scripts/precompressed.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const tsconfig = here('./tsconfig.json');
const { version } = JSON.parse(readFileSync(here('./package.json'), 'utf8'));

// The compiler emits a .d.ts per source file; only the entry and its public.ts are the public surface, and
// this check keeps it that way (an internal type leaking into a public signature fails the build).
// sdk/core/rollup.config.mjs uses it too, with its own folder (`dir`, holding tsconfig.json) and, since the core
// compiles modules of this folder's src/ too, the folder both lie under as `root` (names are relative to it).
export function declarations(entries, names, dir = here('.'), root = 'src') {
  const files = {};
  const at = (path) => fileURLToPath(new URL(path, 'file://' + dir.replace(/\/$/, '') + '/'));
  return {
    name: 'declarations',
    buildStart() {
      const { config } = ts.readConfigFile(at('./tsconfig.json'), ts.sys.readFile);
      const { options } = ts.parseJsonConfigFileContent(config, ts.sys, dir);
      const program = ts.createProgram(entries.map(at), { ...options, declaration: true, emitDeclarationOnly: true, rootDir: at(root) });
      program.emit(undefined, (name, text) => (files[relative(at(root), name)] = text));
    },
    generateBundle() {
      for (const name of names) {
        const internal = [...files[name].matchAll(/["'](\.\.?\/[^"']*)["']/g)].map((m) => m[1]).filter((s) => s !== './public');
        if (internal.length) this.error(`${name} refers to ${internal.join(', ')}: public types belong in public.ts`);
        // With an extension, as Node's ESM resolution (moduleResolution node16/nodenext) requires.
        const source = files[name].replaceAll(`'./public'`, `'./public.js'`).replaceAll(`"./public"`, `"./public.js"`);
        this.emitFile({ type: 'asset', fileName: name.split('/').pop(), source });
      }
    },
  };
}

// Minified, then .br and .gz copies beside each file (served by Accept-Encoding; nothing compressed at start-up).
const minify = (v) => [terser({ format: { comments: false, preamble: `/*! @consent/sdk ${v} */` } }), precompressed()];
// The v2 core, against its 8 KiB: ES2020 output (the core's own syntax already is) and terser's second pass.
const minifyCore = (v, module = false) => [terser({ ecma: 2020, module, compress: { passes: 3, unsafe_arrows: true }, format: { comments: false, preamble: `/*! @consent/sdk ${v} */` } }), precompressed()];
// stub.js is held to 1 KiB min+gzip (extensions.md section 11) and every byte counts there: no preamble (21 bytes
// gzipped; the version is consent.js's, served beside it), no "use strict" (nothing in it depends on strict mode),
// and terser's second pass and arrows for function expressions that use neither `this` nor `arguments`.
const minifyStub = () => [terser({ ecma: 2020, compress: { passes: 2, unsafe_arrows: true }, format: { comments: false } }), precompressed()];
const compile = () => typescript({ tsconfig, noEmitOnError: true, outputToFilesystem: false });

export default [
  {
    input: here('./src/index.ts'),
    plugins: [compile(), declarations(['./src/index.ts'], ['index.d.ts', 'public.d.ts'])],
    output: [
      // v1 keeps the version it shipped with in its preamble.
      { file: here('./dist/consent.js'), format: 'iife', name: 'ConsentSDK', plugins: [minify('1.0.0')] },
      { file: here('./dist/consent.mjs'), format: 'es', plugins: [minify('1.0.0')] },
    ],
  },
  {
    input: here('./src/v2/index.ts'),
    plugins: [compile(), declarations(['./src/v2/index.ts', './src/v2/react.ts'], ['v2/index.d.ts', 'v2/public.d.ts', 'v2/react.d.ts'])],
    output: [
      { file: here('./dist/v2/consent.js'), format: 'iife', name: 'ConsentSDK', plugins: [minifyCore(version)] },
      { file: here('./dist/v2/consent.mjs'), format: 'es', plugins: [minifyCore(version, true)] },
    ],
  },
  {
    input: here('./src/v2/gpp.ts'),
    plugins: [compile(), nodeResolve({ browser: true })],
    output: { file: here('./dist/v2/gpp.js'), format: 'iife', name: 'ConsentGpp', plugins: [minify(version)] },
  },
  // stub.js (stub.ts, below): a classic script the page loads synchronously before the core: TCF's stub and the
  // vendors' first-view defaults (integrations-stub.ts). more.js: loaded by the core only where a page needs it (index.ts), and
  // integrations.js by more.js only where the configuration lists integrations. All outside the core's budget.
  {
    input: here('./src/v2/more.ts'),
    plugins: [compile()],
    output: { file: here('./dist/v2/more.js'), format: 'iife', name: 'ConsentMore', plugins: [minify(version)] },
  },
  {
    input: here('./src/v2/integrations.ts'),
    plugins: [compile()],
    output: { file: here('./dist/v2/integrations.js'), format: 'iife', name: 'ConsentIntegrations', plugins: [minify(version)] },
  },
  {
    input: here('./src/v2/stub.ts'),
    plugins: [compile()],
    output: { file: here('./dist/v2/stub.js'), format: 'iife', strict: false, plugins: minifyStub() },
  },
  {
    input: here('./src/v2/tcf-entry.ts'),
    plugins: [compile(), nodeResolve({ browser: true })],
    onwarn: (warning, warn) => warning.code != 'CIRCULAR_DEPENDENCY' && warn(warning), // inside the IAB's library
    output: { file: here('./dist/v2/tcf.js'), format: 'iife', name: 'ConsentTcf', exports: 'default', plugins: [minify(version)] },
  },
  {
    input: here('./src/v2/declaration.ts'),
    plugins: [compile()],
    output: { file: here('./dist/v2/declaration.js'), format: 'iife', plugins: [minify(version)] },
  },
  {
    input: here('./src/v2/react.ts'),
    external: ['react'],
    plugins: [compile()],
    output: { file: here('./dist/v2/react.mjs'), format: 'es', plugins: [minify(version)] },
  },
];
