// Builds the browser SDK: `npx rollup -c sdk/rollup.config.mjs` from the repo root (any cwd works).
//   dist/consent.js   classic script defining the global `ConsentSDK` (served at /sdk/v1/consent.js)
//   dist/consent.mjs  ES module exporting `init` (served at /sdk/v1/consent.mjs)
//   dist/index.d.ts + dist/public.d.ts  type declarations
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import terser from '@rollup/plugin-terser';
import typescript from '@rollup/plugin-typescript';
import ts from 'typescript';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const tsconfig = here('./tsconfig.json');
const { version } = JSON.parse(readFileSync(here('./package.json'), 'utf8'));

// The compiler emits a .d.ts per source file; only index.ts and public.ts are the public surface, and this
// check keeps it that way (an internal type leaking into a public signature fails the build).
function declarations() {
  const files = {};
  return {
    name: 'declarations',
    buildStart() {
      const { config } = ts.readConfigFile(tsconfig, ts.sys.readFile);
      const { options } = ts.parseJsonConfigFileContent(config, ts.sys, here('.'));
      const program = ts.createProgram([here('./src/index.ts')], { ...options, declaration: true, emitDeclarationOnly: true });
      program.emit(undefined, (name, text) => (files[name.split('/').pop()] = text));
    },
    generateBundle() {
      for (const name of ['index.d.ts', 'public.d.ts']) {
        const internal = [...files[name].matchAll(/["'](\.\.?\/[^"']*)["']/g)].map((m) => m[1]).filter((s) => s !== './public');
        if (internal.length) this.error(`${name} refers to ${internal.join(', ')}: public types belong in src/public.ts`);
        this.emitFile({ type: 'asset', fileName: name, source: files[name] });
      }
    },
  };
}

const minify = terser({ format: { comments: false, preamble: `/*! @consent/sdk ${version} */` } });

export default {
  input: here('./src/index.ts'),
  plugins: [typescript({ tsconfig, noEmitOnError: true }), declarations()],
  output: [
    { file: here('./dist/consent.js'), format: 'iife', name: 'ConsentSDK', plugins: [minify] },
    { file: here('./dist/consent.mjs'), format: 'es', plugins: [minify] },
  ],
};
