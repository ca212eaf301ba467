// tcf.js: the IAB TCF v2.3 CMP for pages that use it (extensions.md section 11, docs/tcf.md), a separate file
// (dist/v2/tcf.js, global `ConsentTcf`, at most 24 KiB min+gzip) that stub.js loads beside the core. The TC
// string and the CMP API (`__tcfapi`: ping, addEventListener, removeEventListener, getTCData, getInAppTCData)
// are the IAB Tech Lab's own libraries, @iabtechlabtcf/core and @iabtechlabtcf/cmpapi (Apache-2.0); this file
// says what goes into the string, answers getVendorList from our vendor list, adds Google's AC string, and
// draws the two-layer banner. The core calls the default export instead of its own banner (index.ts).
import { CmpApi } from '@iabtechlabtcf/cmpapi';
import { TCString, type GVL, type TCModel } from '@iabtechlabtcf/core';
import type { TcfSettings } from './api';
import type { GppApi } from './gpp';
import { read, write, type Consent } from './consent';
import type { ConsentError } from './public';
import { STYLES } from './styles';
import { choiceOf, encode, encodingGvlOf, gdprApplies, grants, gvlOf, ids, sorted, stillValid, type Choice, type Strings, type Texts, type Vendor, type VendorList } from './tcf-encoding';
import { tcfStub } from './tcf-stub';
import { dialogKeys, styleRoot, type Ui, type mountUi } from './ui';

export { choiceOf, encode, gdprApplies, grants, gvlOf, stillValid, type Choice, type Strings, type VendorList };

export type MountTcf = (consent: Consent, changed: () => void, onError: (err: ConsentError) => void, coreUi: typeof mountUi) => Ui | Promise<Ui>;

/**
 * The GVL's stacks the first layer shows in place of the purposes and special features they stand for (TCF
 * Policies, Appendix A: a stack may replace or supplement its purposes and special features on the first layer; no
 * purpose or special feature in two stacks shown; a stack only where every purpose and special feature in it is
 * asked for). Of the allowed sets, the one that leaves the fewest lines (stacks plus what no stack covers), then
 * the fewest stacks, then the lowest ids: an exact search, the GVL has a few dozen stacks over at most ~13 items.
 */
export function pickStacks(stacks: VendorList['stacks'] | undefined, purposes: number[], specialFeatures: number[]): number[] {
  // Purpose n is bit n, special feature n bit 16 + n.
  const bits = (p: number[], sf: number[]) => p.reduce((m, id) => m | (1 << id), 0) | sf.reduce((m, id) => m | (1 << (16 + id)), 0);
  const asked = bits(purposes, specialFeatures);
  const count = (m: number) => m.toString(2).replace(/0/g, '').length;
  const usable = Object.values(stacks || {})
    .map((st) => ({ id: st.id, mask: bits(st.purposes, st.specialFeatures) }))
    // A stack of one item says nothing a purpose's own name does not.
    .filter((st) => count(st.mask) > 1 && (st.mask & asked) == st.mask)
    .sort((a, b) => a.id - b.id);
  let best = { lines: count(asked), ids: [] as number[] };
  const search = (from: number, covered: number, ids: number[]) => {
    const lines = ids.length + count(asked & ~covered);
    if (lines < best.lines || (lines == best.lines && ids.length < best.ids.length)) best = { lines, ids: [...ids] };
    for (let i = from; i < usable.length; i++) if (!(usable[i]!.mask & covered)) search(i + 1, covered | usable[i]!.mask, [...ids, usable[i]!.id]);
  };
  search(0, 0, []);
  return best.ids;
}

// gpp.js beside this file (the service's /sdk/v2/), for `__gpp` with the tcfeuv2 section.
const GPP_FILE = new URL('gpp.js', (document.currentScript as HTMLScriptElement | null)?.src || location.href).href;
let gppLoading: Promise<GppApi | undefined> | undefined;

/** `__gpp` on TCF pages: the tcfeuv2 section holds the TC string `__tcfapi` answers with (GPP's IAB TCF EU section). */
function publishGpp(tcString: string, shown: boolean) {
  const g = window as unknown as { ConsentGpp?: GppApi };
  gppLoading ||= g.ConsentGpp
    ? Promise.resolve(g.ConsentGpp)
    : new Promise((resolve) => {
        const s = document.createElement('script');
        s.src = GPP_FILE;
        s.onload = s.onerror = () => resolve(g.ConsentGpp);
        document.head.append(s);
      });
  gppLoading.then((gpp) => gpp?.publishTcf(tcString, shown)).catch(() => {});
}

type Tcfapi = (command?: string, version?: unknown, callback?: (value: unknown, success: boolean) => void, parameter?: unknown) => unknown;
const w = window as unknown as { __tcfapi?: Tcfapi };

/** The project has TCF off: queued calls fail, and no CMP is announced. */
function notUsed() {
  const queued = (w.__tcfapi?.() as Parameters<Tcfapi>[] | undefined) || [];
  delete w.__tcfapi;
  document.querySelector('iframe[name="__tcfapiLocator"]')?.remove();
  for (const [, , callback] of Array.isArray(queued) ? queued : []) callback?.(null, false);
}

const mount: MountTcf = async (consent, changed, onError, coreUi) => {
  const config = consent.config!;
  const settings = config.experience.tcf;
  if (!settings?.enabled) {
    notUsed();
    return coreUi(consent, changed, onError);
  }
  // The page had no stub (or someone else's): the API must exist before the IAB library takes it over.
  tcfStub();
  const key = 'consent:tcf:' + config.projectId;
  let current: Strings | undefined;
  let pending: Strings | undefined;
  let list: Promise<VendorList> | undefined;
  const vendorList = () => (list ||= consent.api.call('v2/tcf/vendor-list?locale=' + encodeURIComponent(config.locale)));
  let cmp: CmpApi;
  try {
    // getTCData's answer (also each addEventListener callback's) carries Google's AC string; Google tags derive
    // consent from the TC string only when our own Consent Mode signals are off (Google's TCF integration).
    cmp = new CmpApi(settings.cmpId, settings.cmpVersion || 1, true, {
      getTCData: (next: (data: unknown, ok: boolean) => void, data: Record<string, unknown> | null, ok: boolean) =>
        next(data?.gdprApplies ? { ...data, addtlConsent: current?.addtlConsent, enableAdvertiserConsentMode: !config.experience.googleConsentMode.enabled } : data, ok),
    });
  } catch (err) {
    onError(Object.assign(new Error('ConsentSDK: TCF ' + err), { code: 'invalid_response', status: 0 }) as ConsentError);
    notUsed();
    return coreUi(consent, changed, onError);
  }
  // getVendorList from our vendor list (the pinned version; browsers never fetch the IAB's host).
  const library = w.__tcfapi!;
  w.__tcfapi = (command, version, callback, parameter) => {
    if (command != 'getVendorList') return library(command, version, callback, parameter);
    if (typeof callback != 'function') return;
    vendorList().then(
      (l) => (version && version != 2) || (parameter != null && parameter != 'LATEST' && +parameter! != l.vendorListVersion) ? callback(null, false) : callback(gvlOf(l).getJson(), true),
      () => callback(null, false),
    );
  };

  if (!gdprApplies(config.jurisdiction?.code)) {
    cmp.update(null);
    return coreUi(consent, changed, onError);
  }

  // Every receipt made on this page carries the strings of the decision being recorded.
  const api = consent.api;
  const post = api.postConsent;
  api.postConsent = (body) => post({ ...body, tcf: pending });

  try {
    const stored = JSON.parse(read(key) || 'null') as Strings | null;
    if (stored && !consent.needsConsent && stillValid(stored.tcString, settings, config.experience.reconsentAfterDays)) current = stored;
  } catch {
    // unreadable: asked again
  }
  let l: VendorList;
  let gvl: GVL;
  try {
    if (current) {
      cmp.update(current.tcString, false);
      publishGpp(current.tcString, false);
      // The banner is not shown: the vendor list is loaded for the second layer and getVendorList only.
      vendorList().catch(() => {});
      return ui(false);
    }
    l = await vendorList();
    gvl = encodingGvlOf(l);
    // Transparency shown: legitimate interests established, no consent (CMP API, eventStatus cmpuishown).
    const shown = encode(gvl, settings, { ...choiceOf(l, settings, false), legInt: ids(l.purposes), vendorLegInt: ids(l.vendors) }, config.locale);
    cmp.update(shown.tcString, true);
    publishGpp(shown.tcString, true);
    current = shown;
    return ui(true);
  } catch (err) {
    onError((err as ConsentError)?.code ? (err as ConsentError) : (Object.assign(new Error('ConsentSDK: TCF ' + err), { code: 'invalid_response', status: 0 }) as ConsentError));
    cmp.disable();
    return coreUi(consent, changed, onError);
  }

  // After identify() or forget() (docs/subjects.md): the page and listeners follow; the TCF layers are not redrawn.
  function ui(show: boolean): Ui {
    const drawn = tcfUi(consent, settings!, vendorList, show, async (choice, action) => {
      l ||= await vendorList();
      gvl ||= encodingGvlOf(l);
      pending = encode(gvl, settings!, choice, config.locale);
      await consent.decide((p) => grants(settings!, choice, p), action);
      current = pending;
      write(key, JSON.stringify(current));
      cmp.update(current.tcString, false);
      publishGpp(current.tcString, false);
      changed();
    }, () => current && cmp.update(current.tcString, true), onError);
    return { ...drawn, refresh: changed };
  }
};
export default mount;

// ---------------------------------------------------------------------------------------------------------
// The two layers, in a shadow root like the core's banner (same styles and custom properties). Words the
// service's `ui` strings do not carry yet have English defaults here (keys `tcf*`, overridable from `ui`).
const EN: Record<string, string> = {
  tcfIntro: 'We and our {n} partners store and access information on your device and process personal data, such as unique identifiers and browsing data, for these purposes:',
  tcfSpecialFeatures: 'Special features',
  tcfFeatures: 'Features',
  tcfVendors: 'Partners ({n})',
  tcfPurposes: 'Purposes',
  tcfSpecialPurposes: 'Special purposes and features (no choice)',
  tcfLegInt: 'Legitimate interest',
  tcfObjectHint: 'Switch off to object',
  tcfConsent: 'Consent',
  tcfRetention: 'Retention: {n} days',
  tcfDataCategories: 'Data collected',
  tcfStorage: 'Cookie lifetime: {n} days',
  tcfOtherStorage: 'Also uses other storage than cookies',
  tcfStorageDetails: 'Storage details',
  tcfAtps: 'Other ad partners (Google)',
  tcfOwn: 'This site',
};

type Decide = (choice: Choice, action: 'accept_all' | 'reject_all' | 'custom') => Promise<void>;

function h(tag: string, attrs: Record<string, string | boolean> = {}, ...children: (Node | string | false | null | undefined)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== false) el.setAttribute(name, value === true ? '' : value);
  for (const child of children) if (child) el.append(child);
  return el;
}

function tcfUi(consent: Consent, settings: TcfSettings, vendorList: () => Promise<VendorList>, show: boolean, decide: Decide, reopened: () => void, onError: (err: ConsentError) => void): Omit<Ui, 'refresh'> {
  const { config, ui, dir, locale, experience } = consent.config!;
  const say = (k: string, n?: number) => (ui[k] || EN[k] || '').replace('{n}', String(n));
  const host = h('consent-sdk', { id: 'consent-sdk-root' });
  host.style.cssText = 'all:initial;position:fixed;top:0;left:0;width:0;height:0;z-index:2147483647';
  const root = host.attachShadow({ mode: 'open' });
  styleRoot(root, STYLES + '.list{margin:0 0 12px;padding-inline-start:20px}details{border-top:1px solid var(--mu);padding:6px 0}summary{cursor:pointer;font-weight:600}.dialog{max-width:680px}');
  const scheme = experience.theme.colorScheme;
  const wrap = h('div', { class: 'w ' + (scheme == 'dark' || scheme == 'auto' ? scheme : 'light'), dir, lang: locale, 'data-consent': 'root' });
  root.append(wrap);
  document.body.prepend(host);
  const own = config.purposes.filter((p) => !p.required && !settings.purposeMap[p.key]?.length);
  let view: HTMLElement | undefined;

  const button = (hook: string, label: string, action: () => void, kind = '') => {
    const b = h('button', { type: 'button', 'data-consent': hook, class: kind, part: 'button ' + (kind || hook) }, label);
    b.onclick = action;
    return b;
  };
  const policy = () =>
    /^https?:\/\//.test(experience.privacyPolicyUrl) && h('a', { href: experience.privacyPolicyUrl, target: '_blank', rel: 'noopener', part: 'link' }, say('privacyPolicy'));
  async function act(choice: () => Promise<Choice>, action: Parameters<Decide>[1]) {
    const current = view;
    current?.setAttribute('aria-busy', 'true');
    try {
      await decide(await choice(), action);
      decided = true;
      close();
    } catch (err) {
      const line = current?.querySelector('.error');
      if (line) line.textContent = say('saveFailed');
      onError(err as ConsentError);
    } finally {
      current?.removeAttribute('aria-busy');
    }
  }
  const all = (yes: boolean) => async () => choiceOf(await vendorList(), settings, yes, yes ? own.map((p) => p.key) : []);
  // Accept and Reject all side by side, the same weight (TCF Policies; as the core's banner).
  const acceptAll = (kind: string) => button('accept-all', config.notice.acceptLabel || say('acceptAll'), () => act(all(true), 'accept_all'), kind);
  const rejectAll = (kind: string) => button('reject-all', config.notice.rejectLabel || say('rejectAll'), () => act(all(false), 'reject_all'), kind);

  function put(next: HTMLElement | undefined) {
    view?.remove();
    view = next;
    if (view) wrap.append(view);
  }
  let decided = !show;
  // What had focus in the page when the second layer opened (a settings link): focus goes back there.
  let opener: HTMLElement | null = null;
  // Without a decision the first layer stays (or comes back when the second closes, focus on its manage button).
  function close() {
    const fromDialog = !!root.querySelector('[data-consent="dialog"]');
    if (decided) {
      put(undefined);
      if (fromDialog && opener?.isConnected) opener.focus();
    } else {
      void firstLayer()
        .then(() => fromDialog && root.querySelector<HTMLElement>('[data-consent="manage"]')?.focus())
        .catch(onError);
    }
  }
  dialogKeys(root, close);

  async function firstLayer() {
    const l = await vendorList();
    const names = (o: Record<string, Texts>, only?: number[]) => Object.values(o).filter((t) => !only || only.includes(t.id)).map((t) => h('li', {}, t.name));
    // Every purpose of the list is asked for, and the special features the operator chose; stacks stand for some.
    const stacks = pickStacks(l.stacks, ids(l.purposes), settings.specialFeatures).map((id) => l.stacks[id]!);
    const inStack = (key: 'purposes' | 'specialFeatures') => stacks.flatMap((st) => st[key]);
    const purposes = ids(l.purposes).filter((id) => !inStack('purposes').includes(id));
    const features = settings.specialFeatures.filter((id) => !inStack('specialFeatures').includes(id));
    put(
      h(
        'section',
        { class: 'banner', 'data-consent': 'banner', 'data-tcf': 'first-layer', part: 'banner', 'aria-labelledby': 'cs-bt' },
        h('div', { class: 'head' }, h('h2', { id: 'cs-bt', part: 'title' }, config.notice.title)),
        h('p', {}, config.notice.description, ' ', policy()),
        h('p', {}, say('tcfIntro', Object.keys(l.vendors).length)),
        h(
          'ul',
          { class: 'list', 'data-tcf': 'purposes' },
          ...stacks.map((st) => h('li', { 'data-tcf-stack': String(st.id) }, h('strong', {}, st.name), ' ', st.description)),
          ...names(l.purposes, purposes),
        ),
        features.length > 0 && h('p', {}, h('strong', {}, say('tcfSpecialFeatures'))),
        h('ul', { class: 'list' }, ...names(l.specialFeatures, features)),
        h('div', { class: 'actions' }, rejectAll('primary'), acceptAll('primary'), button('manage', config.notice.manageLabel || say('manage'), () => secondLayer(), 'manage')),
        h('p', { class: 'error', role: 'alert' }),
      ),
    );
  }

  async function secondLayer() {
    // Re-surfaced (a returning visitor's settings link): the CMP API's cmpuishown again. From the first layer: already said.
    if (!view) reopened();
    const l = await vendorList();
    let m: TCModel | undefined;
    try {
      const stored = JSON.parse(read('consent:tcf:' + consent.config!.projectId) || 'null');
      if (stored) m = TCString.decode(stored.tcString);
    } catch {
      // nothing stored
    }
    // Switches start as the current decision has them; consents off and objections not made before one.
    const on = (vector: 'purposeConsents' | 'purposeLegitimateInterests' | 'vendorConsents' | 'vendorLegitimateInterests' | 'specialFeatureOptins', id: number, dflt: boolean) =>
      m ? m[vector].has(id) : dflt;
    const toggle = (name: string, value: string, label: string, checked: boolean, hint?: string) =>
      h('label', {}, h('span', {}, label, hint && h('small', {}, hint)), h('input', { type: 'checkbox', role: 'switch', part: 'switch', name, value, checked }));
    const usesConsent = (id: number) => Object.values(l.vendors).some((v) => v.purposes.includes(id) || v.flexiblePurposes?.includes(id));
    const usesLegInt = (id: number) => ![1, 3, 4, 5, 6].includes(id) && Object.values(l.vendors).some((v) => v.legIntPurposes.includes(id));
    const texts = (o: Record<string, Texts>, list: number[]) => list.map((id) => o[id]?.name).filter(Boolean).join(', ');
    const privacy = (v: Vendor) => (v.urls || []).find((u) => u.langId == locale.slice(0, 2)) || v.urls?.[0];

    const purposes = Object.values(l.purposes).map((p) =>
      h(
        'fieldset',
        { 'data-tcf-purpose': String(p.id) },
        h('legend', {}, p.name),
        h('small', {}, p.description),
        usesConsent(p.id) && toggle('purpose', String(p.id), say('tcfConsent'), on('purposeConsents', p.id, false)),
        usesLegInt(p.id) && toggle('purposeLegInt', String(p.id), say('tcfLegInt'), on('purposeLegitimateInterests', p.id, true), say('tcfObjectHint')),
      ),
    );
    const specialFeatures = settings.specialFeatures.map((id) => toggle('specialFeature', String(id), l.specialFeatures[id]?.name || String(id), on('specialFeatureOptins', id, false), l.specialFeatures[id]?.description));
    const vendors = Object.values(l.vendors).map((v) => {
      const url = privacy(v);
      const retention = v.dataRetention?.stdRetention;
      return h(
        'details',
        { 'data-tcf-vendor': String(v.id) },
        h('summary', {}, v.name),
        v.purposes.length > 0 && toggle('vendor', String(v.id), say('tcfConsent') + ': ' + texts(l.purposes, v.purposes), on('vendorConsents', v.id, false)),
        v.legIntPurposes.length > 0 && toggle('vendorLegInt', String(v.id), say('tcfLegInt') + ': ' + texts(l.purposes, v.legIntPurposes), on('vendorLegitimateInterests', v.id, true), say('tcfObjectHint')),
        v.specialPurposes.length + v.features.length > 0 && h('small', {}, texts(l.specialPurposes, v.specialPurposes) + (v.features.length ? ' · ' + texts(l.features, v.features) : '')),
        retention != null && h('small', {}, say('tcfRetention', retention)),
        (v.dataDeclaration?.length || 0) > 0 && h('small', {}, say('tcfDataCategories') + ': ' + texts(l.dataCategories, v.dataDeclaration!)),
        v.cookieMaxAgeSeconds != null && h('small', {}, say('tcfStorage', Math.round(v.cookieMaxAgeSeconds / 86400))),
        v.usesNonCookieAccess && h('small', {}, say('tcfOtherStorage')),
        v.deviceStorageDisclosureUrl && h('a', { href: v.deviceStorageDisclosureUrl, target: '_blank', rel: 'noopener' }, say('tcfStorageDetails')),
        ' ',
        url && h('a', { href: url.privacy, target: '_blank', rel: 'noopener' }, say('privacyPolicy')),
      );
    });
    // Features (TCF v2.4, Policies 5.0.b): the ones the vendors declare, in a section of their own, introduced by the
    // IAB's standard text from the held list; nothing to choose, so no controls. Names are the list's, never ours.
    const features = sorted(Object.values(l.vendors).flatMap((v) => v.features)).flatMap((id) =>
      l.features[id] ? [h('p', { 'data-tcf-feature': String(id) }, h('strong', {}, l.features[id].name), ' ', h('small', {}, l.features[id].description))] : [],
    );
    const storedAc = (JSON.parse(read('consent:tcf:' + consent.config!.projectId) || 'null') as Strings | null)?.addtlConsent.split('~')[1]?.split('.').map(Number) || [];
    const atps = (l.googleAtps || []).filter((a) => settings.googleAtps.includes(a.id)).map((a) => toggle('atp', String(a.id), a.name, storedAc.includes(a.id)));
    const ownSwitches = own.map((p) => toggle('own', p.key, p.name, consent.has(p.key), p.description));

    const closeButton = button('close', '×', close, 'close');
    closeButton.setAttribute('aria-label', say('close'));
    const box = h(
      'div',
      { class: 'dialog', 'data-consent': 'dialog', 'data-tcf': 'second-layer', part: 'dialog', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'cs-title', tabindex: '-1' },
      h('div', { class: 'head' }, h('div', {}, h('h2', { id: 'cs-title', part: 'title' }, config.notice.title)), closeButton),
      h('p', {}, config.notice.description, ' ', policy()),
      h('h3', {}, say('tcfPurposes')),
      ...purposes,
      specialFeatures.length > 0 && h('h3', {}, say('tcfSpecialFeatures')),
      ...specialFeatures,
      features.length > 0 && h('h3', {}, say('tcfFeatures')),
      features.length > 0 && l.standardTexts?.features && h('p', { 'data-tcf': 'features-text' }, l.standardTexts.features),
      ...features,
      h('h3', {}, say('tcfVendors', vendors.length)),
      ...vendors,
      atps.length > 0 && h('h3', {}, say('tcfAtps')),
      ...atps,
      ownSwitches.length > 0 && h('h3', {}, say('tcfOwn')),
      ...ownSwitches,
      h('div', { class: 'actions' }, rejectAll(''), acceptAll(''), button('save', say('saveChoices'), save, 'primary')),
      h('p', { class: 'error', role: 'alert' }),
    );
    const active = document.activeElement as HTMLElement | null;
    if (active != host && active != document.body) opener = active;
    const backdrop = h('div', { class: 'backdrop' }, box);
    // A click on the backdrop must not move focus out of the dialog into the page.
    backdrop.onmousedown = (e) => e.target === backdrop && e.preventDefault();
    put(backdrop);
    box.focus();

    function save() {
      const checked = (name: string) => [...root.querySelectorAll<HTMLInputElement>(`input[name=${name}]`)].filter((i) => i.checked).map((i) => i.value);
      const num = (name: string) => checked(name).map(Number);
      act(async () => ({ purposes: num('purpose'), legInt: num('purposeLegInt'), specialFeatures: num('specialFeature'), vendors: num('vendor'), vendorLegInt: num('vendorLegInt'), atps: num('atp'), own: checked('own') }), 'custom');
    }
  }

  if (show) firstLayer().catch(onError);
  return {
    showPreferences: () => void secondLayer().catch(onError),
    destroy() {
      host.remove();
    },
  };
}
