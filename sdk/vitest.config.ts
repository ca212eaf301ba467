// `npx vitest run --config sdk/vitest.config.ts` from the repo root. The test files also name their
// environment themselves, so `npx vitest run sdk/test` works without this file.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { withoutNodeWebStorage } from '../vitest.config.js';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['test/**/*.test.ts'],
    environment: 'happy-dom',
    // Node 25+'s own localStorage would hide happy-dom's: ../vitest.config.ts.
    execArgv: withoutNodeWebStorage,
  },
});
