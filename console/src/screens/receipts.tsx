// Consent receipts of a project (console-screens): filters (UTC days, installation), forward paging by
// cursor, and the CSV/NDJSON export through the REST route (parts/download.ts explains why a fetch).
import { TableBox } from '../components/table-box';
import { useMemo, useState, type FormEvent } from 'react';
import { useQuery } from 'urql';
import { Empty, ErrorState, QueryState } from '../components/states';
import { ReceiptsPageDocument, ReceiptsPurposeNamesDocument, type ReceiptsPageQuery } from '../graphql/generated';
import { useProjectContext } from '../lib/context';
import type { ScreenProps } from '../lib/screen';
import { query, useDownload } from './parts/download';
import { dayAfterStart, dayStart, formatDateTime } from './parts/format';
import { PagerControls, usePager } from './parts/pager';
import './parts/screens.css';

type Receipt = ReceiptsPageQuery['receipts']['receipts'][number];

interface Filters {
  /** UTC days, YYYY-MM-DD, both inclusive in the form */
  from: string;
  to: string;
  installationId: string;
}
const NO_FILTERS: Filters = { from: '', to: '', installationId: '' };

/** The API's range: `from` inclusive, `to` exclusive, as timestamps. */
const apiRange = (f: Filters) => ({ from: f.from ? dayStart(f.from) : undefined, to: f.to ? dayAfterStart(f.to) : undefined });

export default function Receipts({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const { project } = useProjectContext();
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const pager = usePager();
  const [result, refetch] = useQuery({
    query: ReceiptsPageDocument,
    variables: { projectId, cursor: pager.cursor, ...apiRange(filters), installationId: filters.installationId || undefined },
    requestPolicy: 'cache-and-network',
  });
  const apply = (next: Filters) => {
    setFilters(next);
    pager.reset();
  };
  const filtered = filters.from || filters.to || filters.installationId;
  const [versions] = useQuery({ query: ReceiptsPurposeNamesDocument, variables: { projectId } });
  const names = useMemo(() => purposeNames(versions.data?.project.versions?.edges.map((e) => e.node) ?? []), [versions.data]);

  return (
    <section aria-labelledby="screen-title" className="screen">
      <div className="title-row">
        <h1 id="screen-title">Receipts</h1>
        <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })} disabled={result.fetching}>
          {result.fetching ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <p className="lead">
        Every consent decision your sites and apps recorded, newest first, with the source their SDK reported. Receipts hold no IP address, e-mail or
        fingerprint.
      </p>
      <FilterForm value={filters} onApply={apply} />
      <Export projectId={projectId} projectSlug={project?.slug ?? 'project'} filters={filters} />
      <QueryState
        result={result}
        retry={() => refetch({ requestPolicy: 'network-only' })}
        isEmpty={(data) => !data.receipts.receipts.length && pager.page === 1}
        empty={
          <Empty title={filtered ? 'No receipt matches these filters.' : 'No receipt yet.'}>
            <p>
              {filtered
                ? 'Widen the dates or clear the installation.'
                : 'Receipts appear here when visitors answer the banner on a site that uses one of this project’s keys.'}
            </p>
          </Empty>
        }
      >
        {(data) => (
          <>
            <ReceiptsTable receipts={data.receipts.receipts} names={names} />
            <PagerControls pager={pager} nextCursor={data.receipts.nextCursor} label="Receipts" />
          </>
        )}
      </QueryState>
    </section>
  );
}

function FilterForm({ value, onApply }: { value: Filters; onApply(filters: Filters): void }) {
  const [form, setForm] = useState(value);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onApply({ ...form, installationId: form.installationId.trim() });
  };
  const set = (field: keyof Filters) => (e: { target: { value: string } }) => setForm({ ...form, [field]: e.target.value });
  const invalidRange = !!form.from && !!form.to && form.from > form.to;
  return (
    <form className="filters" onSubmit={submit} aria-label="Filter receipts">
      <label>
        From (UTC day)
        <input type="date" value={form.from} onChange={set('from')} />
      </label>
      <label>
        To (UTC day, included)
        <input type="date" value={form.to} onChange={set('to')} aria-invalid={invalidRange || undefined} />
      </label>
      <label>
        Installation
        <input value={form.installationId} onChange={set('installationId')} placeholder="installation id" spellCheck={false} />
      </label>
      <div className="row">
        <button type="submit" className="primary" disabled={invalidRange}>
          Apply
        </button>
        <button type="button" onClick={() => (setForm(NO_FILTERS), onApply(NO_FILTERS))}>
          Clear
        </button>
      </div>
      {invalidRange && (
        <p className="field-error" role="alert">
          “From” is after “To”.
        </p>
      )}
    </form>
  );
}

function Export({ projectId, projectSlug, filters }: { projectId: string; projectSlug: string; filters: Filters }) {
  const [format, setFormat] = useState<'csv' | 'ndjson'>('csv');
  const { busy, error, status, download } = useDownload();
  const run = () =>
    download(format, `/api/platform/projects/${projectId}/receipts/export${query({ format, ...apiRange(filters) })}`, `receipts-${projectSlug}.${format}`);
  return (
    <div className="export">
      <div className="row">
        <label className="inline-label">
          Export format
          <select value={format} onChange={(e) => setFormat(e.target.value as 'csv' | 'ndjson')}>
            <option value="csv">CSV</option>
            <option value="ndjson">NDJSON</option>
          </select>
        </label>
        <button type="button" onClick={run} disabled={busy !== null}>
          {busy ? 'Preparing…' : 'Download export'}
        </button>
        <span role="status">{status}</span>
      </div>
      <small>
        The export holds every receipt of the chosen days, oldest first
        {filters.installationId ? ' (the installation filter applies to the table only)' : ''}.
      </small>
      <ErrorState title="The export failed" error={error} />
    </div>
  );
}

/** Version id → purpose key → the purpose's name in that version (the default language). */
type Names = Map<string, Map<string, string>>;

function purposeNames(versions: { id: string; config: unknown }[]): Names {
  return new Map(
    versions.map((v) => [v.id, new Map(((v.config as { purposes?: { key: string; name: string }[] }).purposes ?? []).map((p) => [p.key, p.name]))]),
  );
}

/** Where the receipt came from (issue 45), in words: "iOS app com.example.shop 2.3.1 · React Native SDK 0.1.0". */
export function sourceWords(source: Receipt['source']): string | null {
  if (!source) return null;
  const sdk = { browser: 'Browser SDK', core: 'Core SDK', 'react-native': 'React Native SDK' }[source.sdk] ?? `${source.sdk} SDK`;
  const platform = { web: 'Web', ios: 'iOS app', android: 'Android app', other: 'App' }[source.platform] ?? source.platform;
  const app = [source.appId, source.appVersion].filter(Boolean).join(' ');
  return `${platform}${app ? ` ${app}` : ''} · ${sdk} ${source.sdkVersion}`;
}

/** The receipt's `action` (what the SDK said the visitor did), in words. */
export const ACTION_WORDS: Record<string, string> = {
  accept_all: 'Accepted all',
  reject_all: 'Rejected all',
  custom: 'Chose purposes',
  opt_out: 'Opted out (Do Not Sell or Share)',
  gpc: 'Opted out by the browser’s GPC signal',
};

function Choices({ choices, names }: { choices: Record<string, boolean>; names?: Map<string, string> }) {
  const entries = Object.entries(choices);
  return (
    <ul className="choices">
      {entries.map(([key, granted]) => {
        const name = names?.get(key);
        return (
          <li key={key} className={granted ? 'granted' : 'denied'}>
            <span aria-hidden="true">{granted ? '✓' : '✕'}</span> {name ?? key}
            {name && name !== key && <code className="purpose-key"> {key}</code>}
            <span className="visually-hidden">{granted ? ' granted' : ' denied'}</span>
          </li>
        );
      })}
    </ul>
  );
}

function ReceiptsTable({ receipts, names }: { receipts: Receipt[]; names: Names }) {
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Receipts, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Recorded</th>
            <th scope="col">Version</th>
            <th scope="col">Decision</th>
            <th scope="col">Choices</th>
            <th scope="col">Installation</th>
            <th scope="col">Source</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {receipts.map((r) => (
            <tr key={r.id}>
              <td className="nowrap">{formatDateTime(r.createdAt)}</td>
              <td>v{r.versionNumber}</td>
              <td>{r.action ? (ACTION_WORDS[r.action] ?? r.action) : <span className="muted">Not said (older SDK)</span>}</td>
              <td>
                <Choices choices={r.choices as Record<string, boolean>} names={names.get(r.versionId)} />
              </td>
              <td>
                <code className="ellipsis" title={r.installationId}>
                  {r.installationId}
                </code>
              </td>
              <td>
                <small>{sourceWords(r.source) ?? <span className="muted">Not said (older SDK)</span>}</small>
              </td>
              <td>
                <small>
                  {[r.locale && `Language ${r.locale}`, r.gpc && 'GPC signal', !r.source && r.sdkVersion && `SDK ${r.sdkVersion}`].filter(Boolean).join(' · ') || '—'}
                </small>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}
