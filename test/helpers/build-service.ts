// vitest globalSetup (after build-sdk.ts: dist/ carries a copy of sdk/dist): tests that start the service as
// `npm start` does run the compiled dist/, so build it when it is missing or older than the sources.
import { build, distIsFresh } from '../../scripts/build.mjs';

export default function setup(): void {
  if (distIsFresh()) return;
  console.log('dist/ is missing or older than the sources: building the service (scripts/build.mjs)');
  // Under the build lock, like `npm start`: a start or another run building at the same moment is waited for.
  build({ ifStale: true });
}
