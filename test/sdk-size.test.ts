// The browser SDK's size budgets (extensions.md sections 4 and 11), on the build the service serves (the global
// setup rebuilds sdk/dist when the sources are newer): the core at most 8 KiB min+gzip, stub.js (loaded
// synchronously before it on IAB TCF pages) at most 1 KiB, tcf.js (the TCF CMP, TCF pages only) at most 24 KiB.
// bench/sdk-budget.mjs prints the same figures with brotli and anchors beside them.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const gzipped = (name: string) => gzipSync(readFileSync(new URL(`../sdk/dist/v2/${name}`, import.meta.url)), { level: 9 }).length;

describe('SDK v2 size budgets (min+gzip)', () => {
  it.each([
    ['consent.js', 8 * 1024],
    ['consent.mjs', 8 * 1024],
    // TCF's stub with the integrations' first-view defaults (section 12: the same file), within section 11's 1 KiB.
    ['stub.js', 1024],
    ['tcf.js', 24 * 1024],
  ])('%s is within %i bytes', (name, budget) => {
    expect(gzipped(name)).toBeLessThanOrEqual(budget);
  });
});
