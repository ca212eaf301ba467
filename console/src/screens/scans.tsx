// The site scanner (docs/scanner.md): start a scan of some pages (Admin), the schedule (Admin sets, everyone
// reads), the scans newest first with their counts, and one scan's findings with their evidence; unmapped
// cookies can be added to the draft under a purpose (an ordinary draft edit, published with the next version).
import { TableBox } from '../components/table-box';
import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Empty, ErrorState, QueryState } from '../components/states';
import {
  AddCookiesToDraftDocument,
  ProjectScansDocument,
  ScanFindingsDocument,
  SetScanScheduleDocument,
  StartScanDocument,
  type ProjectScansQuery,
  type ScanFindingsQuery,
} from '../graphql/generated';
import { useCan } from '../lib/context';
import type { ScreenProps } from '../lib/screen';
import { query, useDownload } from './parts/download';
import { formatDateTime } from './parts/format';
import { PagerControls, usePager } from './parts/pager';
import './parts/screens.css';

type Scan = NonNullable<ProjectScansQuery['project']['scans']>['edges'][number]['node'];
type Finding = ScanFindingsQuery['scan']['findings'][number];
type Purpose = { key: string; name: string };
interface Summary {
  pages: number;
  findings: Record<string, number>;
}

const FINDING_LABELS: Record<string, string> = {
  before_consent: 'Before consent',
  after_reject: 'After Reject all',
  unclassified_request: 'Unknown host before consent',
  unmapped: 'Unmapped cookie',
  sdk_missing: 'SDK missing',
  banner_missing: 'Banner missing',
  insecure_form: 'Form over plain http',
  no_https_redirect: 'No redirect to https',
  tls_invalid: 'Certificate not trusted',
};

const lines = (text: string) => text.split(/\s+/).map((line) => line.trim()).filter(Boolean);

export default function ScansScreen({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const canRun = useCan('ADMIN');
  const pager = usePager();
  const [result, refetch] = useQuery({ query: ProjectScansDocument, variables: { projectId, after: pager.cursor }, requestPolicy: 'cache-and-network' });
  const [selected, setSelected] = useState<string | null>(null);
  const scans = result.data?.project.scans;
  const waiting = scans?.edges.some(({ node }) => node.status === 'queued' || node.status === 'running');
  // Scans run in the background: while one is queued or running, look again every few seconds.
  useEffect(() => {
    if (!waiting) return;
    const timer = setTimeout(() => refetch({ requestPolicy: 'network-only' }), 3000);
    return () => clearTimeout(timer);
  }, [waiting, result.data, refetch]);

  return (
    <section aria-labelledby="screen-title" className="screen">
      <h1 id="screen-title">Site scans</h1>
      <p className="lead">
        A scan visits each page three times in a real browser: before any decision, after <em>Reject all</em> and after <em>Accept all</em> in your
        banner. It lists the cookies, storage and requests to other sites it saw, and what runs before consent or after a rejection.
      </p>
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {(data) => {
          const purposes = data.consentConfiguration.draft.purposes;
          return (
            <>
              {canRun && <StartScan projectId={projectId} />}
              <Schedule projectId={projectId} schedule={data.scanSchedule} canEdit={canRun} />
              <h2>Scans</h2>
              {!data.project.scans?.edges.length && pager.page === 1 ? (
                <Empty title="No scan yet.">{canRun && <p>Start one above with the address of a page of your site.</p>}</Empty>
              ) : (
                <ScanTable scans={data.project.scans!.edges.map((e) => e.node)} selected={selected} onSelect={setSelected} />
              )}
              <PagerControls pager={pager} nextCursor={data.project.scans?.pageInfo.hasNextPage ? data.project.scans.pageInfo.endCursor : null} label="Scans" />
              {selected && <ScanDetail projectId={projectId} scanId={selected} purposes={purposes} canEdit={canRun} />}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

function StartScan({ projectId }: { projectId: string }) {
  const [urls, setUrls] = useState('');
  const [followLinks, setFollowLinks] = useState('5');
  const [state, start] = useMutation(StartScanDocument);
  const [status, setStatus] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setStatus('');
    const done = await start({ projectId, input: { urls: lines(urls), followLinks: Number(followLinks) } });
    if (done.data) setStatus('Scan queued. Its findings open from the list once it is done.');
  };
  return (
    <form className="stack narrow" onSubmit={submit} aria-labelledby="start-scan-title" noValidate>
      <h2 id="start-scan-title">Start a scan</h2>
      <label>
        Pages to scan (one address per line, up to 20)
        <textarea value={urls} onChange={(e) => setUrls(e.target.value)} rows={3} placeholder="https://www.example.com/" required />
      </label>
      <label>
        Same-site links to follow (0 to 50)
        <input type="number" min={0} max={50} value={followLinks} onChange={(e) => setFollowLinks(e.target.value)} />
      </label>
      <div className="row">
        <button type="submit" className="primary" disabled={state.fetching || !lines(urls).length}>
          {state.fetching ? 'Starting…' : 'Start scan'}
        </button>
        <span role="status">{status}</span>
      </div>
      <ErrorState title="The scan could not be started" error={state.error} />
    </form>
  );
}

function Schedule({ projectId, schedule, canEdit }: { projectId: string; schedule: ProjectScansQuery['scanSchedule']; canEdit: boolean }) {
  const [every, setEvery] = useState(schedule.schedule);
  const [urls, setUrls] = useState(schedule.urls.join('\n'));
  const [state, save] = useMutation(SetScanScheduleDocument);
  const [status, setStatus] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setStatus('');
    const input = every === 'off' ? { schedule: 'off', urls: null, followLinks: null } : { schedule: every, urls: lines(urls), followLinks: schedule.followLinks };
    const done = await save({ projectId, input });
    if (done.data) setStatus(done.data.setScanSchedule.schedule === 'off' ? 'Scheduled scans are off.' : 'Schedule saved.');
  };
  const summary =
    schedule.schedule === 'off' ? 'No scheduled scan.' : `Scans ${schedule.urls.length} page(s) ${schedule.schedule}; next run ${formatDateTime(schedule.nextRunAt)}.`;
  if (!canEdit) {
    return (
      <>
        <h2>Schedule</h2>
        <p>{summary}</p>
      </>
    );
  }
  return (
    <form className="stack narrow" onSubmit={submit} aria-labelledby="schedule-title" noValidate>
      <h2 id="schedule-title">Schedule</h2>
      <p>{summary} A scheduled scan that finds something new notifies the members and sends <code>scan.completed</code> to the webhook.</p>
      <label>
        Repeat
        <select value={every} onChange={(e) => setEvery(e.target.value)}>
          <option value="off">Off</option>
          <option value="daily">Daily</option>
          <option value="weekly">Weekly</option>
        </select>
      </label>
      {every !== 'off' && (
        <label>
          Pages (one address per line)
          <textarea value={urls} onChange={(e) => setUrls(e.target.value)} rows={2} />
        </label>
      )}
      <div className="row">
        <button type="submit" disabled={state.fetching}>
          {state.fetching ? 'Saving…' : 'Save schedule'}
        </button>
        <span role="status">{status}</span>
      </div>
      <ErrorState title="The schedule could not be saved" error={state.error} />
    </form>
  );
}

function ScanTable({ scans, selected, onSelect }: { scans: Scan[]; selected: string | null; onSelect(id: string): void }) {
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Scans, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Status</th>
            <th scope="col">Pages</th>
            <th scope="col">Findings</th>
            <th scope="col">Version</th>
            <th scope="col">
              <span className="visually-hidden">Details</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {scans.map((scan) => {
            const summary = scan.summary as Summary | null;
            const counts = summary ? Object.entries(summary.findings).filter(([, n]) => n > 0) : [];
            return (
              <tr key={scan.id} aria-selected={scan.id === selected}>
                <td>{formatDateTime(scan.startedAt ?? scan.createdAt)}</td>
                <td>
                  {scan.status}
                  {scan.trigger === 'schedule' ? ' (scheduled)' : ''}
                  {scan.error && <small className="note"> {scan.error}</small>}
                </td>
                <td>{summary?.pages ?? scan.urls.length}</td>
                <td>{summary ? counts.map(([type, n]) => `${FINDING_LABELS[type] ?? type}: ${n}`).join(', ') || 'None' : '—'}</td>
                <td>{scan.versionNumber ?? '—'}</td>
                <td>
                  {scan.status === 'done' && (
                    <button type="button" onClick={() => onSelect(scan.id)} aria-label={`Findings of the scan of ${formatDateTime(scan.createdAt)}`}>
                      Findings
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableBox>
  );
}

function ScanDetail({ projectId, scanId, purposes, canEdit }: { projectId: string; scanId: string; purposes: Purpose[]; canEdit: boolean }) {
  // From the network: a scan read while it ran has no findings yet, and the cache would keep that answer.
  const [result, refetch] = useQuery({ query: ScanFindingsDocument, variables: { projectId, scanId }, requestPolicy: 'network-only' });
  const { busy, error, status, download } = useDownload();
  const path = `/api/platform/projects/${projectId}/scans/${scanId}`;
  return (
    <section aria-labelledby="scan-detail-title">
      <h2 id="scan-detail-title">Findings</h2>
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {(data) =>
          data.scan.status !== 'done' ? (
            <p>The scan is {data.scan.status}.</p>
          ) : (
            <>
              <div className="row">
                {(['json', 'csv', 'html'] as const).map((format) => (
                  <button key={format} type="button" disabled={busy !== null} onClick={() => download(format, `${path}${query({ format, download: '1' })}`, `site-scan.${format}`)}>
                    Download {format.toUpperCase()}
                  </button>
                ))}
                <span role="status">{status}</span>
              </div>
              <ErrorState title="The report could not be downloaded" error={error} />
              {!data.scan.findings.length ? (
                <Empty title="Nothing to report: no tracking before consent or after a rejection, and every cookie is listed." />
              ) : (
                <FindingTable projectId={projectId} findings={data.scan.findings} purposes={purposes} canEdit={canEdit} />
              )}
            </>
          )
        }
      </QueryState>
    </section>
  );
}

function FindingTable({ projectId, findings, purposes, canEdit }: { projectId: string; findings: Finding[]; purposes: Purpose[]; canEdit: boolean }) {
  return (
    <TableBox>
      <table>
        <caption className="visually-hidden">Findings with their evidence</caption>
        <thead>
          <tr>
            <th scope="col">Finding</th>
            <th scope="col">Page</th>
            <th scope="col">What</th>
            <th scope="col">Category</th>
            <th scope="col">Evidence</th>
          </tr>
        </thead>
        <tbody>
          {findings.map((finding, i) => (
            <tr key={i}>
              <td>{FINDING_LABELS[finding.type] ?? finding.type}</td>
              <td>
                <code>{finding.pageUrl}</code>
              </td>
              <td>
                {finding.subject.kind === 'page' ? '—' : `${finding.subject.kind}: `}
                {finding.subject.kind !== 'page' && <code>{finding.subject.name}</code>}
                {finding.type === 'unmapped' && canEdit && <AddToDraft projectId={projectId} name={finding.subject.name} suggested={finding.suggestedPurposeKey} purposes={purposes} />}
              </td>
              <td>
                {finding.category ?? '—'}
                {finding.vendor && <small className="note"> {finding.vendor}</small>}
              </td>
              <td>
                <details>
                  <summary>{finding.description ?? 'Show'}</summary>
                  <pre className="json">{JSON.stringify(finding.evidence, null, 2)}</pre>
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

function AddToDraft({ projectId, name, suggested, purposes }: { projectId: string; name: string; suggested: string | null; purposes: Purpose[] }) {
  const [purposeKey, setPurposeKey] = useState(suggested ?? purposes[0]?.key ?? '');
  const [state, add] = useMutation(AddCookiesToDraftDocument);
  const [status, setStatus] = useState('');
  if (!purposes.length) return null;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const done = await add({ projectId, input: { cookies: [{ name, purposeKey }] } });
    if (done.data) setStatus('Added to the draft.');
  };
  return (
    <form className="row" onSubmit={submit}>
      <label>
        <span className="visually-hidden">Purpose for {name}</span>
        <select value={purposeKey} onChange={(e) => setPurposeKey(e.target.value)}>
          {purposes.map((p) => (
            <option key={p.key} value={p.key}>
              {p.name}
              {p.key === suggested ? ' (suggested)' : ''}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={state.fetching || !!status}>
        Add to draft
      </button>
      <span role="status">{status}</span>
      <ErrorState title="The cookie could not be added" error={state.error} />
    </form>
  );
}
