import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import LongFirstSequencer from './test/helpers/sequencer.js';

// Files that need a module graph of their own: a vi.mock of a module the others import (auth), fake timers
// installed before the server starts (promises), and the SDK's unit tests in happy-dom.
const ISOLATED = ['test/auth.test.ts', 'test/promises.test.ts', 'sdk/test/**/*.test.ts'];

// Node 25+ has a localStorage and sessionStorage of its own on globalThis (undefined without --localstorage-file), and
// vitest 4's DOM environments keep a global that exists instead of installing happy-dom's Storage (vitest#10867, fixed
// in vitest 5): the SDK's tests would find no storage. Where Node has them, the workers start without them, as a
// browser page would. The flag exists on every line that can have them (22 and 24 behind --experimental-webstorage).
export const withoutNodeWebStorage = 'localStorage' in globalThis ? ['--no-experimental-webstorage'] : [];

export default defineConfig({
  // Node resolves `graphql` to its CommonJS build for the libraries; make our own files
  // use the same copy (Vite would pick the .mjs one and graphql refuses two realms).
  resolve: { alias: [{ find: /^graphql$/, replacement: fileURLToPath(new URL('node_modules/graphql/index.js', import.meta.url)) }] },
  test: {
    // Builds what is stale (SDK, console, the service's dist/), finds or installs Chromium and launches it once for
    // the run, makes the migrated database image every test server clones: test/helpers/global-setup.ts.
    globalSetup: ['test/helpers/global-setup.ts'],
    // Each file starts its own server and database; two cores, so keep parallelism modest.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The long files first, on a fresh clone too (test/helpers/sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
    projects: [
      {
        extends: true,
        // The service's tests share a worker's module graph (isolate: false): the service's modules, the GraphQL
        // schema and PGlite's WebAssembly are loaded once per worker instead of once per file (about 1.5 s of CPU
        // each). Files still start their own servers and databases and close them; none mocks a module.
        // Every PostgreSQL connection runs one query at a time, as pg@9 demands: test/helpers/one-query-per-connection.ts.
        test: { name: 'service', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false, setupFiles: ['test/helpers/one-query-per-connection.ts'] },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED, execArgv: withoutNodeWebStorage } },
    ],
  },
});
