// @vitest-environment happy-dom
// SDK v2 against the documented v2 answer (extensions.md sections 3 and 4): locale, receipts with locale and
// gpc, change events, Consent Mode, blocking, cookies, re-consent, GPC, hosted preferences, texts and UI.
import { afterEach, describe, expect, it, vi } from 'vitest';
import packageJson from '../package.json';
import { hook, json, posts, reset, shadow, toggle } from './helpers';
import { BASE, KEY, PROJECT, configV2, gtagCalls, loadV2, stubFetchV2 } from './v2-helpers';

// Every client is destroyed: a live one's MutationObserver would act on the next test's page.
const clients: { destroy(): void }[] = [];
function clear() {
  for (const c of clients.splice(0)) c.destroy();
  reset();
}
afterEach(() => {
  clear();
  delete (window as unknown as { dataLayer?: unknown }).dataLayer;
  Object.defineProperty(navigator, 'globalPrivacyControl', { value: undefined, configurable: true });
  document.documentElement.removeAttribute('lang');
  for (const c of document.cookie.split(';')) document.cookie = c.split('=')[0].trim() + '=;expires=Thu, 01 Jan 1970 00:00:00 GMT;path=/';
});

async function start(options: Record<string, unknown> = {}, routes: Parameters<typeof stubFetchV2>[0] = {}) {
  const calls = stubFetchV2(routes);
  const sdk = await loadV2();
  const client = await sdk.init({ publicKey: KEY, apiBaseUrl: BASE, ...options });
  clients.push(client);
  return { calls, client, sdk };
}

const click = (name: string) => hook(name)!.click();
const settle = () => new Promise((r) => setTimeout(r, 0));

function decide(choices: Record<string, boolean>, decidedAt = new Date().toISOString(), consentHash = 'consent-1') {
  localStorage.setItem(`consent:${PROJECT}`, JSON.stringify({ consentHash, versionNumber: 1, choices, decidedAt }));
}

it('SDK_VERSION matches sdk/package.json', async () => {
  const { SDK_VERSION } = await loadV2();
  expect(SDK_VERSION).toBe(packageJson.version);
});

describe('locale', () => {
  it('asks for the init option first, then <html lang>, then navigator.languages', async () => {
    let { calls } = await start({ locale: 'de-AT' });
    expect(calls[0]!.url).toBe(`${BASE}/api/sdk/v2/config?locale=de-AT`);
    clear();
    document.documentElement.lang = 'ar';
    ({ calls } = await start());
    expect(calls[0]!.url).toBe(`${BASE}/api/sdk/v2/config?locale=ar`);
    clear();
    document.documentElement.removeAttribute('lang');
    ({ calls } = await start());
    expect(calls[0]!.url).toBe(`${BASE}/api/sdk/v2/config?locale=${encodeURIComponent(navigator.languages[0]!)}`);
  });

  it('draws the answer: direction, language, UI strings and the privacy policy link in banner and dialog', async () => {
    const config = configV2({ locale: 'ar', dir: 'rtl', ui: { saveChoices: 'حفظ', privacyPolicy: 'سياسة الخصوصية', acceptAll: 'قبول الكل' }, notice: { acceptLabel: '' } });
    const { client } = await start({}, { config: () => json(200, config) });
    const wrap = shadow()!.querySelector('.w')!;
    expect(wrap.getAttribute('dir')).toBe('rtl');
    expect(wrap.getAttribute('lang')).toBe('ar');
    const link = () => shadow()!.querySelector<HTMLAnchorElement>('[data-consent="privacy-policy"]')!;
    expect(link().getAttribute('href')).toBe('https://shop.example/privacy');
    expect(link().textContent).toBe('سياسة الخصوصية');
    // An untranslated label comes empty: the UI string stands in; a translated one is kept.
    expect(hook('accept-all')!.textContent).toBe('قبول الكل');
    expect(hook('reject-all')!.textContent).toBe('Reject all');
    client.showPreferences();
    expect(hook('save')!.textContent).toBe('حفظ');
    expect(link().textContent).toBe('سياسة الخصوصية');
    // Unknown keys keep the built-in English.
    expect(hook('close')!.getAttribute('aria-label')).toBe('Close');
  });
});

describe('receipts and change events', () => {
  it('posts locale and gpc with the receipt, then tells onChange, on("change") and window "consent:change"', async () => {
    const onChange = vi.fn();
    const { calls, client } = await start({ onChange });
    const viaOn = vi.fn();
    const off = client.on('change', viaOn);
    const viaWindow = vi.fn();
    addEventListener('consent:change', (e) => viaWindow((e as CustomEvent).detail));
    expect(onChange).not.toHaveBeenCalled();

    click('accept-all');
    await vi.waitFor(() => expect(onChange).toHaveBeenCalledTimes(1));
    const body = posts(calls)[0]!.body!;
    expect(body).toMatchObject({ locale: 'en', gpc: false, sdkVersion: '2.0.0', choices: { necessary: true, analytics: true, marketing: true } });
    const state = onChange.mock.calls[0]![0];
    expect(state).toMatchObject({ needsConsent: false, locale: 'en', gpc: false, choices: { analytics: true, marketing: true } });
    expect(viaOn).toHaveBeenCalledWith(state);
    expect(viaWindow).toHaveBeenCalledWith(state);

    off();
    client.showPreferences();
    toggle('analytics').click();
    click('save');
    await vi.waitFor(() => expect(onChange).toHaveBeenCalledTimes(2));
    expect(onChange.mock.calls[1]![0].choices.analytics).toBe(false);
    expect(viaOn).toHaveBeenCalledTimes(1);
  });

  it('toggles are switches; required ones are on and cannot be changed', async () => {
    const { client } = await start();
    client.showPreferences();
    expect(toggle('analytics').getAttribute('role')).toBe('switch');
    expect(toggle('necessary').checked).toBe(true);
    expect(toggle('necessary').disabled).toBe(true);
    expect(toggle('analytics').checked).toBe(false);
  });
});

describe('Google Consent Mode v2', () => {
  it('without stored settings, writes the default at init and an update after the decision', async () => {
    await start();
    expect(gtagCalls()).toEqual([
      ['consent', 'default', { ad_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied', analytics_storage: 'denied', functionality_storage: 'denied', personalization_storage: 'denied', security_storage: 'granted', wait_for_update: 500 }],
    ]);
    shadow()!.querySelector<HTMLElement>('[data-consent="manage"]')!.click();
    toggle('analytics').click();
    click('save');
    await vi.waitFor(() => expect(gtagCalls()).toHaveLength(2));
    expect(gtagCalls()[1]).toEqual([
      'consent',
      'update',
      // functionality_storage has no purposes: denied; security_storage always granted.
      { ad_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied', analytics_storage: 'granted', functionality_storage: 'denied', personalization_storage: 'denied', security_storage: 'granted' },
    ]);
  });

  it('writes the default synchronously at script evaluation once enabled, and updates at init for a returning visitor', async () => {
    localStorage.setItem('consent:gcm', '1');
    decide({ necessary: true, analytics: false, marketing: true });
    stubFetchV2();
    const sdk = await loadV2();
    // Evaluated, not yet initialised: the default is already there.
    expect(gtagCalls().map((c) => c.slice(0, 2))).toEqual([['consent', 'default']]);
    clients.push(await sdk.init({ publicKey: KEY, apiBaseUrl: BASE }));
    expect(gtagCalls().map((c) => c.slice(0, 2))).toEqual([['consent', 'default'], ['consent', 'update']]);
    expect(gtagCalls()[1]![2]).toMatchObject({ ad_storage: 'granted', analytics_storage: 'denied' });
  });

  it('on a first visit, writes the default at evaluation when the script tag declares Consent Mode ("" or "true" only)', async () => {
    for (const [value, written] of [['', true], ['true', true], ['false', false], ['yes', false]] as const) {
      localStorage.clear();
      delete (window as unknown as { dataLayer?: unknown }).dataLayer;
      const tag = document.createElement('script');
      tag.setAttribute('data-google-consent-mode', value);
      document.head.append(tag);
      await loadV2();
      expect(gtagCalls().map((c) => c.slice(0, 2))).toEqual(written ? [['consent', 'default']] : []);
      tag.remove();
    }
  });

  it('init({ googleConsentMode: true }) writes the default before it returns, once, even before the options are checked', async () => {
    stubFetchV2();
    const sdk = await loadV2();
    expect(gtagCalls()).toEqual([]);
    const started = sdk.init({ publicKey: KEY, apiBaseUrl: BASE, googleConsentMode: true });
    expect(gtagCalls().map((c) => c.slice(0, 2))).toEqual([['consent', 'default']]);
    clients.push(await started);
    expect(gtagCalls().map((c) => c.slice(0, 2))).toEqual([['consent', 'default']]);
    // A bad key still gets the page its default (on a fresh module).
    delete (window as unknown as { dataLayer?: unknown }).dataLayer;
    const again = await loadV2();
    await expect(again.init({ publicKey: 'nope', googleConsentMode: true })).rejects.toMatchObject({ code: 'invalid_options' });
    expect(gtagCalls().map((c) => c.slice(0, 2))).toEqual([['consent', 'default']]);
  });

  it('does nothing when disabled, and forgets the stored switch', async () => {
    localStorage.setItem('consent:gcm', '1');
    const config = configV2({ experience: { googleConsentMode: { enabled: false, signals: {} } } });
    stubFetchV2({ config: () => json(200, config) });
    const sdk = await loadV2();
    (window as unknown as { dataLayer: unknown[] }).dataLayer = [];
    clients.push(await sdk.init({ publicKey: KEY, apiBaseUrl: BASE }));
    expect(gtagCalls()).toEqual([]);
    expect(localStorage.getItem('consent:gcm')).toBeNull();
  });
});

describe('blocking', () => {
  it('loads iframes and activates scripts when their purposes are granted, also ones added later', async () => {
    document.body.innerHTML = `
      <script type="text/plain" data-consent="analytics" id="a">window.ranA = (window.ranA || 0) + 1</script>
      <script type="text/plain" data-consent="analytics marketing" data-src="https://cdn.example/x.js" id="b"></script>
      <iframe data-consent="marketing" data-consent-src="https://video.example/embed" id="f"></iframe>`;
    await start();
    expect(document.getElementById('a')!.getAttribute('type')).toBe('text/plain');
    expect(document.getElementById('f')!.getAttribute('src')).toBeNull();

    shadow()!.querySelector<HTMLElement>('[data-consent="manage"]')!.click();
    toggle('analytics').click();
    click('save');
    await vi.waitFor(() => expect(document.getElementById('a')!.hasAttribute('type')).toBe(false));
    // Needs marketing too: still blocked; the iframe too.
    expect(document.getElementById('b')!.getAttribute('type')).toBe('text/plain');
    expect(document.getElementById('f')!.getAttribute('src')).toBeNull();

    const late = document.createElement('script');
    late.type = 'text/plain';
    late.dataset.consent = 'analytics';
    late.id = 'late';
    late.textContent = '1';
    document.body.append(late);
    await vi.waitFor(() => expect(document.getElementById('late')!.hasAttribute('type')).toBe(false));
  });

  it('unloads a withdrawn iframe and removes the withdrawn purpose’s cookies', async () => {
    decide({ necessary: true, analytics: true, marketing: true });
    document.body.innerHTML = '<iframe data-consent="marketing" data-consent-src="https://video.example/embed" id="f"></iframe>';
    const { client } = await start();
    expect(document.getElementById('f')!.getAttribute('src')).toBe('https://video.example/embed');
    document.cookie = '_ga=GA1.1.1;path=/';
    document.cookie = '_ga_ABC123=GS1.1;path=/';
    document.cookie = '_fbp=fb.1;path=/';
    document.cookie = 'basket=3;path=/';
    client.showPreferences();
    toggle('analytics').click();
    toggle('marketing').click();
    click('save');
    await vi.waitFor(() => expect(document.getElementById('f')!.getAttribute('src')).toBe('about:blank'));
    expect(document.cookie.split('; ').sort()).toEqual(['basket=3']);
  });
});

describe('re-consent and GPC', () => {
  it('asks again once reconsentAfterDays have passed since the decision', async () => {
    decide({ necessary: true, analytics: true, marketing: true }, new Date(Date.now() - 364 * 86_400_000).toISOString());
    let { client } = await start();
    expect(client.getConsent().needsConsent).toBe(false);
    clear();
    decide({ necessary: true, analytics: true, marketing: true }, new Date(Date.now() - 366 * 86_400_000).toISOString());
    ({ client } = await start());
    expect(client.getConsent().needsConsent).toBe(true);
    expect(client.hasConsent('analytics')).toBe(false);
    expect(hook('banner')).not.toBeNull();
  });

  it('under GPC, Accept all leaves the opt-out purposes denied and the receipt says gpc: true', async () => {
    Object.defineProperty(navigator, 'globalPrivacyControl', { value: true, configurable: true });
    const { calls, client } = await start();
    expect(hook('banner')!.querySelector('.gpc')).not.toBeNull();
    click('accept-all');
    await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
    expect(posts(calls)[0]!.body).toMatchObject({ gpc: true, choices: { necessary: true, analytics: true, marketing: false } });
    await settle();
    expect(client.getConsent()).toMatchObject({ gpc: true, choices: { marketing: false } });
  });
});

it('GPC switched on after a decision overrides its grants of the opt-out purposes; a choice made under GPC stands', async () => {
  decide({ necessary: true, analytics: true, marketing: true });
  Object.defineProperty(navigator, 'globalPrivacyControl', { value: true, configurable: true });
  const { client } = await start();
  expect(client.getConsent()).toMatchObject({ needsConsent: false, choices: { analytics: true, marketing: false } });
  client.showPreferences();
  expect(toggle('marketing').checked).toBe(false);
  toggle('marketing').click();
  click('save');
  await vi.waitFor(() => expect(client.hasConsent('marketing')).toBe(true));
});

describe('hosted preferences', () => {
  it('preferencesUrl carries the installation in the fragment; only then does the next init ask /decision', async () => {
    let { client, calls } = await start();
    const url = new URL(client.preferencesUrl());
    expect(url.origin + url.pathname).toBe(`${BASE}/preferences`);
    expect(url.searchParams.get('key')).toBe(KEY);
    expect(url.hash).toBe('#i=' + localStorage.getItem('consent:installationId'));
    expect(calls.some((c) => c.url.includes('/decision'))).toBe(false);

    // Next page load: the decision made on the hosted page is adopted.
    client.destroy();
    const remote = { versionId: 'ver_1', consentHash: 'consent-1', choices: { necessary: true, analytics: true, marketing: false }, createdAt: new Date().toISOString() };
    ({ client, calls } = await start({}, { decision: () => json(200, { decision: remote }) }));
    const asked = calls.filter((c) => c.url.endsWith('/api/sdk/v2/decision'));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.headers['X-Consent-Installation']).toBe(localStorage.getItem('consent:installationId'));
    expect(client.getConsent()).toMatchObject({ needsConsent: false, choices: { analytics: true, marketing: false } });
    expect(hook('banner')).toBeNull();

    // And never again without a new visit to the hosted page.
    client.destroy();
    ({ calls } = await start());
    expect(calls.some((c) => c.url.includes('/decision'))).toBe(false);
  });
});

describe('hosted preferences page', () => {
  it('records under the installation named in its fragment, only on the service’s own /preferences page', async () => {
    const happy = (window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM;
    const here = location.href;
    try {
      happy.setURL(`${BASE}/preferences?key=${KEY}#i=site-installation-1`);
      const { calls } = await start({ apiBaseUrl: undefined });
      click('accept-all');
      await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
      expect(posts(calls)[0]!.body!.installationId).toBe('site-installation-1');
      await vi.waitFor(() => expect(hook('banner')).toBeNull());
      clear();
      // Any other page (here: another path of the same origin) keeps its own installation; on the service's
      // origin, one of this project's own (every operator's hosted page is there: never one id for all of them).
      happy.setURL(`${BASE}/elsewhere#i=site-installation-1`);
      localStorage.setItem('consent:installationId', 'origin-wide-installation');
      const other = await start({ apiBaseUrl: undefined });
      click('accept-all');
      await vi.waitFor(() => expect(posts(other.calls)).toHaveLength(1));
      const own = posts(other.calls)[0]!.body!.installationId;
      expect(own).toBe(localStorage.getItem(`consent:installationId:${PROJECT}`));
      expect(own).toMatch(/^[A-Za-z0-9_-]{22}$/);
    } finally {
      happy.setURL(here);
    }
  });
});

describe('accessibility', () => {
  it('puts the banner first in the tab order as a labelled region and announces it', async () => {
    document.body.innerHTML = '<a href="#x" id="first">first</a>';
    await start();
    const host = document.getElementById('consent-sdk-root')!;
    expect(document.body.firstElementChild).toBe(host);
    const banner = hook('banner')!;
    expect(banner.tagName).toBe('SECTION');
    expect(shadow()!.getElementById(banner.getAttribute('aria-labelledby')!)!.textContent).toBe('We value your privacy');
    await vi.waitFor(() => expect(shadow()!.querySelector('[aria-live]')!.textContent).toContain('We value your privacy'));
  });

  it('returns focus to the page button that opened the dialog, after a decision and after Escape', async () => {
    decide({ necessary: true, analytics: false, marketing: false });
    document.body.innerHTML = '<button id="open">Cookie settings</button>';
    const { client } = await start();
    const open = document.getElementById('open')!;
    open.focus();
    client.showPreferences();
    expect(shadow()!.activeElement).toBe(hook('dialog'));
    click('save');
    await vi.waitFor(() => expect(document.activeElement).toBe(open));
    client.showPreferences();
    hook('dialog')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    expect(hook('dialog')).toBeNull();
    expect(document.activeElement).toBe(open);
  });
});
