// The scan report as a download (GET /scans/:scanId?format=json|csv|html): the stored report with its
// hash, like publish evidence (src/evidence). The html page loads and runs nothing (EVIDENCE_HTML_CSP) and
// escapes every string the scanned site could have chosen (cookie names, URLs, hosts).
import { stringify } from 'csv-stringify/sync';
import { CSV_CAST } from '../csv.js';
import { esc } from '../evidence/html.js';
import { packageHash } from '../evidence/package.js';
import type { ScanReport } from './run.js';
import { FINDING_TYPES, type Finding, type FindingType } from './findings.js';
import { describeLifetime, type InventoryItem } from './inventory.js';
import { hasPrivacyLink, LINK_KINDS, type LinkKind, type PageForms, type PageLinks } from './links.js';
import type { OriginTransport, TransportReport } from './transport.js';
import { webSocketRows, webSocketsHtml } from './websockets.js';

export interface ReportDocument {
  project: { id: string; organizationId: string; name: string; slug: string };
  report: ScanReport;
  generatedAt: Date;
}

/** Whether the stored report still hashes to its reportHash. */
export function reportHashMatches(report: ScanReport): boolean {
  const { hashes, ...rest } = report;
  return packageHash(rest) === hashes.reportHash;
}

function metaRows({ project, report, generatedAt }: ReportDocument): [string, string | number][] {
  return [
    ['project.id', project.id],
    ['project.name', project.name],
    ['scan.id', report.scan.id],
    ['scan.trigger', report.scan.trigger],
    ['scan.urls', report.scan.urls.join(' ')],
    ['scan.followLinks', report.scan.followLinks],
    ['scan.startedAt', report.scan.startedAt],
    ['scan.finishedAt', report.scan.finishedAt],
    ['versionNumber', report.versionNumber ?? ''],
    ['browser', `${report.browser.name} ${report.browser.version}`],
    ['catalogue', `${report.catalogue.source} @ ${report.catalogue.commit} (${report.catalogue.date})`],
    ['trackerList', report.trackerList ? `${report.trackerList.source} (${report.trackerList.date}, sha256 ${report.trackerList.sha256})` : ''],
    ['hashes.reportHash', report.hashes.reportHash],
    ['generatedAt', generatedAt.toISOString()],
  ];
}

/** One row per observation: every cookie, storage key, request to another site and refused request of every visit. */
function observationRows(report: ScanReport): (string | number | boolean)[][] {
  const rows: (string | number | boolean)[][] = [];
  for (const page of report.pages) {
    for (const visit of page.visits) {
      const base = [page.url, visit.kind];
      for (const c of visit.cookies) rows.push([...base, 'cookie', c.name, c.domain, c.party, c.expires ?? 'session', c.httpOnly, c.secure, c.sameSite, c.setBy ? `${c.setBy.type} ${c.setBy.url}` : '']);
      for (const s of visit.storage) rows.push([...base, `${s.area}Storage`, s.key, s.origin ?? '', s.party ?? 'first', '', '', '', '', '']);
      for (const r of visit.requests) rows.push([...base, `request:${r.resourceType}`, r.url, r.host, 'third', '', '', '', '', r.initiator ?? '']);
      for (const r of visit.refused) rows.push([...base, 'refused', r.target, r.host, '', '', '', '', '', r.reason]);
      rows.push(...webSocketRows(page.url, visit));
    }
  }
  return rows;
}

const LINK_KIND_NAMES: Record<LinkKind, string> = { privacy: 'privacy policy', imprint: 'imprint', cookies: 'cookie policy', terms: 'terms' };

/** Per page: what its links and forms show (pages of reports made before links were read have no row). */
function pageLinkRows(report: ScanReport): (string | number | boolean)[][] {
  return report.pages
    .filter((page) => page.links || page.forms)
    .map((page) => {
      const links = page.links;
      const found = (kind: LinkKind) => (!links ? '' : links.kindsFound.includes(kind) ? 'found' : 'none found');
      const linksCut = links ? links.cut.anchors + links.cut.thirdParty + links.cut.keywords : '';
      return [page.url, page.forms?.servedOverHttp ?? '', links?.firstParty ?? '', links?.thirdPartyCount ?? '', links?.thirdParty.filter((l) => l.social).length ?? '', ...LINK_KINDS.map(found), page.forms?.insecure.length ?? '', linksCut, page.forms?.cut ?? ''];
    });
}

/** Each third-party link and each first-party link that names a policy, once per page. */
function linkRows(report: ScanReport): string[][] {
  return report.pages.flatMap((page) => {
    const links = page.links;
    if (!links) return [];
    const kindsOf = new Map(links.keywords.map((link) => [link.url, link.kinds.join(' ')]));
    return [
      ...links.thirdParty.map((l) => [page.url, l.url, l.host, 'third', l.social ?? '', kindsOf.get(l.url) ?? '', l.text]),
      ...links.keywords.filter((l) => l.party === 'first').map((l) => [page.url, l.url, l.host, 'first', '', l.kinds.join(' '), l.text]),
    ];
  });
}

function formRows(report: ScanReport): (string | boolean)[][] {
  return report.pages.flatMap((page) => (page.forms?.insecure ?? []).map((f) => [page.url, f.action, f.method, f.password, f.email, page.forms!.servedOverHttp]));
}

/** One row per checked origin: its HTTPS redirect, TLS, certificate and HSTS (transport.ts). */
function transportRows(transport: TransportReport): (string | number | boolean)[][] {
  return transport.origins.map(({ origin, httpsRedirect: r, tls: t }) => [
    origin,
    r.url,
    r.chain.map((step) => `${step.status ?? step.error ?? 'no answer'}${step.location ? ` ${step.location}` : ''}`).join(' | '),
    r.redirectsToHttps,
    r.fallsBackToHttp,
    r.error ?? '',
    t.url,
    t.protocol ?? '',
    t.cipher?.standardName ?? '',
    t.authorized,
    t.authorizationError ?? '',
    t.certificate?.subject ?? '',
    t.certificate?.issuer ?? '',
    t.certificate?.subjectAltNames.join(' ') ?? '',
    t.certificate?.hostMatches ?? '',
    t.certificate?.validFrom ?? '',
    t.certificate?.validTo ?? '',
    t.certificate?.daysLeft ?? '',
    t.hsts?.header ?? '',
    t.problems.join(' '),
    t.error ?? '',
  ]);
}

/**
 * Blocks separated by an empty line, each with its header row: field/value, findings, observations, inventory;
 * then (reports since links and forms are read) per page, links, and forms that send over plain http; then, in
 * reports with the transport check, one row per origin (HTTPS redirect, TLS, HSTS).
 */
export function renderReportCsv(document: ReportDocument): string {
  const options = { cast: CSV_CAST };
  const findings = document.report.findings.map((f) => [f.type, f.pageUrl, f.subject.kind, f.subject.name, f.category ?? '', f.vendor ?? '', f.suggestedPurposeKey ?? '', JSON.stringify(f.evidence)]);
  return [
    stringify([['field', 'value'], ...metaRows(document)], options),
    stringify([['finding.type', 'finding.pageUrl', 'finding.kind', 'finding.name', 'finding.category', 'finding.vendor', 'finding.suggestedPurposeKey', 'finding.evidence'], ...findings], options),
    stringify([['page', 'visit', 'kind', 'name', 'domainOrHost', 'party', 'expires', 'httpOnly', 'secure', 'sameSite', 'setByOrInitiator'], ...observationRows(document.report)], options),
    stringify(
      [
        ['inventory.kind', 'inventory.name', 'inventory.category', 'inventory.vendor', 'inventory.description', 'inventory.party', 'inventory.lifetime', 'inventory.where', 'inventory.visits', 'inventory.pages'],
        ...(document.report.inventory ?? []).map((i) => [i.kind, i.name, i.category, i.vendor ?? '', i.description ?? '', i.party, describeLifetime(i.lifetime), i.where.join(' '), i.visits.join(' '), i.pages.join(' ')]),
      ],
      options,
    ),
    stringify(
      [
        ['page.url', 'page.servedOverHttp', 'page.firstPartyLinks', 'page.thirdPartyLinks', 'page.socialLinks', ...LINK_KINDS.map((kind) => `page.${kind}Link`), 'page.insecureForms', 'page.linksCut', 'page.formsCut'],
        ...pageLinkRows(document.report),
      ],
      options,
    ),
    stringify([['link.page', 'link.url', 'link.host', 'link.party', 'link.social', 'link.kinds', 'link.text'], ...linkRows(document.report)], options),
    stringify([['form.page', 'form.action', 'form.method', 'form.password', 'form.email', 'form.pageServedOverHttp'], ...formRows(document.report)], options),
    ...(document.report.transport
      ? [
          stringify(
            [
              [
                'transport.origin', 'transport.httpUrl', 'transport.chain', 'transport.redirectsToHttps', 'transport.fallsBackToHttp', 'transport.redirectError',
                'transport.httpsUrl', 'transport.protocol', 'transport.cipher', 'transport.authorized', 'transport.authorizationError',
                'transport.certificate.subject', 'transport.certificate.issuer', 'transport.certificate.subjectAltNames', 'transport.certificate.hostMatches',
                'transport.certificate.validFrom', 'transport.certificate.validTo', 'transport.certificate.daysLeft', 'transport.hsts', 'transport.problems', 'transport.tlsError',
              ],
              ...transportRows(document.report.transport),
            ],
            options,
          ),
        ]
      : []),
  ].join('\n');
}


// --- The HTML report: a to-do list first (counts, pages, findings), then what was seen, then the proof ---

/** What each finding type means, and what the operator does about it. */
const FINDING_TEXT: Record<FindingType, { title: string; todo: string }> = {
  before_consent: { title: 'Set or sent before any decision', todo: 'Hold it back until its purpose is granted (data-consent on its script or frame).' },
  after_reject: { title: 'Still set or sent after Reject all', todo: 'Hold it back until its purpose is granted; the visitor refused it.' },
  unclassified_request: { title: 'Request to a host no catalogue or tracker list knows, before any decision', todo: 'Judge it: if it tracks or profiles, hold it back until consent.' },
  unmapped: { title: 'Cookie listed in no purpose', todo: 'Add it to the suggested purpose (console, Scans), then publish.' },
  sdk_missing: { title: 'Page without the SDK and this project’s key', todo: 'Add the SDK snippet with this project’s publishable key.' },
  banner_missing: { title: 'No banner before a decision', todo: 'Check the SDK loads and its config answers on this page.' },
  insecure_form: { title: 'Form that sends over plain http', todo: 'Serve the page and the form’s action over https: what visitors type travels in clear text.' },
  no_https_redirect: { title: 'Plain http without a redirect to https', todo: 'Redirect http://<host>/ (and every http URL) to https, and never back to http.' },
  tls_invalid: { title: 'Certificate or TLS a browser would not trust', todo: 'Serve a certificate from a trusted authority that names the host and has not expired.' },
  gcm_missing_default: {
    title: 'Google tag sent a hit before any Consent Mode default',
    todo: "Set the defaults before the Google tag loads: put the SDK's script, with data-google-consent-mode, above the tag (or gtag('consent', 'default', …) first).",
  },
  gcm_granted_before_decision: {
    title: 'Google tag applied granted consent before any decision',
    todo: 'Make every Consent Mode default denied until the visitor decides: remove a granted default or an early update (the SDK with data-google-consent-mode sets them denied).',
  },
  gcm_granted_after_reject: {
    title: 'Google tag applied granted consent after Reject all',
    todo: "Let the SDK send the visitor's decision to Consent Mode (data-google-consent-mode, its purposes' Google signals) and remove other code that grants.",
  },
  gcm_not_updated_after_accept: {
    title: 'Google tag still denied after Accept all',
    todo: "Send the decision to Consent Mode: turn on the SDK's Google Consent Mode (data-google-consent-mode) and map each purpose to its Google signals.",
  },
};

// --- Transport: one card per origin (HTTPS redirect, TLS, HSTS); reports before the check have none ---

const DAY_S = 86_400;

function stepLine(step: OriginTransport['httpsRedirect']['chain'][number]): string {
  const answer = step.status !== null ? `HTTP ${step.status}` : `<span class="bad">${esc(step.error ?? 'no answer')}</span>`;
  const to = step.location ? ` → <span class="url">${esc(step.location)}</span>` : '';
  return `<li><span class="url">${esc(step.url)}</span>: ${answer}${to}</li>`;
}

function transportCard({ origin, httpsRedirect: r, tls: t }: OriginTransport): string {
  const answered = r.chain[0]?.status !== null && r.chain.length > 0;
  const redirect = r.redirectsToHttps
    ? '<span class="ok">redirects to https</span>'
    : answered
      ? '<span class="bad">no redirect to https</span>'
      : '<span class="muted">no plain http answer</span>';
  const fallback = r.fallsBackToHttp ? ' <span class="bad">an https step falls back to http</span>' : '';
  const c = t.certificate;
  const session = t.protocol
    ? `${esc(t.protocol)}, <code>${esc(t.cipher?.standardName ?? '')}</code>`
    : `<span class="${t.used ? 'bad' : 'muted'}">no TLS connection${t.error ? `: ${esc(t.error)}` : ''}</span>`;
  const trust = !t.protocol ? '' : t.authorized ? '<span class="ok">trusted, names the host</span>' : `<span class="bad">not trusted</span> <code>${esc(t.authorizationError ?? '')}</code>`;
  const days = c?.daysLeft ?? null;
  const validity = c ? `${esc(c.validFrom ?? '?')} to ${esc(c.validTo ?? '?')} <span class="${days !== null && days < 0 ? 'bad' : days !== null && days < 14 ? 'warn' : 'muted'}">(${days === null ? 'unknown' : days < 0 ? `expired ${-days} days ago` : `${days} days left`})</span>` : '';
  const hsts = !t.protocol
    ? '<span class="muted">not checked</span>'
    : t.hsts
      ? `<code>${esc(t.hsts.header)}</code> <span class="muted">(${t.hsts.maxAge === null ? 'no valid max-age' : `${Math.floor(t.hsts.maxAge / DAY_S)} days`}${t.hsts.includeSubDomains ? ', subdomains' : ''}${t.hsts.preload ? ', preload' : ''})</span>`
      : '<span class="warn">none</span>';
  const rows: [string, string][] = [
    ['HTTPS redirect', `${redirect}${fallback}${r.error ? ` <span class="muted">(${esc(r.error)})</span>` : ''}<ul class="visits">${r.chain.map(stepLine).join('')}</ul>`],
    ['TLS', `<span class="url">${esc(t.url)}</span>: ${session}${t.protocol ? ` · ${trust}` : ''}`],
    ...(c
      ? ([
          ['Certificate', `${esc(c.subject)}<br><span class="muted">issued by</span> ${esc(c.issuer)}${c.selfSigned ? ' <span class="bad">(self-signed)</span>' : ''}`],
          ['Names', `${c.subjectAltNames.map((name) => `<code>${esc(name)}</code>`).join(' ') || '<span class="muted">none</span>'}${c.subjectAltNamesCut ? ` <span class="muted">and ${c.subjectAltNamesCut} more</span>` : ''}${c.hostMatches ? '' : ' <span class="bad">(not this host)</span>'}`],
          ['Valid', validity],
        ] as [string, string][])
      : []),
    ['HSTS', hsts],
  ];
  return `<li class="originline"><span class="url">${esc(origin)}</span> ${t.problems.length || (answered && !r.redirectsToHttps) ? '<span class="bad">to fix</span>' : '<span class="ok">nothing to do</span>'}
<table class="facts">${rows.map(([name, value]) => `<tr><th scope="row">${name}</th><td>${value}</td></tr>`).join('')}</table></li>`;
}

function transportSection(transport: TransportReport | undefined): string {
  if (!transport) return '';
  const notChecked = transport.originsNotChecked ? `<p class="muted">${count(transport.originsNotChecked, 'more origin')} not checked (at most ${transport.limits.origins}).</p>` : '';
  return `<h2 id="transport">HTTPS and TLS (${count(transport.origins.length, 'origin')})</h2>
  <p class="muted">As the EDPS Website Evidence Collector checks it: does <code>http://</code> redirect to https, and what certificate and TLS does the https origin present (Node's TLS and root store; no cipher suite enumeration or vulnerability tests).</p>
  <ul class="pages">${transport.origins.map(transportCard).join('')}</ul>${notChecked}`;
}

type Page = ScanReport['pages'][number];
type Visit = Page['visits'][number];

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function visitLine(visit: Visit): string {
  const status = visit.status === null ? 'no answer' : `HTTP ${visit.status}`;
  const redirect = visit.finalUrl && visit.finalUrl !== visit.url ? ` → <span class="url">${esc(visit.finalUrl)}</span>` : '';
  const error = visit.error ? ` <span class="bad">${esc(visit.error)}</span>` : '';
  const truncated = visit.truncated ? ' <span class="bad">(cut at the byte limit)</span>' : '';
  return `<li><b>${esc(visit.kind)}</b>: ${status}${redirect}${error}${truncated}</li>`;
}

function pageLine(page: Page, findings: Finding[], report: ScanReport): string {
  const mine = findings.filter((f) => f.pageUrl === page.url);
  const failed = page.visits.some((v) => v.error || (v.status !== null && v.status >= 400));
  const state = failed ? '<span class="bad">visit failed</span>' : mine.length ? `<span class="warn">${count(mine.length, 'finding')}</span>` : '<span class="ok">nothing to do</span>';
  return `<li class="pageline"><span class="url">${esc(page.url)}</span> ${state}<ul class="visits">${page.visits.map(visitLine).join('')}</ul>${webSocketsHtml(page.visits)}${artifactLinks(page, report)}</li>`;
}

/**
 * The page's screenshot and HAR files as links to the artifact route, relative to this report's own address
 * (`…/scans/<id>?format=html` → `…/scans/<id>/artifacts/<name>`): a link, never an image, so the page still loads
 * nothing (EVIDENCE_HTML_CSP). Files left out over a cap are named with the reason.
 */
function artifactLinks(page: Page, report: ScanReport): string {
  const artifacts = report.artifacts;
  if (!artifacts) return '';
  const files = artifacts.files.filter((file) => file.pageUrl === page.url);
  const skipped = artifacts.skipped.filter((file) => file.pageUrl === page.url);
  if (!files.length && !skipped.length) return '';
  const what = (name: string) => (name.endsWith('.jpg') ? 'screenshot' : 'HAR');
  const links = files.map(
    (file) => `<a href="${esc(report.scan.id)}/artifacts/${encodeURIComponent(file.name)}" download>${what(file.name)} (${esc(file.visit)})</a> <span class="muted">${esc(Math.ceil(file.size / 1024))} KB, sha256 <span class="url">${esc(file.sha256)}</span></span>`,
  );
  const notes = skipped.map((file) => `<span class="warn">${what(file.name)} (${esc(file.visit)}) not kept:</span> ${esc(file.reason)}`);
  return `<ul class="artifacts">${[...links, ...notes].map((line) => `<li>${line}</li>`).join('')}</ul>`;
}

function findingCard(f: Finding): string {
  const suggested = f.suggestedPurposeKey ? `<p>Suggested purpose: <b>${esc(f.suggestedPurposeKey)}</b></p>` : '';
  const classified = f.category ? `<span class="tag ${esc(f.category)}">${esc(f.category)}</span>${f.vendor ? ` ${esc(f.vendor)}` : ''}` : '';
  return `<li class="finding">
  <p class="subject"><span class="kind">${esc(f.subject.kind)}</span> <code>${esc(f.subject.name)}</code> ${classified}</p>
  ${f.description ? `<p>${esc(f.description)}</p>` : ''}
  ${f.subject.kind === 'page' ? '' : `<p class="muted">on <span class="url">${esc(f.pageUrl)}</span></p>`}
  ${suggested}
  <details><summary>Evidence</summary><pre>${esc(JSON.stringify(f.evidence, null, 2))}</pre></details>
</li>`;
}

function inventoryRows(items: InventoryItem[]): string {
  return items
    .map(
      (i) => `<tr><td><code>${esc(i.name)}</code><br><span class="muted">${esc(i.kind)}${i.where.length ? `, ${esc(i.where.join(', '))}` : ''}</span></td>
<td><span class="tag ${esc(i.category)}">${esc(i.category)}</span><br>${esc(i.vendor ?? '')}</td>
<td>${esc(i.description ?? '')}</td><td>${esc(i.party)}</td><td>${esc(describeLifetime(i.lifetime))}</td>
<td>${esc(i.visits.join(', '))}<br><span class="muted">${count(i.pages.length, 'page')}</span></td></tr>`,
    )
    .join('');
}

/** Pages whose before visit read links and found none naming a privacy policy. */
const withoutPrivacyLink = (report: ScanReport) => report.pages.filter((page) => page.links && !hasPrivacyLink(page.links));

function policyLines(links: PageLinks): string {
  return LINK_KINDS.map((kind) => {
    const found = links.keywords.filter((link) => link.kinds.includes(kind));
    const name = LINK_KIND_NAMES[kind];
    if (!links.kindsFound.includes(kind)) return `<li class="${kind === 'privacy' ? 'bad' : 'muted'}">No ${esc(name)} link found</li>`;
    if (!found.length) return `<li>${esc(name)}: found (its entry was beyond the list’s cap)</li>`;
    return `<li>${esc(name[0]!.toUpperCase() + name.slice(1))}: ${found
      .slice(0, 3)
      .map((link) => `“${esc(link.text || '(no text)')}” <span class="url">${esc(link.url)}</span>${link.party === 'third' ? ' <span class="muted">(another site)</span>' : ''}`)
      .join('; ')}${found.length > 3 ? ` and ${found.length - 3} more` : ''}</li>`;
  }).join('');
}

function formLines(forms: PageForms): string {
  const fields = (f: PageForms['insecure'][number]) => [f.password && 'a password field', f.email && 'an e-mail field'].filter(Boolean).join(' and ');
  const lines = forms.insecure.map(
    (f) => `<li><span class="bad">Form sends over plain http</span>: ${esc(f.method.toUpperCase())} <span class="url">${esc(f.action)}</span>${fields(f) ? `, with ${fields(f)}` : ''}</li>`,
  );
  if (forms.servedOverHttp) lines.unshift('<li class="warn">The page itself was served over plain http</li>');
  if (forms.cut) lines.push(`<li class="muted">${count(forms.cut, 'more form')} not listed (cap)</li>`);
  return lines.length ? `<ul class="forms">${lines.join('')}</ul>` : `<p class="muted">${forms.total ? `${count(forms.total, 'form')}, none sending over plain http.` : 'No form.'}</p>`;
}

/** A page's links and forms, from its before visit: policies first, then forms, then every third-party link (folded). */
function linksSection(page: Page): string {
  const { links, forms } = page;
  if (!links && !forms) return '';
  let body = '';
  if (links) {
    const social = links.thirdParty.filter((l) => l.social);
    const platforms = [...new Set(social.map((l) => l.social!))];
    const cut = [
      links.cut.anchors && `${count(links.cut.anchors, 'more link')} on the page not read`,
      links.cut.thirdParty && `${count(links.cut.thirdParty, 'link')} to other sites not listed`,
      links.cut.keywords && `${count(links.cut.keywords, 'policy link')} not listed`,
    ].filter(Boolean);
    body += `<p>${count(links.firstParty, 'link')} to this site, ${count(links.thirdPartyCount, 'link')} to other sites${platforms.length ? `, to social platforms: ${platforms.map((p) => `<span class="tag">${esc(p)}</span>`).join(' ')}` : ''}.${cut.length ? ` <span class="muted">Caps: ${cut.join(', ')}.</span>` : ''}${(links.cut as { report?: boolean }).report ? ' <span class="muted">Lists left out to keep the report under its size cap.</span>' : ''}</p>`;
    body += `<ul class="policies">${policyLines(links)}</ul>`;
  }
  if (forms) body += formLines(forms);
  if (links?.thirdParty.length) {
    const rows = [...links.thirdParty]
      .sort((a, b) => Number(!a.social) - Number(!b.social))
      .map((l) => `<tr><td><code>${esc(l.host)}</code>${l.social ? ` <span class="tag">${esc(l.social)}</span>` : ''}</td><td>${esc(l.text)}</td><td class="url">${esc(l.url)}</td></tr>`)
      .join('');
    body += `<details><summary>${count(links.thirdParty.length, 'link')} to other sites</summary><div class="scroll"><table class="links"><thead><tr><th>Host</th><th>Text</th><th>Link (without query)</th></tr></thead><tbody>${rows}</tbody></table></div></details>`;
  }
  return `<li class="pagelinks"><p class="url"><b>${esc(page.url)}</b></p>${body}</li>`;
}

/** Each thing a page showed, once, with the visits that saw it (the visits repeat most of what they see). */
function dedupedObservations(report: ScanReport): string {
  const rows = new Map<string, { cells: unknown[]; visits: string[] }>();
  for (const page of report.pages) {
    for (const visit of page.visits) {
      const add = (key: string, cells: unknown[]) => {
        const row = rows.get(`${page.url} ${key}`) ?? { cells: [page.url, ...cells], visits: [] };
        // A visit may see a thing twice (a request before and after its decision): named once.
        if (!row.visits.includes(visit.kind)) row.visits.push(visit.kind);
        rows.set(`${page.url} ${key}`, row);
      };
      for (const c of visit.cookies) add(`cookie ${c.name} ${c.domain} ${c.path}`, ['cookie', c.name, `${c.domain}${c.path}`, `${c.party}, ${c.expires ?? 'session'}, ${c.httpOnly ? 'HttpOnly ' : ''}${c.secure ? 'Secure ' : ''}SameSite=${c.sameSite}`, c.setBy ? `${c.setBy.type}: ${c.setBy.url}` : '']);
      for (const st of visit.storage) add(`storage ${st.area} ${st.origin ?? ''} ${st.key}`, [`${st.area}Storage`, st.key, st.origin ?? '', '', '']);
      for (const r of visit.requests) add(`request ${r.url} ${r.resourceType}`, [`request (${r.resourceType})`, r.url, r.host, '', r.initiator ?? '']);
      for (const r of visit.refused) add(`refused ${r.target}`, ['refused', r.target, r.host, r.reason, '']);
    }
  }
  return [...rows.values()]
    .map(({ cells: [page, kind, name, where, detail, by], visits }) => `<tr><td class="url">${esc(page)}</td><td>${esc(kind)}</td><td><code>${esc(name)}</code></td><td class="url">${esc(where)}</td><td>${esc(detail)}</td><td class="url">${esc(by)}</td><td>${esc(visits.join(', '))}</td></tr>`)
    .join('');
}

export function renderReportHtml(document: ReportDocument): string {
  const { project, report } = document;
  const ok = reportHashMatches(report);
  // Reports stored before the inventory existed: the same function over their observations (catalogue-free: unknown).
  const inventory = report.inventory ?? [];
  const byType = FINDING_TYPES.map((type) => ({ type, list: report.findings.filter((f) => f.type === type) }));
  const todo = byType
    .filter(({ list }) => list.length)
    .map(({ type, list }) => `<tr><th scope="row"><a href="#${type}">${esc(FINDING_TEXT[type].title)}</a></th><td class="num">${list.length}</td><td>${esc(FINDING_TEXT[type].todo)}</td></tr>`)
    .join('');
  const perPage = report.pages
    .map((page) => {
      const mine = report.findings.filter((f) => f.pageUrl === page.url);
      const counts = FINDING_TYPES.map((type) => [type, mine.filter((f) => f.type === type).length] as const).filter(([, n]) => n);
      return `<li><span class="url">${esc(page.url)}</span>: ${counts.length ? counts.map(([type, n]) => `${n} ${esc(type)}`).join(', ') : 'none'}</li>`;
    })
    .join('');
  const sections = byType
    .filter(({ list }) => list.length)
    .map(({ type, list }) => `<section id="${type}"><h3>${esc(FINDING_TEXT[type].title)} (${list.length})</h3><p class="muted">${esc(type)}: ${esc(FINDING_TEXT[type].todo)}</p><ul class="findings">${list.map(findingCard).join('')}</ul></section>`)
    .join('');
  const noPrivacy = withoutPrivacyLink(report);
  const linksSections = report.pages.map(linksSection).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Site scan: ${esc(project.name)}, ${esc(report.scan.finishedAt)}</title>
<style>
  * { box-sizing: border-box; }
  body { margin: 0; background: #e9ecef; color: #1b1f24; font: 15px/1.5 -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
  .page { max-width: 1100px; margin: 24px auto; background: #fff; padding: 28px 36px; }
  h1 { margin: 0 0 4px; font-size: 1.6em; } h2 { color: #1f4e79; border-bottom: 1px solid #d8dde3; margin-top: 32px; } h3 { margin: 20px 0 4px; }
  /* Words never break; only a token too long for any line (a URL, a hash) wraps where it must. */
  body, td, th { overflow-wrap: break-word; word-break: normal; hyphens: none; }
  .url, code, pre { overflow-wrap: anywhere; }
  code { font-size: .92em; background: #f4f6f8; padding: 0 3px; border-radius: 3px; }
  table { border-collapse: collapse; width: 100%; font-size: .93em; }
  td, th { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid #d8dde3; }
  th { background: #f4f6f8; font-weight: 600; } td.num { text-align: right; font-weight: 700; white-space: nowrap; }
  .scroll { overflow-x: auto; } .scroll table { min-width: 720px; } .scroll code { overflow-wrap: normal; white-space: nowrap; }
  ul.findings, ul.pages, ul.pagelinks { list-style: none; padding: 0; margin: 0; }
  li.finding, li.pageline, li.pagelinks { border: 1px solid #d8dde3; border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
  li.finding p { margin: 4px 0; } .subject { font-weight: 600; } .kind { color: #57606a; font-weight: 400; }
  ul.visits, ul.artifacts { margin: 4px 0 0; padding-left: 20px; font-size: .93em; }
  li.pagelinks p { margin: 4px 0; } ul.policies, ul.forms { margin: 4px 0; padding-left: 20px; } .scroll table.links { min-width: 560px; }
  li.originline { border: 1px solid #d8dde3; border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
  table.facts { margin-top: 6px; } table.facts th { width: 9em; background: none; font-weight: 600; } table.facts ul.visits { padding-left: 16px; }
  @media (max-width: 600px) { table.facts th, table.facts td { display: block; width: auto; border: 0; padding: 2px 0; } table.facts tr { display: block; border-bottom: 1px solid #d8dde3; padding: 4px 0; } }
  details summary { cursor: pointer; color: #1f4e79; } pre { white-space: pre-wrap; background: #f4f6f8; padding: 8px; font-size: .85em; margin: 4px 0; }
  .tag { display: inline-block; font-size: .8em; font-weight: 600; padding: 0 6px; border-radius: 9px; background: #eaeef2; color: #1b1f24; }
  .tag.analytics { background: #fff1c2; } .tag.marketing { background: #ffd8d3; } .tag.necessary { background: #d5f5dc; } .tag.functional { background: #dbeafe; }
  .muted { color: #57606a; } .ok { color: #1c7c3a; font-weight: 600; } .warn { color: #9a6700; font-weight: 600; } .bad { color: #b42318; font-weight: 700; }
  @media (max-width: 600px) { .page { margin: 0; padding: 16px 14px; } h1 { font-size: 1.3em; } body { font-size: 14px; } }
</style>
</head>
<body>
<main class="page">
  <h1>Site scan: ${esc(project.name)}</h1>
  <p class="muted">${esc(report.scan.finishedAt)} · version ${esc(report.versionNumber ?? 'none')} live · ${esc(report.browser.name)} ${esc(report.browser.version)} · ${count(report.pages.length, 'page')} · reportHash <span class="${ok ? 'ok' : 'bad'}">${ok ? '&#10003; matches' : '&#10007; MISMATCH'}</span></p>

  <h2>To do</h2>
  ${todo ? `<table><thead><tr><th>Finding</th><th>Count</th><th>What to do</th></tr></thead><tbody>${todo}</tbody></table>` : '<p class="ok">No findings: nothing to do.</p>'}
  ${noPrivacy.length ? `<p class="bad">No privacy policy link found on ${count(noPrivacy.length, 'page')}: ${noPrivacy.map((page) => `<span class="url">${esc(page.url)}</span>`).join(', ')}</p>` : ''}
  <h3>Per page</h3>
  <ul>${perPage}</ul>
  ${transportSection(report.transport)}

  <h2>Pages</h2>
  <ul class="pages">${report.pages.map((page) => pageLine(page, report.findings, report)).join('')}</ul>

  <h2>Findings (${report.findings.length})</h2>
  ${sections || '<p class="muted">None.</p>'}

  ${linksSections ? `<h2>Links and forms</h2>
  <p class="muted">From each page’s first visit: links to other sites (social platforms named), links to the privacy policy, imprint, cookie policy and terms, and forms that send over plain http.</p>
  <ul class="pagelinks">${linksSections}</ul>` : ''}

  <h2>Inventory: every cookie, storage key and third-party host (${inventory.length})</h2>
  <p class="muted">Seen in any visit, once each, classified by the catalogue (${esc(report.catalogue.source)}, ${esc(report.catalogue.date)})${report.trackerList ? ` and EasyPrivacy (${esc(report.trackerList.date)})` : ''}.</p>
  <div class="scroll"><table><thead><tr><th>Name</th><th>Category, vendor</th><th>Description</th><th>Party</th><th>Lifetime</th><th>Seen in</th></tr></thead><tbody>${inventoryRows(inventory)}</tbody></table></div>

  <h2>Every observation</h2>
  <details><summary>Each cookie, storage key, request and refused request, once per page, with the visits that saw it</summary>
  <div class="scroll"><table><thead><tr><th>Page</th><th>Kind</th><th>Name or URL</th><th>Domain or host</th><th>Details</th><th>Set by, initiator</th><th>Visits</th></tr></thead><tbody>${dedupedObservations(report)}</tbody></table></div>
  </details>

  <h2>Proof</h2>
  <table>${metaRows(document).map(([field, value]) => `<tr><th scope="row">${esc(field)}</th><td class="url">${esc(value)}</td></tr>`).join('')}
    <tr><th scope="row">reportHash recomputed</th><td class="${ok ? 'ok' : 'bad'}">${ok ? '&#10003; matches' : '&#10007; MISMATCH'}</td></tr>
  </table>
  <p>reportHash is the lowercase hex SHA-256 of the RFC 8785 (JCS) canonical JSON of the report (format=json) without <code>hashes</code>.</p>
</main>
</body>
</html>
`;
}
