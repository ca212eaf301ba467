// @vitest-environment happy-dom
// The banner and dialog: isolation, accessibility hooks, keyboard use, and the notice's labels.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BASE, KEY, configBody, hook, json, loadSdk, reset, shadow, storeDecision, stubFetch, toggle } from './helpers';

afterEach(reset);

async function start(config = configBody()) {
  stubFetch({ config: () => json(200, config) });
  const { init } = await loadSdk();
  return init({ publicKey: KEY, apiBaseUrl: BASE });
}

const key = (name: string, shiftKey = false) => {
  const target = shadow()!.activeElement ?? hook('dialog')!;
  target.dispatchEvent(new KeyboardEvent('keydown', { key: name, shiftKey, bubbles: true, composed: true, cancelable: true }));
};

describe('host element', () => {
  it('is a fixed, zero-sized host with an open shadow root at the end of body', async () => {
    document.body.innerHTML = '<main>page</main>';
    await start();
    const host = document.getElementById('consent-sdk-root')!;
    expect(document.body.lastElementChild).toBe(host);
    expect(host.style.position).toBe('fixed');
    expect(host.style.width).toBe('0px');
    expect(host.shadowRoot?.mode).toBe('open');
    // The page's own elements are untouched and nothing of ours is in the light DOM.
    expect(host.children).toHaveLength(0);
    expect(document.querySelector('main')!.textContent).toBe('page');
  });

  it('applies primaryColor with readable text, and ignores a malformed colour', async () => {
    await start(configBody({ notice: { primaryColor: '#ffee00' } }));
    const host = document.getElementById('consent-sdk-root')!;
    expect(host.style.getPropertyValue('--cs-primary')).toBe('#ffee00');
    expect(host.style.getPropertyValue('--cs-on-primary')).toBe('#000');
    expect(hook('accept-all')!.className).toBe('primary');

    reset();
    await start(configBody({ notice: { primaryColor: 'red;}body{display:none' } }));
    expect(document.getElementById('consent-sdk-root')!.style.getPropertyValue('--cs-primary')).toBe('');
  });
});

describe('banner', () => {
  it('is a labelled region with the notice texts and three buttons', async () => {
    await start();
    const banner = hook('banner')!;
    expect(banner.getAttribute('role')).toBe('region');
    expect(banner.getAttribute('aria-label')).toBe('We value your privacy');
    expect(banner.textContent).toContain('We use cookies.');
    expect(banner.textContent).toContain('Shop Inc.');
    expect(hook('accept-all')!.textContent).toBe('Accept all');
    expect(hook('reject-all')!.textContent).toBe('Reject all');
    expect(hook('manage')!.textContent).toBe('Manage');
    expect(banner.querySelector('img')).toBeNull();
  });

  it('shows an https logo, and renders config text as text, never HTML', async () => {
    await start(configBody({ notice: { logoUrl: 'https://cdn.example/logo.png', title: '<img src=x onerror=alert(1)>' } }));
    const img = hook('banner')!.querySelector('img')!;
    expect(img.getAttribute('src')).toBe('https://cdn.example/logo.png');
    expect(img.getAttribute('alt')).toBe('');
    expect(hook('banner')!.querySelectorAll('img')).toHaveLength(1);
    expect(hook('banner')!.querySelector('h2')!.textContent).toBe('<img src=x onerror=alert(1)>');
  });
});

describe('preferences dialog', () => {
  it('is a labelled modal dialog that replaces the banner while open', async () => {
    await start();
    hook('manage')!.focus();
    hook('manage')!.click();
    const dialog = hook('dialog')!;
    expect(hook('banner')).toBeNull();
    expect(dialog.getAttribute('role')).toBe('dialog');
    expect(dialog.getAttribute('aria-modal')).toBe('true');
    const title = shadow()!.getElementById(dialog.getAttribute('aria-labelledby')!)!;
    expect(title.textContent).toBe('We value your privacy');
    expect(hook('close')!.getAttribute('aria-label')).toBe('Close');
    expect(shadow()!.activeElement).toBe(dialog);
    // Each hook names one element.
    expect(shadow()!.querySelectorAll('[data-consent="accept-all"]')).toHaveLength(1);
  });

  it('groups purposes by category and sorts both by sortOrder; required ones are on and locked', async () => {
    await start();
    hook('manage')!.click();
    const groups = [...shadow()!.querySelectorAll('fieldset')].map((f) => [
      f.querySelector('legend')!.textContent,
      [...f.querySelectorAll('input')].map((i) => i.dataset.purpose),
    ]);
    expect(groups).toEqual([
      ['Essential', ['necessary']],
      ['Statistics', ['analytics', 'marketing']],
    ]);
    expect(toggle('necessary').checked).toBe(true);
    expect(toggle('necessary').disabled).toBe(true);
    expect(toggle('necessary').closest('label')!.textContent).toContain('Always on');
    expect(toggle('analytics').checked).toBe(false);
    expect(toggle('analytics').disabled).toBe(false);
    expect(toggle('analytics').closest('label')!.textContent).toContain('Analytics');
  });

  it('reflects the current decision when opened later', async () => {
    storeDecision({ necessary: true, analytics: true, marketing: false });
    const client = await start();
    client.showPreferences();
    expect(toggle('analytics').checked).toBe(true);
    expect(toggle('marketing').checked).toBe(false);
  });

  it('Escape closes it and gives focus back to the banner', async () => {
    await start();
    hook('manage')!.focus();
    hook('manage')!.click();
    key('Escape');
    expect(hook('dialog')).toBeNull();
    expect(hook('banner')).not.toBeNull();
    expect(shadow()!.activeElement).toBe(hook('manage'));
  });

  it('Escape gives focus back to the page element that opened it', async () => {
    storeDecision({ necessary: true, analytics: false, marketing: false });
    const client = await start();
    const link = document.createElement('button');
    document.body.prepend(link);
    link.focus();
    client.showPreferences();
    expect(document.activeElement).not.toBe(link);
    key('Escape');
    expect(hook('dialog')).toBeNull();
    expect(hook('banner')).toBeNull();
    expect(document.activeElement).toBe(link);
  });

  it('the close button closes without posting', async () => {
    const client = await start();
    const fetchCalls = vi.mocked(fetch).mock.calls.length;
    client.showPreferences();
    hook('close')!.click();
    expect(hook('dialog')).toBeNull();
    expect(vi.mocked(fetch).mock.calls.length).toBe(fetchCalls);
  });

  it('Tab and Shift+Tab cycle inside the dialog', async () => {
    const client = await start();
    client.showPreferences();
    const items = [...hook('dialog')!.querySelectorAll<HTMLElement>('button, input:not(:disabled)')];
    const first = items[0];
    const last = items[items.length - 1];
    expect(first).toBe(hook('close'));
    expect(last).toBe(hook('save'));

    key('Tab', true); // from the dialog itself
    expect(shadow()!.activeElement).toBe(last);
    key('Tab');
    expect(shadow()!.activeElement).toBe(first);
    key('Tab', true);
    expect(shadow()!.activeElement).toBe(last);
  });
});
