// The cookie declaration table (docs/scanner.md, "Cookie declaration"): fills every `[data-consent-declaration]`
// element of the page with the live version's purposes and the cookies and storage keys the latest scan saw,
// from GET /api/sdk/v2/cookie-declaration. Loaded by the core (index.ts) only on a page with such an element, so
// it stays outside the core's size budget; the core names the key in this script's URL fragment
// (`declaration.js#<key>`: a fragment never reaches a server, and the file stays one cacheable URL). The locale is
// the page's `<html lang>`, else the browser's language, chosen by the service as for the banner.
// Plain DOM in the page itself (no shadow root): the privacy page's own styles apply; every text goes in as text.

interface Item {
  name: string;
  kind: 'cookie' | 'storage';
  vendor: string | null;
  description: string | null;
  party: 'first' | 'third' | 'both' | null;
  lifetime: string;
}

interface Declaration {
  locale: string;
  dir: 'ltr' | 'rtl';
  purposes: { key: string; name: string; description: string; items: Item[] }[];
  unassigned: Item[];
}

// The table's own words, in English: the purposes' names and descriptions come in the visitor's locale.
const HEAD = ['Name', 'Provider', 'Purpose', 'Expiry', 'Type'];
const OTHER = 'Other cookies and storage (not yet assigned to a purpose)';

const script = document.currentScript as HTMLScriptElement | null;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, ...children: Node[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  node.append(...children);
  return node;
}

function table(items: Item[]): HTMLTableElement {
  const rows = items.map((item) =>
    el(
      'tr',
      undefined,
      el('td', undefined, el('code', item.name)),
      el('td', item.vendor ?? ''),
      el('td', item.description ?? ''),
      el('td', item.lifetime),
      el('td', `${item.kind == 'cookie' ? 'Cookie' : 'Storage'}${item.party == 'third' ? ' (third party)' : ''}`),
    ),
  );
  return el('table', undefined, el('thead', undefined, el('tr', undefined, ...HEAD.map((h) => el('th', h)))), el('tbody', undefined, ...rows));
}

function section(key: string, title: string, description: string, items: Item[]): HTMLElement {
  const part = el('section', undefined, el('h3', title));
  part.dataset.consentPurpose = key;
  if (description) part.append(el('p', description));
  part.append(items.length ? table(items) : el('p', 'None.'));
  return part;
}

function render(declaration: Declaration): void {
  for (const target of document.querySelectorAll<HTMLElement>('[data-consent-declaration]')) {
    const parts = declaration.purposes.map((p) => section(p.key, p.name, p.description, p.items));
    if (declaration.unassigned.length) parts.push(section('', OTHER, '', declaration.unassigned));
    target.lang = declaration.locale;
    target.dir = declaration.dir;
    target.replaceChildren(...parts);
    target.removeAttribute('aria-busy');
  }
  dispatchEvent(new CustomEvent('consent:declaration', { detail: declaration }));
}

if (script) {
  const src = new URL(script.src);
  const locale = document.documentElement.lang || navigator.language || '';
  fetch(`${src.origin}/api/sdk/v2/cookie-declaration?locale=${encodeURIComponent(locale)}`, { headers: { Authorization: `Bearer ${src.hash.slice(1)}` } })
    .then((res) => (res.ok ? res.json() : Promise.reject(new Error(`cookie declaration: HTTP ${res.status}`))))
    .then(render)
    .catch((err) => console.error('ConsentSDK:', err));
}
