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
    }
  }
  return rows;
}

/** Four blocks separated by an empty line, each with its header row: field/value, findings, observations, inventory. */
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
};

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
  return `<li class="pageline"><span class="url">${esc(page.url)}</span> ${state}<ul class="visits">${page.visits.map(visitLine).join('')}</ul>${artifactLinks(page, report)}</li>`;
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
  ul.findings, ul.pages { list-style: none; padding: 0; margin: 0; }
  li.finding, li.pageline { border: 1px solid #d8dde3; border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
  li.finding p { margin: 4px 0; } .subject { font-weight: 600; } .kind { color: #57606a; font-weight: 400; }
  ul.visits, ul.artifacts { margin: 4px 0 0; padding-left: 20px; font-size: .93em; }
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
  <h3>Per page</h3>
  <ul>${perPage}</ul>

  <h2>Pages</h2>
  <ul class="pages">${report.pages.map((page) => pageLine(page, report.findings, report)).join('')}</ul>

  <h2>Findings (${report.findings.length})</h2>
  ${sections || '<p class="muted">None.</p>'}

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
