// @vitest-environment happy-dom
// `useConsent` from `@consent/sdk/react` in a real React tree: false before a decision, then re-rendered by
// the SDK's consent:ready and consent:change events.
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { act } from 'react';
import { afterEach, expect, it } from 'vitest';
import { hook, reset } from './helpers';
import { BASE, KEY, loadV2, stubFetchV2 } from './v2-helpers';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
afterEach(reset);

it('renders false before a decision and true once the visitor accepts', async () => {
  const { useConsent } = await import('../src/v2/react');
  const seen: boolean[] = [];
  function Video() {
    const allowed = useConsent('analytics');
    seen.push(allowed);
    return createElement('p', { id: 'video' }, allowed ? 'playing' : 'needs consent');
  }
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  await act(async () => root.render(createElement(Video)));
  expect(container.textContent).toBe('needs consent');

  stubFetchV2();
  const { init } = await loadV2();
  const client = await act(() => init({ publicKey: KEY, apiBaseUrl: BASE }));
  expect(container.textContent).toBe('needs consent');
  await act(async () => {
    hook('accept-all')!.click();
    await new Promise((r) => setTimeout(r, 20));
  });
  expect(container.textContent).toBe('playing');
  expect(seen.at(-1)).toBe(true);
  client.destroy();
  await act(async () => root.unmount());
});
