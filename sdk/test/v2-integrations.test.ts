// @vitest-environment happy-dom
// SDK v2's client.decorate(url) and the types stub.js remembers (extensions.md section 12); the vendors' calls
// themselves are asserted in Chromium with their official snippets (test/e2e/sdk-v2-integrations.test.ts).
import { afterEach, expect, it } from 'vitest';
import { json, reset } from './helpers';
import { BASE, KEY, configV2, loadV2, stubFetchV2 } from './v2-helpers';

const clients: { destroy(): void }[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.destroy();
  reset();
});

async function start(experience: Record<string, unknown> = {}) {
  stubFetchV2({ config: () => json(200, configV2({ experience })) });
  const sdk = await loadV2();
  const client = await sdk.init({ publicKey: KEY, apiBaseUrl: BASE });
  clients.push(client);
  return client;
}

it('decorate(url) adds the installation at the end of the fragment, keeping the one the link had', async () => {
  const client = await start();
  const id = localStorage.getItem('consent:installationId') ?? client.decorate('https://x.example/').split('#i=')[1];
  expect(client.decorate('https://shop.example.de/cart?step=2')).toBe(`https://shop.example.de/cart?step=2#i=${id}`);
  expect(client.decorate('https://shop.example.de/cart#summary')).toBe(`https://shop.example.de/cart#summary&i=${id}`);
  // Relative links resolve against the page, as the browser would follow them.
  expect(client.decorate('/faq')).toBe(`${location.origin}/faq#i=${id}`);
  // The first test of a file pays for loading the modules: a loaded machine must not fail it.
}, 30_000);

it('remembers the configured types for the next page’s stub.js, and forgets them when the configuration has none', async () => {
  const integrations = [{ type: 'microsoft-uet', signals: { ad_storage: ['marketing'] } }, { type: 'meta-pixel', signals: { consent: ['marketing'] } }];
  let client = await start({ integrations });
  expect(localStorage.getItem('consent:integrations')).toBe('microsoft-uet meta-pixel');
  // The denied defaults where stub.js did not write them (no decision yet).
  expect((window as unknown as { uetq: unknown[] }).uetq).toEqual(['consent', 'default', { ad_storage: 'denied' }]);
  client.destroy();
  client = await start();
  // Otherwise stub.js would keep denying a vendor no update ever reaches again.
  expect(localStorage.getItem('consent:integrations')).toBeNull();
}, 30_000);
