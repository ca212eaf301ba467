// The scan report as a download (GET /scans/:scanId?format=json|csv|html): the stored report with its
// hash, like publish evidence (src/evidence). The html page loads and runs nothing (EVIDENCE_HTML_CSP) and
// escapes every string the scanned site could have chosen (cookie names, URLs, hosts).
import { stringify } from 'csv-stringify/sync';
import { CSV_CAST } from '../csv.js';
import { esc } from '../evidence/html.js';
import { packageHash } from '../evidence/package.js';
import type { ScanReport } from './run.js';

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
      for (const s of visit.storage) rows.push([...base, `${s.area}Storage`, s.key, '', 'first', '', '', '', '', '']);
      for (const r of visit.requests) rows.push([...base, `request:${r.resourceType}`, r.url, r.host, 'third', '', '', '', '', r.initiator ?? '']);
      for (const r of visit.refused) rows.push([...base, 'refused', r.target, r.host, '', '', '', '', '', r.reason]);
    }
  }
  return rows;
}

/** Three blocks separated by an empty line, each with its header row: field/value, findings, observations. */
export function renderReportCsv(document: ReportDocument): string {
  const options = { cast: CSV_CAST };
  const findings = document.report.findings.map((f) => [f.type, f.pageUrl, f.subject.kind, f.subject.name, f.category ?? '', f.vendor ?? '', f.suggestedPurposeKey ?? '', JSON.stringify(f.evidence)]);
  return [
    stringify([['field', 'value'], ...metaRows(document)], options),
    stringify([['finding.type', 'finding.pageUrl', 'finding.kind', 'finding.name', 'finding.category', 'finding.vendor', 'finding.suggestedPurposeKey', 'finding.evidence'], ...findings], options),
    stringify([['page', 'visit', 'kind', 'name', 'domainOrHost', 'party', 'expires', 'httpOnly', 'secure', 'sameSite', 'setByOrInitiator'], ...observationRows(document.report)], options),
  ].join('\n');
}


export function renderReportHtml(document: ReportDocument): string {
  const { project, report } = document;
  const ok = reportHashMatches(report);
  const row = (cells: unknown[]) => `<tr>${cells.map((cell) => `<td>${esc(cell)}</td>`).join('')}</tr>`;
  const findings = report.findings.map((f) => row([f.type, f.pageUrl, `${f.subject.kind}: ${f.subject.name}`, f.category ?? '', f.vendor ?? '', f.suggestedPurposeKey ?? '', JSON.stringify(f.evidence)])).join('');
  const observations = observationRows(report).map((cells) => row(cells)).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Site scan: ${esc(project.name)}, ${esc(report.scan.finishedAt)}</title>
<style>
  body { margin: 0; background: #e9ecef; color: #1b1f24; font: 14px/1.5 -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
  .page { max-width: 1100px; margin: 24px auto; background: #fff; padding: 32px 40px; }
  h1 { margin: 0 0 8px; } h2 { color: #1f4e79; border-bottom: 1px solid #d8dde3; margin-top: 28px; }
  table { width: 100%; border-collapse: collapse; font-size: .9em; } td, th { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid #d8dde3; overflow-wrap: anywhere; }
  th { background: #f4f6f8; } code { word-break: break-all; } .ok { color: #1c7c3a; font-weight: 600; } .bad { color: #b42318; font-weight: 700; }
</style>
</head>
<body>
<main class="page">
  <h1>Site scan: ${esc(project.name)}</h1>
  <table>${metaRows(document).map(([field, value]) => `<tr><th scope="row">${esc(field)}</th><td>${esc(value)}</td></tr>`).join('')}
    <tr><th scope="row">reportHash recomputed</th><td class="${ok ? 'ok' : 'bad'}">${ok ? '&#10003; matches' : '&#10007; MISMATCH'}</td></tr>
  </table>
  <p>reportHash is the lowercase hex SHA-256 of the RFC 8785 (JCS) canonical JSON of the report (format=json) without <code>hashes</code>.</p>
  <h2>Findings (${report.findings.length})</h2>
  <table><thead><tr><th>Type</th><th>Page</th><th>Subject</th><th>Category</th><th>Vendor</th><th>Suggested purpose</th><th>Evidence</th></tr></thead><tbody>${findings}</tbody></table>
  <h2>Every observation</h2>
  <table><thead><tr><th>Page</th><th>Visit</th><th>Kind</th><th>Name or URL</th><th>Domain or host</th><th>Party</th><th>Expires</th><th>HttpOnly</th><th>Secure</th><th>SameSite</th><th>Set by, initiator or reason</th></tr></thead><tbody>${observations}</tbody></table>
</main>
</body>
</html>
`;
}
