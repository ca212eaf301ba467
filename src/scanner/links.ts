// What a page links to and where its forms send what visitors type (docs/scanner.md "Links and forms"), read
// in the *before* visit as the EDPS Website Evidence Collector reads them (its collector/inspector.js:
// `collectLinks`, `mapLinksToParties`, `filterSocialPlatforms`, `filterKeywords`, `unsafeWebforms`), with
// our own lists: links to other sites (social platforms named), links to the privacy policy, imprint, cookie
// policy and terms in six languages, and forms that send over plain http.
//
// The page's own evaluation reads at most LINK_CAPS of each and cuts every string; the page can replace the
// builtins that evaluation uses, so its answer is checked and capped again here.
import type { Page } from 'playwright-core';
import { getDomainWithoutSuffix } from 'tldts';
import { siteOf } from './catalogue.js';
import { VISIT_CAPS, type Collector, type VisitSession } from './visit-session.js';

export const LINK_KINDS = ['privacy', 'imprint', 'cookies', 'terms'] as const;
export type LinkKind = (typeof LINK_KINDS)[number];

/** A link to another site, once per URL (without query and fragment). */
export interface ThirdPartyLink {
  url: string;
  host: string;
  /** The link's text (or its aria-label, title or image alt), whitespace collapsed, cut to LINK_CAPS.textChars. */
  text: string;
  /** The social platform the host belongs to (SOCIAL_PLATFORMS), if any. */
  social?: string;
}

/** A link whose text or URL names a privacy policy, imprint, cookie policy or terms (first or third party). */
export interface KeywordLink {
  url: string;
  host: string;
  party: 'first' | 'third';
  text: string;
  kinds: LinkKind[];
}

export interface PageLinks {
  /** Distinct http(s) links (without fragment) to the page's own site, and to other sites, among those read. */
  firstParty: number;
  thirdPartyCount: number;
  thirdParty: ThirdPartyLink[];
  keywords: KeywordLink[];
  /** The kinds some link read names, also when its entry was beyond the cap (so "no privacy policy link" is never a cap's doing). */
  kindsFound: LinkKind[];
  /** What was not kept: anchors beyond `anchors` read, third-party and keyword links beyond their caps. */
  cut: { anchors: number; thirdParty: number; keywords: number };
}

/** A form whose action (or, without one, the page itself) is plain `http:`: what a visitor types travels in clear text. */
export interface InsecureForm {
  /** The resolved action, without its query. */
  action: string;
  method: string;
  /** The form holds a password field. */
  password: boolean;
  /** The form holds an e-mail field (type=email, autocomplete email, or a name or id saying e-mail). */
  email: boolean;
}

export interface PageForms {
  /** The page itself (its final URL after redirects) was served over plain http. */
  servedOverHttp: boolean;
  /** Forms on the page (at most LINK_CAPS.forms read). */
  total: number;
  insecure: InsecureForm[];
  /** Forms beyond those read, and insecure forms beyond the cap. */
  cut: number;
}

/** What the *before* visit keeps about a page's links and forms; moved to the page in the report (run.ts). */
export interface PageLinksAndForms {
  links: PageLinks;
  forms: PageForms;
}

export const LINK_CAPS = { anchors: 1000, thirdPartyLinks: 200, keywordLinks: 50, forms: 100, insecureForms: 20, linkUrlChars: 500, linkTextChars: 100 };

/**
 * Social platforms by registrable domain. Started from the EDPS collector's `assets/social-media-platforms.yml`
 * (read at 7612b35), keeping the social networks and messengers and leaving out what is not one (docs.google.com,
 * bit.ly, dropbox.com, eventbrite.com, maps); added: x.com and t.co, xing.com (German-speaking Europe's
 * LinkedIn), Telegram, WhatsApp's wa.me, Threads and Bluesky. Mastodon runs on thousands of hosts: not listed.
 */
const SOCIAL_SITES: Record<string, string> = {
  'facebook.com': 'facebook',
  'fb.com': 'facebook',
  'fb.me': 'facebook',
  'instagram.com': 'instagram',
  'twitter.com': 'x',
  'x.com': 'x',
  't.co': 'x',
  'linkedin.com': 'linkedin',
  'lnkd.in': 'linkedin',
  'youtube.com': 'youtube',
  'youtu.be': 'youtube',
  'youtube-nocookie.com': 'youtube',
  'tiktok.com': 'tiktok',
  'xing.com': 'xing',
  'whatsapp.com': 'whatsapp',
  'wa.me': 'whatsapp',
  't.me': 'telegram',
  'telegram.me': 'telegram',
  'telegram.org': 'telegram',
  'snapchat.com': 'snapchat',
  'threads.net': 'threads',
  'threads.com': 'threads',
  'bsky.app': 'bluesky',
  'reddit.com': 'reddit',
  'tumblr.com': 'tumblr',
  'flickr.com': 'flickr',
  'vimeo.com': 'vimeo',
  'medium.com': 'medium',
};
/** Platforms with a domain per country (pinterest.de, pinterest.co.uk): matched by the name before the public suffix. */
const SOCIAL_NAMES: Record<string, string> = { pinterest: 'pinterest', facebook: 'facebook', linkedin: 'linkedin' };

export const SOCIAL_PLATFORMS = [...new Set([...Object.values(SOCIAL_SITES), ...Object.values(SOCIAL_NAMES)])].sort();

export function socialPlatformOf(host: string): string | null {
  const site = siteOf(host);
  if (SOCIAL_SITES[site]) return SOCIAL_SITES[site];
  const name = getDomainWithoutSuffix(host, { allowPrivateDomains: true });
  return (name && SOCIAL_NAMES[name]) || null;
}

/**
 * Keywords per kind, matched against the link's text and its URL, both lowercased, without accents
 * (`Datenschutzerklärung` → `datenschutzerklarung`) and with every run of other characters as one space
 * (`/legal-notice` → ` legal notice`). English, German, French, Spanish, Italian, Dutch (and Portuguese where it
 * costs a word). The EDPS collector's `assets/keywords.yml` is English only and unclassified (privacy, legal,
 * personal data, data protection, cookie but not nocookie, disclaimer, login, analytics); its `(?<!no)cookie`
 * is kept, so a `youtube-nocookie.com` embed link is no cookie policy.
 */
const KEYWORDS: Record<LinkKind, RegExp> = {
  privacy: new RegExp(
    '\\b(' +
      [
        'privacy\\w*', 'data protection', 'personal data', 'gdpr', // en (privacy also it, nl: privacyverklaring, privacybeleid)
        'datenschutz\\w*', 'dsgvo', // de
        'confidentialite', 'vie privee', 'donnees personnelles', 'protection des donnees', 'rgpd', // fr
        'privacidad', 'privacidade', 'proteccion de datos', 'datos personales', // es, pt
        'riservatezza', 'protezione dei dati', 'dati personali', // it
        'gegevensbescherming', 'persoonsgegevens', // nl
      ].join('|') +
      ')\\b',
  ),
  imprint: new RegExp(
    '\\b(' +
      [
        'imprint', 'legal notices?', 'legal information', 'legal disclosure', 'site notice', 'disclaimer', // en
        'impressum', 'anbieterkennzeichnung', // de
        'mentions legales', // fr
        'aviso legal', 'nota legal', // es
        'note legali', 'colophon', // it
        'colofon', // nl
      ].join('|') +
      ')\\b',
  ),
  // cookie policy, cookie notice, Cookie-Richtlinie, politique de cookies, politica de cookies, cookiebeleid…
  cookies: /(?<!no)cookie|\btemoins\b/,
  terms: new RegExp(
    '\\b(' +
      [
        'terms', 'conditions of use', 'conditions of sale', // en
        'agb', '\\w*bedingungen', // de: Allgemeine Geschäftsbedingungen, Nutzungsbedingungen
        'conditions generales', 'conditions d utilisation', 'cgu', 'cgv', // fr
        'terminos', 'condiciones', 'termos', // es, pt
        'termini', 'condizioni', // it
        '\\w*voorwaarden', // nl: algemene voorwaarden, gebruiksvoorwaarden
      ].join('|') +
      ')\\b',
  ),
};

/** Lowercase, accents removed, every run of characters other than letters and digits one space. */
function normalize(text: string): string {
  return ` ${text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ')} `;
}

/** The kinds a link names, by its text or by its URL (host, path and query, decoded). */
export function linkKindsOf(text: string, url: URL): LinkKind[] {
  let where = `${url.hostname}${url.pathname}${url.search}`;
  try {
    where = decodeURIComponent(where);
  } catch {
    // a malformed escape: matched as written
  }
  const haystack = `${normalize(text)}|${normalize(where)}`;
  return LINK_KINDS.filter((kind) => KEYWORDS[kind].test(haystack));
}

/** What the page's evaluation answers (checked again in Node: the page can replace the builtins it uses). */
interface RawPage {
  links: unknown;
  anchorsTotal: unknown;
  forms: unknown;
  formsTotal: unknown;
}

/** Reads the page's anchors (href and text) and forms inside the page, capped there. */
export function readLinksAndForms(page: Page): Promise<RawPage> {
  return page.evaluate(
    ({ maxAnchors, maxForms, urlChars, textChars }) => {
      const anchors = document.querySelectorAll('a[href], area[href]');
      const links: [string, string][] = [];
      for (let i = 0; i < anchors.length && i < maxAnchors; i++) {
        const a = anchors[i] as HTMLAnchorElement;
        const href = a.href; // an SVG <a> answers an SVGAnimatedString: skipped, as the collector does
        if (typeof href !== 'string' || href.length > urlChars * 4) continue;
        const img = a.querySelector('img[alt]');
        const label = (a.textContent ?? '').slice(0, textChars * 4).replace(/\s+/g, ' ').trim() || a.getAttribute('aria-label') || a.getAttribute('title') || img?.getAttribute('alt') || '';
        links.push([href, String(label).slice(0, textChars * 4)]);
      }
      const forms: { action: string; method: string; password: boolean; email: boolean }[] = [];
      const all = document.querySelectorAll('form');
      for (let i = 0; i < all.length && i < maxForms; i++) {
        const form = all[i]!;
        // getAttribute, not form.action: a field named "action" shadows the property. No action (or an empty
        // one) submits to the document's own URL (HTML's form submission algorithm).
        const attribute = form.getAttribute('action');
        let action: string;
        try {
          action = attribute ? new URL(attribute, form.baseURI).href : document.URL;
        } catch {
          action = document.URL;
        }
        forms.push({
          action: action.slice(0, urlChars * 4),
          method: (form.getAttribute('method') || 'get').toLowerCase().slice(0, 20),
          password: form.querySelector('input[type="password" i]') !== null,
          email: form.querySelector('input[type="email" i], input[autocomplete~="email" i], input[name*="mail" i], input[id*="mail" i]') !== null,
        });
      }
      return { links, anchorsTotal: anchors.length, forms, formsTotal: all.length };
    },
    { maxAnchors: LINK_CAPS.anchors, maxForms: LINK_CAPS.forms, urlChars: LINK_CAPS.linkUrlChars, textChars: LINK_CAPS.linkTextChars },
  );
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);
const cutUrl = (url: URL) => (url.origin + url.pathname).slice(0, LINK_CAPS.linkUrlChars);
const cutText = (text: unknown) => String(text ?? '').replace(/\s+/g, ' ').trim().slice(0, LINK_CAPS.linkTextChars);

/** The page's links and forms as the report keeps them: parties by the Public Suffix List, capped, counted. */
export function linksAndFormsOf(raw: RawPage | null, pageSite: string, finalUrl: string | null): PageLinksAndForms {
  const rawLinks = (Array.isArray(raw?.links) ? raw.links : []).slice(0, LINK_CAPS.anchors);
  const links: PageLinks = { firstParty: 0, thirdPartyCount: 0, thirdParty: [], keywords: [], kindsFound: [], cut: { anchors: Math.max(0, count(raw?.anchorsTotal) - rawLinks.length), thirdParty: 0, keywords: 0 } };
  const distinct = new Set<string>();
  const listed = new Set<string>();
  const keyworded = new Set<string>();
  const found = new Set<LinkKind>();
  for (const entry of rawLinks) {
    if (!Array.isArray(entry)) continue;
    let url: URL;
    try {
      url = new URL(String(entry[0]));
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    url.hash = '';
    const party = siteOf(url.hostname) === pageSite ? 'first' : 'third';
    if (!distinct.has(url.href)) {
      distinct.add(url.href);
      if (party === 'first') links.firstParty++;
      else links.thirdPartyCount++;
    }
    const text = cutText(entry[1]);
    const kept = cutUrl(url);
    if (party === 'third' && !listed.has(kept)) {
      listed.add(kept);
      const social = socialPlatformOf(url.hostname);
      if (links.thirdParty.length >= LINK_CAPS.thirdPartyLinks) links.cut.thirdParty++;
      else links.thirdParty.push({ url: kept, host: url.hostname, text, ...(social ? { social } : {}) });
    }
    const kinds = linkKindsOf(text, url);
    for (const kind of kinds) found.add(kind);
    if (kinds.length && !keyworded.has(kept)) {
      keyworded.add(kept);
      if (links.keywords.length >= LINK_CAPS.keywordLinks) links.cut.keywords++;
      else links.keywords.push({ url: kept, host: url.hostname, party, text, kinds });
    }
  }

  links.kindsFound = LINK_KINDS.filter((kind) => found.has(kind));

  const rawForms = (Array.isArray(raw?.forms) ? raw.forms : []).slice(0, LINK_CAPS.forms);
  let servedOverHttp = false;
  try {
    servedOverHttp = finalUrl !== null && new URL(finalUrl).protocol === 'http:';
  } catch {
    // no page URL to judge
  }
  const forms: PageForms = { servedOverHttp, total: count(raw?.formsTotal), insecure: [], cut: Math.max(0, count(raw?.formsTotal) - rawForms.length) };
  for (const form of rawForms) {
    if (!form || typeof form !== 'object') continue;
    const { action, method, password, email } = form as Record<string, unknown>;
    let url: URL;
    try {
      url = new URL(String(action));
    } catch {
      continue;
    }
    if (url.protocol !== 'http:') continue;
    if (forms.insecure.length >= LINK_CAPS.insecureForms) forms.cut++;
    else forms.insecure.push({ action: cutUrl(url), method: String(method ?? 'get').slice(0, 20), password: password === true, email: email === true });
  }
  return { links, forms };
}

/** Whether any link on the page names a privacy policy (first or third party: a group's policy may live elsewhere). */
export const hasPrivacyLink = (links: PageLinks) => links.kindsFound.includes('privacy');

/** Whether a link is an http(s) page of the site. */
function sameSite(href: string, site: string): boolean {
  try {
    const url = new URL(href);
    return (url.protocol === 'http:' || url.protocol === 'https:') && siteOf(url.hostname) === site;
  } catch {
    return false;
  }
}

/**
 * The links and forms collector (before visits): the page's same-site links (what the scan follows, and the
 * decision visits' next page) and its links and forms as the report keeps them.
 */
export function collectLinks(session: VisitSession): Collector {
  const { page, result, pageSite } = session;
  return {
    async pageShown() {
      const anchors = await session.within(
        page.evaluate(
          ({ max, chars }) => {
            const all = document.querySelectorAll('a[href]');
            const hrefs: string[] = [];
            for (let i = 0; i < all.length && i < max; i++) {
              const href = (all[i] as HTMLAnchorElement).href;
              if (typeof href === 'string' && href.length <= chars) hrefs.push(href);
            }
            return { hrefs, total: all.length };
          },
          { max: VISIT_CAPS.linksLooked, chars: VISIT_CAPS.urlChars },
        ),
      );
      const hrefs = (Array.isArray(anchors?.hrefs) ? anchors.hrefs : []).slice(0, VISIT_CAPS.linksLooked).map((href) => String(href).slice(0, VISIT_CAPS.urlChars));
      const sameSiteLinks = [...new Set(hrefs.map((href) => href.split('#')[0]!).filter((href) => sameSite(href, pageSite)))];
      result.links = sameSiteLinks.slice(0, VISIT_CAPS.links);
      result.cut.links = Math.max(0, (Number(anchors?.total) || 0) - hrefs.length) + (sameSiteLinks.length - result.links.length);
      result.linksAndForms = linksAndFormsOf(await session.within(readLinksAndForms(page).catch(() => null)), pageSite, page.url());
    },
  };
}
