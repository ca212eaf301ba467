import canonicalize from 'canonicalize';
import { consentHash, contentHash } from '../consent/config.js';
import { translationRows } from './translations.js';
import type { Experience } from '../consent/experience.js';
import type { EvidencePackage } from './package.js';
import { packageHash } from './package.js';

export interface EvidenceDocument {
  project: { id: string; organizationId: string; name: string; slug: string };
  evidence: EvidencePackage;
  generatedAt: Date;
}

/** The page loads nothing and runs nothing: served with this policy. */
export const EVIDENCE_HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

// Five replacements are the whole of HTML text/attribute escaping; no library needed for it.
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (value: unknown) => String(value ?? '').replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
const iso = (value: Date | string | null) => (value ? new Date(value).toISOString() : '');
const orDash = (value: string) => (value === '' ? '<span class="muted">(empty)</span>' : esc(value));

/**
 * A printable, self-contained evidence page: everything an auditor needs to
 * see what was published, and to recompute its hashes, on one document.
 * Every operator-supplied string is escaped.
 */
export function renderEvidenceHtml({ project, evidence, generatedAt }: EvidenceDocument): string {
  const { version, config, publishedBy, hashes } = evidence;
  const categoryName = new Map(config.categories.map((category) => [category.id, category.name]));
  const { packageHash: claimed, ...otherHashes } = hashes;
  const checks = {
    contentHash: contentHash(version.number, config, evidence.experience?.tcf) === hashes.contentHash,
    consentHash: consentHash(config, evidence.experience?.translations) === hashes.consentHash,
    packageHash: packageHash({ ...evidence, hashes: otherHashes }) === claimed,
  };
  const color = /^#[0-9a-fA-F]{6}$/.test(config.notice.primaryColor) ? config.notice.primaryColor : null;
  const title = `Publish evidence: ${project.name}, version ${version.number}`;

  const hashRow = (name: keyof typeof checks, covers: string) => `
        <tr>
          <th scope="row">${name}</th>
          <td class="hash-cell"><code class="hash">${esc(hashes[name])}</code></td>
          <td>${covers}</td>
          <td class="${checks[name] ? 'ok' : 'bad'}">${checks[name] ? '&#10003; matches' : '&#10007; MISMATCH'}</td>
        </tr>`;

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<style>
  :root { --ink: #1b1f24; --muted: #5b6572; --line: #d8dde3; --soft: #f4f6f8; --accent: #1f4e79; --ok: #1c7c3a; --bad: #b42318; }
  * { box-sizing: border-box; }
  html { -webkit-text-size-adjust: 100%; }
  body { margin: 0; background: #e9ecef; color: var(--ink); font: 14px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
  .page { max-width: 960px; margin: 24px auto; background: #fff; padding: 40px 48px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
  header.doc { border-bottom: 3px solid var(--accent); padding-bottom: 16px; margin-bottom: 24px; display: flex; justify-content: space-between; gap: 24px; align-items: flex-end; }
  .eyebrow { text-transform: uppercase; letter-spacing: .08em; font-size: .78em; color: var(--muted); margin: 0 0 4px; font-weight: 600; }
  h1 { font-size: 1.7em; margin: 0; line-height: 1.25; }
  .version-badge { background: var(--accent); color: #fff; border-radius: 6px; padding: 8px 14px; text-align: center; white-space: nowrap; }
  .version-badge b { display: block; font-size: 1.6em; line-height: 1.1; }
  .version-badge span { font-size: .78em; text-transform: uppercase; letter-spacing: .08em; }
  h2 { font-size: 1.07em; text-transform: uppercase; letter-spacing: .06em; color: var(--accent); margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
  dl.facts { display: grid; grid-template-columns: 13.5em 1fr; margin: 0; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
  dl.facts dt, dl.facts dd { margin: 0; padding: 7px 12px; border-bottom: 1px solid var(--line); }
  dl.facts dt { background: var(--soft); color: var(--muted); font-weight: 600; }
  dl.facts dt:nth-last-of-type(1), dl.facts dd:last-of-type { border-bottom: 0; }
  table { width: 100%; border-collapse: collapse; margin: 0; font-size: .93em; }
  th, td { text-align: left; vertical-align: top; padding: 7px 10px; border-bottom: 1px solid var(--line); }
  thead th { background: var(--soft); color: var(--muted); font-size: .84em; text-transform: uppercase; letter-spacing: .05em; border-bottom: 2px solid var(--line); }
  tbody th { font-weight: 600; white-space: nowrap; }
  td.num, th.num { text-align: right; white-space: nowrap; width: 1%; }
  td.hash-cell { width: 42%; }
  code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: .88em; }
  td code, dd code { font-size: 1em; }
  code.hash { word-break: break-all; }
  .ok { color: var(--ok); font-weight: 600; white-space: nowrap; }
  .bad { color: var(--bad); font-weight: 700; white-space: nowrap; }
  .muted { color: var(--muted); }
  .pill { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: .86em; font-weight: 600; }
  .pill.req { background: #fdecea; color: var(--bad); }
  .pill.opt { background: #e8f2fb; color: var(--accent); }
  .swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid var(--line); border-radius: 2px; vertical-align: -1px; margin-right: 6px; }
  .text { white-space: pre-wrap; overflow-wrap: anywhere; }
  ol.steps { padding-left: 20px; margin: 8px 0 0; }
  ol.steps li { margin-bottom: 6px; }
  pre.json { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 12px; white-space: pre-wrap; word-break: break-all; font-size: .78em; margin: 8px 0 0; }
  footer.doc { margin-top: 32px; padding-top: 12px; border-top: 1px solid var(--line); color: var(--muted); font-size: .86em; display: flex; justify-content: space-between; gap: 16px; }
  @page { size: A4; margin: 14mm; }
  @media print {
    body { background: #fff; font-size: 10pt; }
    .page { margin: 0; padding: 0; max-width: none; box-shadow: none; }
    h2 { break-after: avoid; }
    tr, dl.facts dt, dl.facts dd { break-inside: avoid; }
    header.doc, .version-badge { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
    thead { display: table-header-group; }
  }
</style>
</head>
<body>
<main class="page">
  <header class="doc">
    <div>
      <p class="eyebrow">Consent publish evidence</p>
      <h1>${esc(project.name)}</h1>
      <div class="muted">Published consent configuration, version ${esc(version.number)}, as recorded at publication</div>
    </div>
    <div class="version-badge"><span>Version</span><b>${esc(version.number)}</b></div>
  </header>

  <section>
    <h2>Record</h2>
    <dl class="facts">
      <dt>Project</dt><dd>${esc(project.name)} <span class="muted mono">(${esc(project.id)})</span></dd>
      <dt>Organization id</dt><dd class="mono">${esc(project.organizationId)}</dd>
      <dt>Version</dt><dd>${esc(version.number)} <span class="muted mono">(${esc(version.id)})</span></dd>
      <dt>Published at (UTC)</dt><dd class="mono">${esc(iso(version.publishedAt))}</dd>
      <dt>Published by</dt><dd>${esc(publishedBy.name)} &lt;${esc(publishedBy.email)}&gt; <span class="muted mono">(${esc(publishedBy.id)})</span></dd>
      <dt>Receipts so far</dt><dd>${esc(evidence.receiptsCount)} recorded against this version${evidence.firstReceiptAt ? `, the first at <span class="mono">${esc(iso(evidence.firstReceiptAt))}</span>` : ''}</dd>
      <dt>Document generated at</dt><dd class="mono">${esc(iso(generatedAt))}</dd>
    </dl>
  </section>

  <section>
    <h2>Integrity</h2>
    <table>
      <thead><tr><th>Hash</th><th>SHA-256 (hex)</th><th>Covers</th><th>Recomputed</th></tr></thead>
      <tbody>${hashRow('contentHash', 'Version number and the full configuration below (the SDK ETag)')}${hashRow(
        'consentHash',
        'What visitors consent to: purposes (key, name, description, required, category name) and notice title and description',
      )}${hashRow('packageHash', 'This evidence package as JSON, without packageHash itself')}
      </tbody>
    </table>
    <p class="muted">The hashes were recomputed from the stored version when this document was generated. To check them yourself, compute the lowercase hex SHA-256 of the RFC 8785 (JCS) canonical JSON of:</p>
    <ol class="steps">
      <li><b>contentHash</b>: <code>{"number": ${esc(version.number)}, "config": &lt;configuration JSON in the appendix&gt;}</code></li>
      <li><b>consentHash</b>: <code>{"purposes": [{key, name, description, required, category}] sorted by key, "notice": {title, description}}</code>, where <code>category</code> is the purpose's category name</li>
      <li><b>packageHash</b>: the JSON download of this package (<code>?format=json&amp;download=1</code>, its <code>evidence</code> object) with the single key <code>hashes.packageHash</code> removed; it changes as receipts arrive</li>
    </ol>
  </section>

  <section>
    <h2>Purposes (${esc(config.purposes.length)})</h2>
    <table>
      <thead><tr><th class="num">Order</th><th>Key</th><th>Name</th><th>Description</th><th>Category</th><th>Required</th></tr></thead>
      <tbody>${config.purposes
        .map(
          (purpose) => `
        <tr>
          <td class="num">${esc(purpose.sortOrder)}</td>
          <td><code>${esc(purpose.key)}</code></td>
          <td>${esc(purpose.name)}</td>
          <td class="text">${orDash(purpose.description)}</td>
          <td>${esc(categoryName.get(purpose.categoryId) ?? purpose.categoryId)}</td>
          <td>${purpose.required ? '<span class="pill req">Required</span>' : '<span class="pill opt">Optional</span>'}</td>
        </tr>`,
        )
        .join('')}
      </tbody>
    </table>
  </section>

  <section>
    <h2>Categories (${esc(config.categories.length)})</h2>
    <table>
      <thead><tr><th class="num">Order</th><th>Name</th><th>Id</th></tr></thead>
      <tbody>${config.categories
        .map(
          (category) => `
        <tr><td class="num">${esc(category.sortOrder)}</td><td>${esc(category.name)}</td><td class="mono muted">${esc(category.id)}</td></tr>`,
        )
        .join('')}
      </tbody>
    </table>
  </section>

  <section>
    <h2>Notice</h2>
    <dl class="facts">
      <dt>Title</dt><dd class="text">${orDash(config.notice.title)}</dd>
      <dt>Description</dt><dd class="text">${orDash(config.notice.description)}</dd>
      <dt>Accept label</dt><dd>${orDash(config.notice.acceptLabel)}</dd>
      <dt>Reject label</dt><dd>${orDash(config.notice.rejectLabel)}</dd>
      <dt>Manage label</dt><dd>${orDash(config.notice.manageLabel)}</dd>
      <dt>Company name</dt><dd>${orDash(config.notice.companyName)}</dd>
      <dt>Logo URL</dt><dd class="mono text">${orDash(config.notice.logoUrl)}</dd>
      <dt>Primary colour</dt><dd class="mono">${color ? `<span class="swatch" style="background:${color}"></span>` : ''}${orDash(config.notice.primaryColor)}</dd>
    </dl>
  </section>

${evidence.experience ? experienceSection(evidence.experience, categoryName) : ''}
  <section>
    <h2>Appendix: configuration JSON (canonical)</h2>
    <pre class="json">${esc(canonicalize(config))}</pre>
  </section>

  <footer class="doc">
    <span>Published versions are immutable: the database refuses to change or delete them.</span>
    <span class="mono">${esc(version.id)}</span>
  </footer>
</main>
</body>
</html>
`;
}

/** Settings, then every translated text as (locale, field, text) rows, then the JSON. */
function experienceSection(experience: Experience, categoryName: Map<string, string>): string {
  const keys = (values: string[]) => (values.length ? esc(values.join(', ')) : '<span class="muted">(none)</span>');
  const signals = Object.entries(experience.googleConsentMode.signals)
    .map(([signal, purposes]) => `<dt>${esc(signal)}</dt><dd>${keys(purposes)}</dd>`)
    .join('');
  const cookies = Object.entries(experience.cookies)
    .map(([purpose, names]) => `<dt>Cookies of ${esc(purpose)}</dt><dd class="mono">${keys(names)}</dd>`)
    .join('');
  const rows = translationRows(experience, categoryName)
    .map(([locale, field, text]) => `<tr><td class="mono">${esc(locale)}</td><td class="mono">${esc(field)}</td><td class="text">${orDash(text)}</td></tr>`)
    .join('');
  return `
  <section>
    <h2>Experience</h2>
    <dl class="facts">
      <dt>Default locale</dt><dd class="mono">${esc(experience.defaultLocale)}</dd>
      <dt>Privacy policy</dt><dd class="mono text">${orDash(experience.privacyPolicyUrl)}</dd>
      <dt>Ask again after</dt><dd>${experience.reconsentAfterDays ? `${esc(experience.reconsentAfterDays)} days` : 'never'}</dd>
      <dt>GPC opts out of</dt><dd>${keys(experience.gpc.optOutPurposes)}</dd>
      <dt>Google Consent Mode</dt><dd>${experience.googleConsentMode.enabled ? 'enabled' : 'disabled'}</dd>
      ${signals}${cookies}
      <dt>Theme</dt><dd>${esc(experience.theme.colorScheme)}, radius ${esc(experience.theme.borderRadius)}px</dd>
      ${experience.gpp ? `<dt>GPP (MSPA)</dt><dd>covered transaction: ${experience.gpp.mspaCoveredTransaction ? 'yes' : 'no'}, mode: ${esc(experience.gpp.mspaMode)}</dd>` : ''}
    </dl>
    ${experience.jurisdictions ? jurisdictionTable(experience.jurisdictions) : ''}
    ${rows ? `<table><thead><tr><th scope="col">Locale</th><th scope="col">Field</th><th scope="col">Text</th></tr></thead><tbody>${rows}</tbody></table>` : '<p class="muted">No translations.</p>'}
    <pre class="json">${esc(canonicalize(experience))}</pre>
  </section>`;
}

/** The version's own jurisdiction rules in order (first match wins); shown only when it set the list. */
function jurisdictionTable(rules: NonNullable<Experience['jurisdictions']>): string {
  if (!rules.length) return '<p>Jurisdiction rules: none set, the service’s default rules apply.</p>';
  const rows = rules
    .map((rule, i) => `<tr><td class="num">${i + 1}</td><td class="mono">${esc(rule.id)}</td><td class="mono text">${esc(rule.regions.join(', '))}</td><td>${esc(rule.mode)}</td></tr>`)
    .join('');
  return `<table><caption>Jurisdiction rules (first match wins)</caption><thead><tr><th class="num">#</th><th scope="col">Rule</th><th scope="col">Regions</th><th scope="col">Mode</th></tr></thead><tbody>${rows}</tbody></table>`;
}
