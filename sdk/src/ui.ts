// The banner and the preferences dialog, drawn in an open shadow root on a fixed, zero-sized host element:
// the page's CSS does not reach in and the page's layout never moves. At most one of banner and dialog is in
// the shadow root at a time, so each `data-consent` hook names exactly one element.
// Config text is only ever set as text (never parsed as HTML).
import type { Purpose } from './api';
import type { Consent } from './client';
import type { ConsentError } from './public';
import { STYLES } from './styles';

// The SDK's own words; the notice supplies everything else.
const TEXT = {
  save: 'Save choices',
  close: 'Close',
  required: 'Always on',
  gpc: "Your browser's Global Privacy Control signal was honoured: optional purposes are off unless you turn them on.",
  failed: 'Your choice could not be saved. Please try again.',
};

type Child = Node | string | false | null | undefined;

function h(tag: string, attrs: Record<string, string | boolean> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== false) el.setAttribute(name, value === true ? '' : value);
  }
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

export interface Ui {
  showPreferences(): void;
  destroy(): void;
}

export function mountUi(consent: Consent, gpc: boolean, onError: (err: ConsentError) => void): Ui {
  const { notice, purposes, categories } = consent.config!.config;
  // A tag of our own, so the page's `div {...}` rules do not match it; the inline `all:initial` beats the
  // rest and stops inherited properties (font, colour, line-height) from flowing into the shadow root.
  const host = h('consent-sdk', { id: 'consent-sdk-root' });
  host.style.cssText = 'all:initial;position:fixed;top:0;left:0;width:0;height:0;z-index:2147483647';
  if (/^#[0-9a-f]{6}$/i.test(notice.primaryColor)) {
    host.style.setProperty('--cs-primary', notice.primaryColor);
    host.style.setProperty('--cs-on-primary', textOn(notice.primaryColor));
  }
  const root = host.attachShadow({ mode: 'open' });
  try {
    // A constructed sheet needs no 'unsafe-inline' in the page's CSP; <style> is the fallback.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
    root.adoptedStyleSheets = [sheet];
  } catch {
    root.append(h('style', {}, STYLES));
  }

  let view: HTMLElement | undefined;
  // What had focus when the dialog opened: it gets focus back when the dialog closes.
  let opener: HTMLElement | undefined;
  let destroyed = false;

  function show(next: 'banner' | 'dialog' | null) {
    if (destroyed) return;
    view?.remove();
    view = next === 'banner' ? banner() : next === 'dialog' ? dialog() : undefined;
    if (view) root.append(view);
    // Pages that rebuild <body> may have dropped us.
    if (!host.isConnected) document.body.append(host);
  }

  function button(hook: string, label: string, action: () => void, primary = false): HTMLElement {
    const b = h('button', { type: 'button', 'data-consent': hook, class: primary ? 'primary' : false }, label);
    b.onclick = action;
    return b;
  }

  // Accept and reject look the same on purpose: rejecting must be as easy as accepting.
  const acceptAll = () => button('accept-all', notice.acceptLabel, () => decide(() => true), true);
  const rejectAll = () => button('reject-all', notice.rejectLabel, () => decide(() => false), true);
  const gpcLine = () => gpc && h('p', { class: 'gpc' }, TEXT.gpc);
  const errorLine = () => h('p', { class: 'error', role: 'alert' });

  function header(titleId: string | false, close?: HTMLElement) {
    // The logo is decorative (alt=""): the company name and title beside it say the same in text.
    const logo = /^https:\/\//.test(notice.logoUrl) && h('img', { class: 'logo', src: notice.logoUrl, alt: '' });
    const company = notice.companyName && h('span', { class: 'company' }, notice.companyName);
    return h('div', { class: 'head' }, logo, h('div', {}, company, h('h2', { id: titleId }, notice.title)), close);
  }

  function banner() {
    return h(
      'section',
      { class: 'banner', 'data-consent': 'banner', role: 'region', 'aria-label': notice.title },
      header(false),
      h('p', {}, notice.description),
      gpcLine(),
      h('div', { class: 'actions' }, rejectAll(), button('manage', notice.manageLabel, openDialog), acceptAll()),
      errorLine(),
    );
  }

  function toggle(p: Purpose) {
    // Checked: required purposes, and what the current decision granted. Without a decision every
    // optional purpose starts off (also, and explicitly, under Global Privacy Control).
    const input = h('input', { type: 'checkbox', 'data-purpose': p.key, checked: p.required || consent.has(p.key), disabled: p.required });
    const required = p.required && h('em', {}, ' · ' + TEXT.required);
    return h('label', {}, input, h('span', {}, h('strong', {}, p.name), required, h('small', {}, p.description)));
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
    const closeButton = button('close', '×', close);
    closeButton.className = 'close';
    closeButton.setAttribute('aria-label', TEXT.close);
    const box = h(
      'div',
      { class: 'dialog', 'data-consent': 'dialog', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'cs-title', 'aria-describedby': 'cs-desc', tabindex: '-1' },
      header('cs-title', closeButton),
      h('p', { id: 'cs-desc' }, notice.description),
      gpcLine(),
      ...groups(),
      h('div', { class: 'actions' }, rejectAll(), acceptAll(), button('save', TEXT.save, save, true)),
      errorLine(),
    );
    const backdrop = h('div', { class: 'backdrop' }, box);
    // A click on the backdrop must not move focus out of the dialog into the page.
    backdrop.onmousedown = (e) => e.target === backdrop && e.preventDefault();
    return backdrop;
  }

  function save() {
    const granted = new Set<string>();
    for (const input of root.querySelectorAll<HTMLInputElement>('input[data-purpose]')) {
      if (input.checked) granted.add(input.dataset.purpose!);
    }
    decide((p) => granted.has(p.key));
  }

  async function decide(grant: (p: Purpose) => boolean) {
    const current = view;
    // Busy, not disabled: disabling the focused button would drop focus to the page. Extra clicks are
    // harmless anyway, consent.decide() joins the receipt already in flight.
    current?.setAttribute('aria-busy', 'true');
    try {
      await consent.decide(grant);
      if (view === current) close();
    } catch (err) {
      // Nothing was stored; the visitor can try again.
      const line = current?.querySelector('.error');
      if (line) line.textContent = TEXT.failed;
      onError(err as ConsentError);
    } finally {
      current?.removeAttribute('aria-busy');
    }
  }

  function openDialog() {
    const active = document.activeElement as HTMLElement | null;
    // Opened from our own banner, focus later goes back to the banner's manage button, not the host element.
    opener = active && active !== host ? active : undefined;
    show('dialog');
    (root.querySelector('[data-consent="dialog"]') as HTMLElement).focus();
  }

  // Hides what is open; the banner stays for as long as a decision is needed.
  function close() {
    const wasDialog = !!root.querySelector('[data-consent="dialog"]');
    show(consent.needsConsent ? 'banner' : null);
    if (!wasDialog) return;
    const manage = root.querySelector<HTMLElement>('[data-consent="manage"]');
    if (opener?.isConnected) opener.focus();
    else manage?.focus();
  }

  // Keyboard handling for the dialog: Escape closes it, Tab and Shift+Tab cycle inside it.
  root.addEventListener('keydown', (event) => {
    const e = event as KeyboardEvent;
    const box = root.querySelector<HTMLElement>('[data-consent="dialog"]');
    if (!box) return;
    if (e.key === 'Escape') {
      e.preventDefault();
      close();
    } else if (e.key === 'Tab') {
      const items = [...box.querySelectorAll<HTMLElement>('button:not(:disabled),input:not(:disabled)')];
      const first = items[0];
      const last = items[items.length - 1];
      const active = root.activeElement;
      if (e.shiftKey ? active === first || active === box : active === last) {
        e.preventDefault();
        (e.shiftKey ? last : first).focus();
      }
    }
  });

  document.body.append(host);
  show(consent.needsConsent ? 'banner' : null);

  return {
    showPreferences: () => destroyed || openDialog(),
    destroy() {
      destroyed = true;
      host.remove();
    },
  };
}
