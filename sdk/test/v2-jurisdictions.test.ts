// @vitest-environment happy-dom
// SDK v2 by jurisdiction (extensions.md section 6, wire shapes in the config answer: `mode`, `jurisdiction`,
// `experience.gpp`): the four modes, receipts with jurisdiction/action/gpp, Consent Mode in every mode, the
// `__gpp` CMP API (stub in core, gpp.ts on top), and the GPP string decoded with the IAB's own library.
import { GppModel } from '@iabgpp/cmpapi';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hook, json, posts, reset, shadow, toggle } from './helpers';
import { BASE, GEO_UI, KEY, PROJECT, configV2, gtagCalls, loadV2, stubFetchV2 } from './v2-helpers';

type Gpp = (command: string, callback?: (data: any, success: boolean) => void, parameter?: unknown) => unknown;
const w = window as unknown as { __gpp?: Gpp; ConsentGpp?: unknown; dataLayer?: unknown };

const clients: { destroy(): void }[] = [];
function clear() {
  for (const c of clients.splice(0)) c.destroy();
  reset();
  delete w.__gpp;
  delete w.ConsentGpp;
  delete w.dataLayer;
}
afterEach(() => {
  clear();
  Object.defineProperty(navigator, 'globalPrivacyControl', { value: undefined, configurable: true });
});

const CA = { code: 'US-CA', rule: 'us-state-privacy' };
const gpcOn = () => Object.defineProperty(navigator, 'globalPrivacyControl', { value: true, configurable: true });

/**
 * Loads the SDK (its evaluation installs the `__gpp` stub), then makes gpp.ts available as gpp.js would
 * (`window.ConsentGpp`, which the core uses instead of loading the file), unless `gppFile` is false.
 * `before` runs between the two: a tag calling the stub before init.
 */
async function start(config: ReturnType<typeof configV2>, options: { before?: () => void; gppFile?: boolean; consent?: Parameters<typeof stubFetchV2>[0]['consent'] } = {}) {
  const calls = stubFetchV2({ config: () => json(200, config), consent: options.consent });
  const sdk = await loadV2();
  options.before?.();
  if (options.gppFile !== false) w.ConsentGpp = await import('../src/v2/gpp');
  const client = await sdk.init({ publicKey: KEY, apiBaseUrl: BASE });
  clients.push(client);
  return { calls, client };
}

const optOut = (over: Parameters<typeof configV2>[0] = {}) => configV2({ mode: 'opt-out', jurisdiction: CA, ui: GEO_UI, ...over });
const click = (name: string) => hook(name)!.click();
const actions = () => [...shadow()!.querySelectorAll('[data-consent="banner"] button')].map((b) => b.getAttribute('data-consent'));
/** `__gpp(command, ..., parameter)` answered through its callback. */
const gpp = (command: string, parameter?: unknown) => new Promise<any>((resolve) => w.__gpp!(command, (data) => resolve(data), parameter));
const ready = () => vi.waitFor(async () => expect((await gpp('ping')).signalStatus).toBe('ready'));
/** The GPP string decoded by the IAB's library: `section.field` → value. */
const decoded = (gppString: string, section: string, field: string) => new GppModel(gppString).getFieldValue(section, field);
const lastUpdate = () => gtagCalls().filter((c) => c[1] === 'update').at(-1)?.[2];

describe('opt-out (a US state with a privacy law)', () => {
  it('grants optional purposes, shows the notice with Do Not Sell, and opting out records action opt_out with its GPP string', async () => {
    const { calls, client } = await start(optOut());
    expect(client.getConsent()).toMatchObject({ mode: 'opt-out', jurisdiction: 'US-CA', needsConsent: true, choices: { necessary: true, analytics: true, marketing: true } });
    expect(actions()).toEqual(['do-not-sell', 'ok', 'manage']);
    expect(hook('do-not-sell')!.textContent).toBe('Do Not Sell or Share My Personal Information');
    expect(hook('ok')!.textContent).toBe('Got it');
    // Consent Mode follows the grants without a decision.
    expect(lastUpdate()).toMatchObject({ ad_storage: 'granted', analytics_storage: 'granted' });
    // GPP before any decision: not opted out, notices given, ready.
    await ready();
    const ping = await gpp('ping');
    expect(ping).toMatchObject({ gppVersion: '1.1', cmpStatus: 'loaded', cmpDisplayStatus: 'visible', applicableSections: [7], sectionList: [7, 8] });
    expect(ping.supportedAPIs).toEqual(['7:usnat', '8:usca']);
    expect(await gpp('getField', 'usnat.SaleOptOut')).toBe(2);
    expect(await gpp('hasSection', 'usca')).toBe(true);
    expect(await gpp('hasSection', 'usva')).toBe(false);

    click('do-not-sell');
    await vi.waitFor(() => expect(client.getConsent().needsConsent).toBe(false));
    const body = posts(calls)[0]!.body!;
    // Do Not Sell denies gpc.optOutPurposes (marketing) and keeps the rest as they were.
    expect(body).toMatchObject({ jurisdiction: 'US-CA', action: 'opt_out', gpc: false, choices: { necessary: true, analytics: true, marketing: false } });
    const string = body.gpp as string;
    expect(string).toMatch(/^[A-Za-z0-9_~.-]+$/);
    for (const section of ['usnat', 'usca']) {
      expect(decoded(string, section, 'SaleOptOut')).toBe(1);
      expect(decoded(string, section, 'SharingOptOut')).toBe(1);
      expect(decoded(string, section, 'SaleOptOutNotice')).toBe(1);
      expect(decoded(string, section, 'SharingOptOutNotice')).toBe(1);
      expect(decoded(string, section, 'Gpc')).toBe(false);
      expect(decoded(string, section, 'MspaCoveredTransaction')).toBe(2);
      expect(decoded(string, section, 'MspaOptOutOptionMode')).toBe(0);
      expect(decoded(string, section, 'MspaServiceProviderMode')).toBe(0);
    }
    expect(decoded(string, 'usnat', 'TargetedAdvertisingOptOut')).toBe(1);
    expect(decoded(string, 'usnat', 'TargetedAdvertisingOptOutNotice')).toBe(1);
    expect(decoded(string, 'usnat', 'SharingNotice')).toBe(1);
    // Not collected by the SDK: not applicable.
    expect(decoded(string, 'usnat', 'SensitiveDataProcessingOptOutNotice')).toBe(0);
    expect(decoded(string, 'usnat', 'PersonalDataConsents')).toBe(0);

    // The page's __gpp now carries the same string, and the banner is gone.
    await vi.waitFor(async () => expect((await gpp('ping')).gppString).toBe(string));
    expect((await gpp('ping')).cmpDisplayStatus).toBe('hidden');
    expect(await gpp('getField', 'usca.SaleOptOut')).toBe(1);
    expect((await gpp('getSection', 'usnat')).SaleOptOut).toBe(1);
    expect(hook('banner')).toBeNull();
    expect(lastUpdate()).toMatchObject({ ad_storage: 'denied', analytics_storage: 'granted' });
  });

  it('with an empty gpc.optOutPurposes, Do Not Sell denies every optional purpose', async () => {
    const { calls } = await start(optOut({ experience: { gpc: { optOutPurposes: [] } } }));
    click('do-not-sell');
    await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
    expect(posts(calls)[0]!.body).toMatchObject({ action: 'opt_out', choices: { necessary: true, analytics: false, marketing: false } });
  });

  it('with GPC: opted out before anything, recorded once as action gpc, and the notice says "Opt-Out Request Honored"', async () => {
    gpcOn();
    let { calls, client } = await start(optOut());
    expect(client.getConsent()).toMatchObject({ gpc: true, choices: { analytics: true, marketing: false } });
    expect(lastUpdate()).toMatchObject({ ad_storage: 'denied', analytics_storage: 'granted' });
    expect(actions()).toEqual(['ok', 'manage']);
    expect(hook('opt-out-honored')!.textContent).toBe('Opt-Out Request Honored');
    await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
    const body = posts(calls)[0]!.body!;
    expect(body).toMatchObject({ jurisdiction: 'US-CA', action: 'gpc', gpc: true, choices: { necessary: true, analytics: true, marketing: false } });
    expect(decoded(body.gpp as string, 'usnat', 'Gpc')).toBe(true);
    expect(decoded(body.gpp as string, 'usca', 'Gpc')).toBe(true);
    expect(decoded(body.gpp as string, 'usnat', 'SaleOptOut')).toBe(1);
    // The record does not dismiss the notice: the visitor does.
    expect(client.getConsent().needsConsent).toBe(true);
    client.showPreferences();
    expect(hook('opt-out-honored')).not.toBeNull();
    expect(toggle('marketing').checked).toBe(false);
    hook('dialog')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    click('ok');
    expect(client.getConsent().needsConsent).toBe(false);
    expect(hook('banner')).toBeNull();

    // Next page: no banner, no second receipt.
    client.destroy();
    const stored = localStorage.getItem(`consent:${PROJECT}`);
    clients.length = 0;
    reset();
    localStorage.setItem(`consent:${PROJECT}`, stored!);
    localStorage.setItem(`consent:notice:${PROJECT}`, 'opt-out consent-1');
    ({ calls, client } = await start(optOut()));
    expect(hook('banner')).toBeNull();
    await ready();
    expect(posts(calls)).toHaveLength(0);
  });

  it('dismissing the notice records nothing and keeps it away for this mode and consentHash', async () => {
    const { calls, client } = await start(optOut());
    click('ok');
    expect(hook('banner')).toBeNull();
    expect(client.getConsent()).toMatchObject({ needsConsent: false, choices: { analytics: true, marketing: true } });
    expect(localStorage.getItem(`consent:notice:${PROJECT}`)).toBe('opt-out consent-1');
    await ready();
    expect(posts(calls)).toHaveLength(0);
    expect(await gpp('getField', 'usnat.SaleOptOut')).toBe(2);
  });

  it('writes the operator’s MSPA settings', async () => {
    const { calls } = await start(optOut({ jurisdiction: { code: 'US-VA', rule: 'us-state-privacy' }, experience: { gpp: { mspaCoveredTransaction: true, mspaMode: 'service-provider' } } }));
    click('do-not-sell');
    await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
    const string = posts(calls)[0]!.body!.gpp as string;
    expect(new GppModel(string).getSectionIds()).toEqual([7, 9]);
    for (const section of ['usnat', 'usva']) {
      expect(decoded(string, section, 'MspaCoveredTransaction')).toBe(1);
      expect(decoded(string, section, 'MspaServiceProviderMode')).toBe(1);
      expect(decoded(string, section, 'MspaOptOutOptionMode')).toBe(2);
      expect(decoded(string, section, 'SaleOptOut')).toBe(1);
    }
  });

  it('gpp.sections "state": California gets usca, Virginia usva, in place of usnat; a state without a section gets usnat (decoded by @iabgpp/cmpapi)', async () => {
    const { encode } = await import('../src/v2/gpp');
    const gppOf = (code: string, sections?: 'national' | 'state') =>
      new GppModel(encode({ jurisdiction: { code, rule: 'us' }, experience: { gpp: { mspaCoveredTransaction: false, mspaMode: 'none', sections } } } as never, true, false));
    for (const [code, id, name] of [['US-CA', 8, 'usca'], ['US-VA', 9, 'usva']] as const) {
      const state = gppOf(code, 'state');
      expect(state.getSectionIds()).toEqual([id]);
      expect(state.getFieldValue(name, 'SaleOptOut')).toBe(1);
      expect(state.hasSection('usnat')).toBe(false);
      // national (the default, absent or said): usnat in force, the state's section beside it.
      expect(gppOf(code).getSectionIds()).toEqual([7, id]);
      expect(gppOf(code, 'national').getSectionIds()).toEqual([7, id]);
    }
    const washington = gppOf('US-WA', 'state');
    expect(washington.getSectionIds()).toEqual([7]);
    expect(washington.getFieldValue('usnat', 'SaleOptOut')).toBe(1);
  });

  it('gpp.sections "state" publishes the state’s section as the one that applies', async () => {
    await start(optOut({ jurisdiction: { code: 'US-CA', rule: 'us-state-privacy' }, experience: { gpp: { mspaCoveredTransaction: false, mspaMode: 'none', sections: 'state' } } }));
    await ready();
    const ping = await gpp('ping');
    expect(ping).toMatchObject({ applicableSections: [8], supportedAPIs: ['8:usca'] });
    expect(await gpp('hasSection', 'usnat')).toBe(false);
  });

  it('a state without its own IAB section gets usnat only; calls made to the stub before init are answered', async () => {
    const early: any[] = [];
    await start(optOut({ jurisdiction: { code: 'US-WA', rule: 'west' } }), {
      before: () => {
        expect((w.__gpp!('ping', (d) => early.push(['ping', d.cmpStatus]), undefined) as unknown) ?? null).toBeNull();
        // The stub registers a listener at once (a new id), and the IAB library adopts it later.
        w.__gpp!('addEventListener', (d) => early.push(['event', d.eventName, d.data, d.listenerId, d.pingData.signalStatus]));
        expect(early.at(-1)).toEqual(['event', 'listenerRegistered', true, 1, 'not ready']);
        w.__gpp!('getField', (d) => early.push(['field', d]), 'usnat.SaleOptOut');
      },
    });
    await ready();
    expect(early).toEqual([
      ['ping', 'stub'],
      ['event', 'listenerRegistered', true, 1, 'not ready'],
      ['event', 'cmpDisplayStatus', 'visible', 1, 'not ready'],
      ['event', 'cmpStatus', 'loaded', 1, 'not ready'],
      ['event', 'sectionChange', 'usnat', 1, 'not ready'],
      ['event', 'signalStatus', 'ready', 1, 'ready'],
      ['field', 2],
    ]);
    expect((await gpp('ping')).sectionList).toEqual([7]);
  });

  it('the stub removes its own listeners at once, by listenerId', async () => {
    await loadV2();
    const heard: any[] = [];
    w.__gpp!('addEventListener', (d) => heard.push(d));
    w.__gpp!('addEventListener', (d) => heard.push(d));
    expect(heard.map((d) => d.listenerId)).toEqual([1, 2]);
    w.__gpp!('removeEventListener', (d) => heard.push(d), 1);
    w.__gpp!('removeEventListener', (d) => heard.push(d), 1);
    expect(heard.slice(2).map((d) => [d.eventName, d.listenerId, d.data, d.pingData.cmpStatus])).toEqual([
      ['listenerRemoved', 1, true, 'stub'],
      ['listenerRemoved', 1, false, 'stub'],
    ]);
    expect((w.__gpp!('events') as { id: number }[]).map((e) => e.id)).toEqual([2]);
  });

  it('answers frames through postMessage, found by the __gppLocator frame', async () => {
    await start(optOut());
    await ready();
    expect(document.querySelector('iframe[name="__gppLocator"]')).not.toBeNull();
    const answers: unknown[] = [];
    const source = { postMessage: (message: unknown) => answers.push(message) };
    dispatchEvent(new MessageEvent('message', { data: { __gppCall: { command: 'getField', parameter: 'usnat.SaleOptOut', callId: 'a1', version: '1.1' } }, source: source as never }));
    dispatchEvent(new MessageEvent('message', { data: JSON.stringify({ __gppCall: { command: 'ping', callId: 7 } }), source: source as never }));
    dispatchEvent(new MessageEvent('message', { data: 'not json', source: source as never }));
    // Earlier tests' copies of gpp.ts listen on this window too (a page has one), and answer the same.
    const distinct = () => [...new Set(answers.map((a) => (typeof a == 'string' ? a : JSON.stringify(a))))];
    await vi.waitFor(() => expect(distinct()).toHaveLength(2));
    expect(JSON.parse(distinct()[0]!)).toEqual({ __gppReturn: { returnValue: 2, success: true, callId: 'a1' } });
    expect(typeof answers.at(-1)).toBe('string');
    expect(JSON.parse(distinct()[1]!).__gppReturn).toMatchObject({ callId: 7, success: true, returnValue: { signalStatus: 'ready', applicableSections: [7] } });
  });

  it('receipts go without gpp when gpp.js cannot load', async () => {
    const { calls } = await start(optOut(), { gppFile: false });
    document.head.querySelector<HTMLScriptElement>('script[src$="/sdk/v2/gpp.js"]')!.dispatchEvent(new Event('error'));
    click('do-not-sell');
    await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
    expect(posts(calls)[0]!.body!.gpp).toBeUndefined();
    expect(posts(calls)[0]!.body).toMatchObject({ action: 'opt_out', jurisdiction: 'US-CA' });
  });
});

describe('notice, none and opt-in', () => {
  it('notice: informs with one dismiss button, grants optional purposes, no GPP', async () => {
    let late: unknown;
    const { calls, client } = await start(configV2({ mode: 'notice', jurisdiction: { code: 'BR', rule: 'br' }, ui: GEO_UI }), {
      before: () => w.__gpp!('getField', (data, ok) => (late = [data, ok]), 'usnat.SaleOptOut'),
    });
    expect(actions()).toEqual(['ok']);
    expect(client.getConsent()).toMatchObject({ mode: 'notice', jurisdiction: 'BR', needsConsent: true, choices: { analytics: true, marketing: true } });
    expect(lastUpdate()).toMatchObject({ ad_storage: 'granted', analytics_storage: 'granted' });
    // No GPP outside opt-out: queued calls fail and __gpp is gone.
    expect(late).toEqual([null, false]);
    expect(w.__gpp).toBeUndefined();
    click('ok');
    expect(hook('banner')).toBeNull();
    // A choice made in the dialog is a decision like any other.
    client.showPreferences();
    toggle('marketing').click();
    click('save');
    await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
    expect(posts(calls)[0]!.body).toMatchObject({ jurisdiction: 'BR', action: 'custom', choices: { analytics: true, marketing: false } });
    expect(posts(calls)[0]!.body!.gpp).toBeUndefined();
  });

  it('none: shows nothing and grants nothing optional; Consent Mode says so', async () => {
    const { client } = await start(configV2({ mode: 'none', jurisdiction: null }));
    expect(hook('banner')).toBeNull();
    expect(client.getConsent()).toMatchObject({ mode: 'none', jurisdiction: null, needsConsent: false, choices: { necessary: true, analytics: false, marketing: false } });
    expect(lastUpdate()).toMatchObject({ ad_storage: 'denied', analytics_storage: 'denied' });
  });

  it('opt-in: today’s banner; receipts carry the jurisdiction and the action, no gpp', async () => {
    const { calls, client } = await start(configV2({ mode: 'opt-in', jurisdiction: { code: 'DE', rule: 'eea-uk-ch' } }));
    expect(actions()).toEqual(['reject-all', 'accept-all', 'manage']);
    expect(client.getConsent()).toMatchObject({ mode: 'opt-in', choices: { analytics: false } });
    expect(lastUpdate()).toBeUndefined();
    click('reject-all');
    await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
    expect(posts(calls)[0]!.body).toMatchObject({ jurisdiction: 'DE', action: 'reject_all', choices: { analytics: false, marketing: false } });
    expect('gpp' in posts(calls)[0]!.body!).toBe(false);
  });

  it('an answer without mode (or with an unknown one) is opt-in, and the receipt has no jurisdiction', async () => {
    for (const config of [configV2(), configV2({ mode: 'strict' })]) {
      const { calls, client } = await start(config);
      expect(client.getConsent()).toMatchObject({ mode: 'opt-in', jurisdiction: null });
      click('accept-all');
      await vi.waitFor(() => expect(posts(calls)).toHaveLength(1));
      expect(posts(calls)[0]!.body).toMatchObject({ action: 'accept_all' });
      expect(Object.keys(posts(calls)[0]!.body!)).not.toContain('jurisdiction');
      clear();
    }
  });
});

describe('a stored decision when the mode changes', () => {
  const store = (mode: string | undefined, choices: Record<string, boolean>) =>
    localStorage.setItem(`consent:${PROJECT}`, JSON.stringify({ consentHash: 'consent-1', versionNumber: 1, choices, decidedAt: new Date().toISOString(), mode }));

  it('a decision from opt-out does not count as consent in opt-in: the banner asks', async () => {
    store('opt-out', { necessary: true, analytics: true, marketing: false });
    const { client } = await start(configV2({ mode: 'opt-in', jurisdiction: { code: 'DE', rule: 'eea-uk-ch' } }));
    expect(client.getConsent()).toMatchObject({ needsConsent: true, choices: { analytics: false, marketing: false } });
    expect(hook('banner')).not.toBeNull();
  });

  it('a decision from opt-in (or from before jurisdictions) stands in opt-out and notice, and GPP reflects it', async () => {
    for (const mode of ['opt-in', undefined]) {
      store(mode, { necessary: true, analytics: true, marketing: false });
      const { client } = await start(optOut());
      expect(client.getConsent()).toMatchObject({ needsConsent: false, choices: { analytics: true, marketing: false } });
      await ready();
      expect(await gpp('getField', 'usnat.SaleOptOut')).toBe(1);
      clear();
    }
    store('opt-in', { necessary: true, analytics: false, marketing: true });
    const { client } = await start(configV2({ mode: 'notice' }));
    expect(client.getConsent()).toMatchObject({ needsConsent: false, choices: { analytics: false, marketing: true } });
  });

  it('a decision made in none applies in none; one from opt-out does not', async () => {
    store('none', { necessary: true, analytics: true, marketing: false });
    let { client } = await start(configV2({ mode: 'none' }));
    expect(client.getConsent().choices).toMatchObject({ analytics: true });
    clear();
    store('opt-out', { necessary: true, analytics: true, marketing: true });
    ({ client } = await start(configV2({ mode: 'none' })));
    expect(client.getConsent().choices).toMatchObject({ analytics: false, marketing: false });
  });
});
