// Script and iframe blocking by `data-consent` (space- or comma-separated purpose keys, all must be granted):
//   <script type="text/plain" data-consent="analytics" [data-src="..."] [data-type="module"]>
//   <iframe data-consent="ads" data-consent-src="...">
// A MutationObserver applies the same rule to elements added later. Withdrawn purposes unload their iframes
// and remove their cookies; scripts that already ran cannot be unrun (the README says to reload).

const BLOCKED = 'script[type="text/plain"][data-consent],iframe[data-consent]';

type Has = (key: string) => boolean;

const allowed = (el: Element, has: Has) => (el.getAttribute('data-consent') || '').split(/[\s,]+/).filter(Boolean).every(has);

function apply(el: Element, has: Has): void {
  const ok = allowed(el, has);
  if (el.tagName == 'IFRAME') {
    const src = el.getAttribute('data-consent-src');
    if (ok && src && el.getAttribute('src') != src) el.setAttribute('src', src);
    else if (!ok && src && el.getAttribute('src') == src) el.setAttribute('src', 'about:blank');
  } else if (ok) {
    // A script only runs when inserted as a new element; copy everything but the blocking type.
    const s = document.createElement('script');
    for (const a of el.attributes) if (!/^(type|data-src|data-type)$/.test(a.name)) s.setAttribute(a.name, a.value);
    const type = el.getAttribute('data-type');
    if (type) s.type = type;
    const src = el.getAttribute('data-src');
    if (src) {
      s.async = false; // in document order, like parser-inserted scripts
      s.src = src;
    } else s.text = el.textContent || '';
    el.replaceWith(s);
  }
}

export function blocker(has: Has) {
  const scan = (root: ParentNode) => {
    if ((root as Element).matches?.(BLOCKED)) apply(root as Element, has);
    root.querySelectorAll(BLOCKED).forEach((el) => apply(el, has));
  };
  const observer = new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) if (n.nodeType == 1) scan(n as Element);
  });
  observer.observe(document.documentElement, { childList: true, subtree: true });
  return {
    run: () => scan(document),
    stop: () => observer.disconnect(),
  };
}

/**
 * Deletes the cookies whose names match `patterns` (`*` matches any run of characters), for path `/` on the
 * current host and every parent domain (a cookie set for `.example.com` from `www.example.com` included).
 */
export function removeCookies(patterns: string[]): void {
  if (!patterns.length) return;
  const re = new RegExp('^(' + patterns.map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')).join('|') + ')$');
  const labels = location.hostname.split('.');
  for (const c of document.cookie.split(';')) {
    const name = c.split('=')[0].trim();
    if (!name || !re.test(name)) continue;
    for (let i = 0; i <= labels.length; i++) {
      document.cookie = name + '=;expires=Thu, 01 Jan 1970 00:00:00 GMT;path=/' + (i < labels.length ? ';domain=' + labels.slice(i).join('.') : '');
    }
  }
}
