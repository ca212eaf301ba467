// The organization's audit log (console-screens, Admin or above): every operator mutation, newest first,
// filtered by project and action, paged forwards, with each change's before/after, and the CSV export of
// the same filter through the REST route.
import { TableBox } from '../components/table-box';
import { useMemo, useState, type FormEvent } from 'react';
import { useQuery } from 'urql';
import { Empty, ErrorState, QueryState } from '../components/states';
import { AuditLogDocument, AuditNamesDocument, type AuditLogQuery, type AuditNamesQuery } from '../graphql/generated';
import type { ScreenProps } from '../lib/screen';
import { AUDIT_ACTIONS } from '../../../src/audit/actions';
import { actionWords } from './audit/words';
import { query, useDownload } from './parts/download';
import { formatDateTime } from './parts/format';
import { PagerControls, usePager } from './parts/pager';
import './parts/screens.css';

type AuditEvent = NonNullable<AuditLogQuery['organization']['auditLog']>['edges'][number]['node'];

interface Filters {
  projectId: string;
  action: string;
}

export default function Audit({ params }: ScreenProps) {
  const orgId = params.orgId;
  const [filters, setFilters] = useState<Filters>({ projectId: '', action: '' });
  const pager = usePager();
  const [result, refetch] = useQuery({
    query: AuditLogDocument,
    variables: { organizationId: orgId, after: pager.cursor, projectId: filters.projectId || undefined, action: filters.action || undefined },
    requestPolicy: 'cache-and-network',
  });
  const projects = result.data?.organization.projects ?? [];
  const projectName = new Map(projects.map((p) => [p.id, p.name]));
  const [namesResult] = useQuery({ query: AuditNamesDocument, variables: { organizationId: orgId } });
  const names = useMemo(() => targetNames(namesResult.data), [namesResult.data]);
  const filtered = !!(filters.projectId || filters.action);

  return (
    <section aria-labelledby="screen-title" className="screen">
      <div className="title-row">
        <h1 id="screen-title">Audit log</h1>
        <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })} disabled={result.fetching}>
          {result.fetching ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <p className="lead">Who changed what, when, and from which request. The log is append-only: nobody can edit or delete it.</p>
      <FilterForm value={filters} projects={projects} onApply={(f) => (setFilters(f), pager.reset())} />
      <Export orgId={orgId} filters={filters} />
      <QueryState
        result={result}
        retry={() => refetch({ requestPolicy: 'network-only' })}
        isEmpty={(data) => !data.organization.auditLog?.edges.length && pager.page === 1}
        empty={<Empty title={filtered ? 'No event matches these filters.' : 'No event yet.'} />}
      >
        {(data) => (
          <>
            <TableBox>
              <table className="audit">
                <caption className="visually-hidden">Audit events, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Who</th>
                    <th scope="col">Action</th>
                    <th scope="col">What</th>
                    <th scope="col">Changes</th>
                  </tr>
                </thead>
                <tbody>
                  {data.organization.auditLog?.edges.map(({ node }) => (
                    <EventRow key={node.id} event={node} names={names} projectName={node.projectId ? projectName.get(node.projectId) : undefined} />
                  ))}
                </tbody>
              </table>
            </TableBox>
            <PagerControls
              pager={pager}
              nextCursor={data.organization.auditLog?.pageInfo.hasNextPage ? data.organization.auditLog.pageInfo.endCursor : null}
              label="Audit log"
            />
          </>
        )}
      </QueryState>
    </section>
  );
}

/** What each target is called, by type and id: what the log's ids mean to a person. */
type Names = Map<string, string>;

function targetNames(data: AuditNamesQuery | undefined): Names {
  const names: Names = new Map();
  const org = data?.organization;
  if (!org) return names;
  names.set(`organization ${org.id}`, org.name);
  names.set(`subscription ${org.id}`, `the subscription of ${org.name}`);
  for (const p of org.projects) {
    names.set(`project ${p.id}`, p.name);
    for (const [type, words] of [['webhook', 'the webhook'], ['notice', 'the notice'], ['experience', 'the experience'], ['draft', 'the draft']] as const) {
      names.set(`${type} ${p.id}`, `${words} of ${p.name}`);
    }
    for (const { node: k } of p.apiKeys?.edges ?? []) names.set(`api_key ${k.id}`, `key ${k.name ? `“${k.name}” ` : ''}(${k.prefix}…)`);
    for (const { node: v } of p.versions?.edges ?? []) names.set(`consent_version ${v.id}`, `version ${v.number} of ${p.name}`);
  }
  for (const m of org.members ?? []) names.set(`user ${m.userId}`, m.name ? `${m.name} (${m.email})` : m.email);
  return names;
}

function EventRow({ event, projectName, names }: { event: AuditEvent; projectName?: string; names: Names }) {
  const target = event.target as { type?: string; id?: string };
  const changes = event.changes as Record<string, { before?: unknown; after?: unknown }>;
  const fields = Object.keys(changes);
  const targetName = target.type && target.id ? names.get(`${target.type} ${target.id}`) : undefined;
  const words = actionWords(event.action);
  return (
    <tr>
      <td>
        {formatDateTime(event.createdAt)}
        {event.requestId && <small title="The request id, as in the service's logs">request {event.requestId}</small>}
      </td>
      <td>{event.actor.email ?? <span className="muted">a removed account</span>}</td>
      <td data-action={event.action}>
        {words}
        {words !== event.action && <small className="mono">{event.action}</small>}
      </td>
      <td>
        {targetName ? <span>{targetName}</span> : (
          <>
            {target.type?.replaceAll('_', ' ')} <code className="ellipsis" title={target.id}>{target.id}</code>
          </>
        )}
        {projectName && targetName !== projectName && <small>in {projectName}</small>}
      </td>
      <td>
        {fields.length ? (
          <details>
            <summary>
              {fields.length === 1 ? fields[0] : `${fields.length} fields`}
              <span className="visually-hidden"> changed: {words}</span>
            </summary>
            <dl className="changes">
              {fields.map((field) => (
                <div key={field}>
                  <dt>{field}</dt>
                  <dd>
                    <span className="before">{show(changes[field]?.before)}</span> → <span className="after">{show(changes[field]?.after)}</span>
                  </dd>
                </div>
              ))}
            </dl>
          </details>
        ) : (
          '—'
        )}
      </td>
    </tr>
  );
}

const show = (value: unknown) => (value === null || value === undefined ? '(none)' : typeof value === 'string' ? value : JSON.stringify(value));

function FilterForm({ value, projects, onApply }: { value: Filters; projects: { id: string; name: string }[]; onApply(f: Filters): void }) {
  const [form, setForm] = useState(value);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onApply(form);
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Filter the audit log">
      <label>
        Project
        <select value={form.projectId} onChange={(e) => setForm({ ...form, projectId: e.target.value })}>
          <option value="">All projects and the organization</option>
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Action
        <select value={form.action} onChange={(e) => setForm({ ...form, action: e.target.value })}>
          <option value="">All actions</option>
          {AUDIT_ACTIONS.map((a) => (
            <option key={a} value={a}>
              {actionWords(a)}
            </option>
          ))}
        </select>
      </label>
      <div className="row">
        <button type="submit" className="primary">
          Apply
        </button>
      </div>
    </form>
  );
}

function Export({ orgId, filters }: { orgId: string; filters: Filters }) {
  const { busy, error, status, download } = useDownload();
  const run = () => download('csv', `/api/platform/orgs/${orgId}/audit-log${query({ format: 'csv', ...filters })}`, 'audit-log.csv');
  return (
    <div className="export">
      <div className="row">
        <button type="button" onClick={run} disabled={busy !== null}>
          {busy ? 'Preparing…' : 'Download CSV'}
        </button>
        <small>Every event matching the filters, newest first.</small>
        <span role="status">{status}</span>
      </div>
      <ErrorState title="The export failed" error={error} />
    </div>
  );
}
