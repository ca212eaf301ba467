// @consent/core as built (the global setup rebuilds sdk/core/dist when stale): its size budget (extensions.md section
// 13: the core without TCF at most 12 KiB min+gzip; bench/core-budget.ts prints the same figure), a version in step
// with its package.json, and no browser global: it runs here, in Node, where there is no window or document.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadCore } from './helpers/core.js';

const dist = (name: string) => readFileSync(new URL(`../sdk/core/dist/${name}`, import.meta.url), 'utf8');

describe('@consent/core, built', () => {
  it('is at most 12 KiB min+gzip without TCF, with the IAB libraries in a chunk it loads only on demand', () => {
    const index = dist('index.mjs');
    const chunks = [...index.matchAll(/from"\.\/(chunk-[\w-]+\.mjs)"/g)].map((m) => m[1]!);
    const gz = [index, ...chunks.map(dist)].reduce((sum, text) => sum + gzipSync(text, { level: 9 }).length, 0);
    expect(gz).toBeLessThanOrEqual(12 * 1024);
    // The IAB chunk is reached only through import(), and the core's own files hold none of the IAB's code.
    expect(index).toMatch(/import\("\.\/tcf\.mjs"\)/);
    for (const text of [index, ...chunks.map(dist)]) expect(text).not.toMatch(/TCModel|GppModel/);
  });

  it('reports the version of its package.json, and has no DOM of its own to touch', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../sdk/core/package.json', import.meta.url), 'utf8'));
    const core = await loadCore();
    expect(core.CORE_VERSION).toBe(version);
    expect('window' in globalThis || 'document' in globalThis).toBe(false);
  });
});
