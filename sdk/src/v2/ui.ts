// The banner and the preferences dialog, in an open shadow root on a fixed, zero-sized host element that is
// the first child of <body> (first in the tab order). The page's CSS does not reach in; pages theme it
// through custom properties and ::part() (styles.ts). Config text is only ever set as text, never as HTML.
import type { Action, Purpose } from './api';
import type { Consent } from './consent';
import type { ConsentError } from './public';
import { STYLES } from './styles';

type Child = Node | string | false | null | undefined;

function h(tag: string, attrs: Record<string, string | boolean> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== false) el.setAttribute(name, value === true ? '' : value);
  for (const child of children) if (child) el.append(child);
  return el;
}

// Black or white text on the operator's colour, whichever contrasts more (WCAG relative luminance).
function textOn(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 ? '#000' : '#fff';
}

/** A constructed sheet needs no 'unsafe-inline' in the page's CSP; <style> is the fallback (also for tcf.js). */
export function styleRoot(root: ShadowRoot, css: string): void {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
  } catch {
    root.append(h('style', {}, css));
  }
}

/** Keyboard handling for an open dialog (the core's and tcf.js's second layer): Escape closes it, Tab and Shift+Tab cycle inside it. */
export function dialogKeys(root: ShadowRoot, close: () => void): void {
  root.addEventListener('keydown', (event) => {
    const e = event as KeyboardEvent;
    const box = root.querySelector<HTMLElement>('[data-consent="dialog"]');
    if (!box) return;
    if (e.key == 'Escape') {
      e.preventDefault();
      close();
    } else if (e.key == 'Tab') {
      const items = [...box.querySelectorAll<HTMLElement>('a[href],button,input:not(:disabled),summary')];
      const first = items[0];
      const last = items[items.length - 1];
      const active = root.activeElement;
      if (e.shiftKey ? active === first || active === box : active === last) {
        e.preventDefault();
        (e.shiftKey ? last : first).focus();
      }
    }
  });
}

export interface Ui {
  showPreferences(): void;
  destroy(): void;
  /**
   * After identify() or forget() changed the state: the page follows it (the `decided` callback: listeners, tags) and
   * the banner is drawn again (the TCF banner's layers are not: docs/subjects.md, Limits).
   */
  refresh(): void;
}

export function mountUi(consent: Consent, decided: () => void, onError: (err: ConsentError) => void): Ui {
  const { config, ui, dir, locale, experience } = consent.config!;
  const { notice, purposes, categories } = config;
  // The answer's `ui` strings: the service's built-in ones for the locale with the project's own over them,
  // every key present (src/sdk/config-v2.ts). No English copies here: they cost the core's budget and would
  // show English in a dialog of another language.
  const say = (key: string) => ui[key];
  const host = h('consent-sdk', { id: 'consent-sdk-root' });
  host.style.cssText = 'all:initial;position:fixed;top:0;left:0;width:0;height:0;z-index:2147483647';
  const root = host.attachShadow({ mode: 'open' });
  const primary = /^#[0-9a-f]{6}$/i.test(notice.primaryColor) ? `:host{--np:${notice.primaryColor};--nop:${textOn(notice.primaryColor)}}` : '';
  const radius = experience.theme.borderRadius;
  const css = STYLES + primary + (radius! >= 0 ? `.w{--r:var(--cs-radius,${radius}px)}` : '');
  styleRoot(root, css);
  const scheme = experience.theme.colorScheme;
  // Focusable by script only (see close); a tabindex of -1 on the host itself would hide the whole shadow
  // tree from Tab.
  const wrap = h('div', { class: 'w ' + (scheme == 'dark' || scheme == 'auto' ? scheme : 'light'), dir, lang: locale, tabindex: '-1', 'data-consent': 'root' });
  // Screen readers announce a live region's new text, not a region that appears: the banner's title and
  // text are copied here a moment after it is drawn.
  const live = h('div', { class: 'sr', 'aria-live': 'polite' });
  root.append(wrap, live);

  let view: HTMLElement | undefined;
  // Where focus was in the page before it entered our UI, and what opened the dialog: focus goes back there.
  let returnTo: HTMLElement | null = null;
  let opener: HTMLElement | null = null;
  let destroyed = false;

  host.addEventListener('focusin', (e) => {
    const from = e.relatedTarget as HTMLElement | null;
    if (from && from != host && !host.contains(from)) returnTo = from;
  });

  function show(next: 'banner' | 'dialog' | null) {
    if (destroyed) return;
    view?.remove();
    view = next == 'banner' ? banner() : next == 'dialog' ? dialog() : undefined;
    if (view) wrap.append(view);
    if (!host.isConnected) document.body.prepend(host);
  }

  function button(hook: string, label: string, action: () => void, kind = ''): HTMLElement {
    const b = h('button', { type: 'button', 'data-consent': hook, class: kind, part: 'button ' + (kind || hook) }, label);
    b.onclick = action;
    return b;
  }

  // Accept and reject look the same on purpose: rejecting must be as easy as accepting.
  // A label the project did not translate comes empty in another language: the UI string stands in.
  const acceptAll = (kind: string) => button('accept-all', notice.acceptLabel || say('acceptAll'), () => decide((p) => !consent.gpcDenies(p), 'accept_all'), kind);
  const rejectAll = (kind: string) => button('reject-all', notice.rejectLabel || say('rejectAll'), () => decide(() => false, 'reject_all'), kind);
  const manage = () => button('manage', notice.manageLabel || say('manage'), openDialog, 'manage');
  const optOut = consent.mode == 'opt-out';
  // In opt-out mode GPC is honoured as an opt-out request, and the notice says so (CCPA regulations
  // §7025(c)(6)); elsewhere a note says which purposes it turned off.
  const gpcLine = () =>
    consent.gpc &&
    (optOut ? h('p', { class: 'gpc', 'data-consent': 'opt-out-honored' }, say('optOutHonored')) : experience.gpc.optOutPurposes.length > 0 && h('p', { class: 'gpc' }, say('gpcNote')));
  const errorLine = () => h('p', { class: 'error', role: 'alert' });
  const policy = () =>
    /^https?:\/\//.test(experience.privacyPolicyUrl) && h('a', { href: experience.privacyPolicyUrl, target: '_blank', rel: 'noopener', part: 'link', 'data-consent': 'privacy-policy' }, say('privacyPolicy'));

  function header(titleId: string, close?: HTMLElement) {
    // The logo is decorative (alt=""): the company name and title beside it say the same in text.
    const logo = /^https:\/\//.test(notice.logoUrl) && h('img', { class: 'logo', src: notice.logoUrl, alt: '' });
    const company = notice.companyName && h('span', { class: 'company' }, notice.companyName);
    return h('div', { class: 'head' }, logo, h('div', {}, company, h('h2', { id: titleId, part: 'title' }, notice.title)), close);
  }

  function banner() {
    return h(
      'section',
      { class: 'banner', 'data-consent': 'banner', part: 'banner', 'aria-labelledby': 'cs-bt' },
      header('cs-bt'),
      h('p', {}, notice.description, ' ', policy()),
      gpcLine(),
      h('div', { class: 'actions' }, ...(consent.mode == 'opt-in' ? [rejectAll('primary'), acceptAll('primary'), manage()] : noticeActions())),
      errorLine(),
    );
  }

  // Opt-out: the notice with its "Do Not Sell or Share" control (denies the opt-out purposes, keeps the rest as
  // they are; gone once GPC opted out already), and a dismiss button as its equal. Notice: only the dismiss.
  function noticeActions() {
    const ok = button('ok', say('noticeOk'), dismiss, 'primary');
    if (!optOut) return [ok];
    const doNotSell = !consent.gpc && button('do-not-sell', say('doNotSell'), () => decide((p) => !consent.optOut(p) && consent.has(p.key), 'opt_out'), 'primary');
    return [doNotSell, ok, manage()];
  }

  function dismiss() {
    consent.dismiss();
    decided();
    close();
  }

  function toggle(p: Purpose) {
    // On: required purposes, and what the current decision (or, before one, the mode) grants.
    const on = p.required || consent.has(p.key);
    const input = h('input', { type: 'checkbox', role: 'switch', part: 'switch', 'data-purpose': p.key, checked: on, disabled: p.required });
    const required = p.required && h('em', {}, ' · ' + say('alwaysOn'));
    return h('label', {}, h('span', {}, h('strong', {}, p.name), required, h('small', {}, p.description)), input);
  }

  function groups() {
    const bySortOrder = (a: { sortOrder: number }, b: { sortOrder: number }) => a.sortOrder - b.sortOrder;
    const known = new Set(categories.map((c) => c.id));
    const list: [string, Purpose[]][] = [...categories].sort(bySortOrder).map((c) => [c.name, purposes.filter((p) => p.categoryId === c.id)]);
    list.push(['', purposes.filter((p) => !known.has(p.categoryId))]);
    return list
      .filter(([, members]) => members.length)
      .map(([name, members]) => h('fieldset', {}, name && h('legend', {}, name), ...[...members].sort(bySortOrder).map(toggle)));
  }

  function dialog() {
    const closeButton = button('close', '×', close, 'close');
    closeButton.setAttribute('aria-label', say('close'));
    const box = h(
      'div',
      { class: 'dialog', 'data-consent': 'dialog', part: 'dialog', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'cs-title', 'aria-describedby': 'cs-desc', tabindex: '-1' },
      header('cs-title', closeButton),
      h('p', { id: 'cs-desc' }, notice.description, ' ', policy()),
      gpcLine(),
      ...groups(),
      // The hierarchy: saving what the switches say is the primary action; all-or-nothing are equal peers.
      h('div', { class: 'actions' }, rejectAll(''), acceptAll(''), button('save', say('saveChoices'), save, 'primary')),
      errorLine(),
    );
    const backdrop = h('div', { class: 'backdrop' }, box);
    // A click on the backdrop must not move focus out of the dialog into the page.
    backdrop.onmousedown = (e) => e.target === backdrop && e.preventDefault();
    return backdrop;
  }

  function save() {
    const granted = new Set<string>();
    for (const input of root.querySelectorAll<HTMLInputElement>('[data-purpose]')) if (input.checked) granted.add(input.dataset.purpose!);
    decide((p) => granted.has(p.key), 'custom');
  }

  async function decide(grant: (p: Purpose) => boolean, action: Action) {
    const current = view;
    // Busy, not disabled: disabling the focused button would drop focus to the page.
    current?.setAttribute('aria-busy', 'true');
    try {
      await consent.decide(grant, action);
      decided();
      if (view === current) close();
    } catch (err) {
      // Nothing was stored; the visitor can try again.
      const line = current?.querySelector('.error');
      if (line) line.textContent = say('saveFailed');
      onError(err as ConsentError);
    } finally {
      current?.removeAttribute('aria-busy');
    }
  }

  function openDialog() {
    const active = document.activeElement as HTMLElement | null;
    opener = active && active != host && active != document.body ? active : null;
    show('dialog');
    (root.querySelector('[data-consent="dialog"]') as HTMLElement).focus();
  }

  // Hides what is open (the banner stays while a decision is needed) and puts focus back: to the banner's
  // manage button, else to what opened the dialog, else to where focus was before our UI, else to our
  // (empty) wrapper, so that the next Tab continues at the start of the page, never lost to <body>.
  function close() {
    const hadFocus = document.activeElement == host;
    const wasDialog = !!root.querySelector('[data-consent="dialog"]');
    show(consent.needsConsent ? 'banner' : null);
    const manage = root.querySelector<HTMLElement>('[data-consent="manage"]');
    if (wasDialog && manage) return manage.focus();
    const target = [opener, returnTo].find((el) => el?.isConnected);
    opener = null;
    if (target) target.focus();
    else if (hadFocus) wrap.focus();
  }

  dialogKeys(root, close);

  document.body.prepend(host);
  show(consent.needsConsent ? 'banner' : null);
  if (view) setTimeout(() => (live.textContent = notice.title + '. ' + notice.description), 150);

  return {
    showPreferences: () => destroyed || openDialog(),
    refresh: () => (decided(), close()),
    destroy() {
      destroyed = true;
      host.remove();
    },
  };
}
