import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Node resolves `graphql` to its CommonJS build for the libraries; make our own files
  // use the same copy (Vite would pick the .mjs one and graphql refuses two realms).
  resolve: { alias: [{ find: /^graphql$/, replacement: fileURLToPath(new URL('node_modules/graphql/index.js', import.meta.url)) }] },
  test: {
    include: ['test/**/*.test.ts', 'sdk/test/**/*.test.ts'],
    // The service serves sdk/dist and console/dist: rebuild them first when their sources are newer; then the service's
    // dist/ (tests start it as `npm start` does) when stale. Chromium for the browser tests: found, or
    // installed from Debian when missing and running as root. One migrated database image per run, cloned
    // by every test server (test/helpers/database-image.ts).
    globalSetup: ['test/helpers/build-sdk.ts', 'test/helpers/build-console.ts', 'test/helpers/build-service.ts', 'test/helpers/chromium.ts', 'test/helpers/database-image.ts'],
    // Each file starts its own server and database; two cores, so keep parallelism modest.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
