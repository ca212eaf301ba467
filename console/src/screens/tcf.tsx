// The IAB TCF screen (issue 39; docs/tcf.md, "Console"): the experience's `tcf` object edited in sections (turn
// on, CMP, vendors searched and filtered from the newest vendor list held, Google's ATPs, publisher restrictions,
// publisher purposes, the purpose map, special features), saved with the rest of the experience through
// updateConsentExperience, and a preview of both layers drawn by the real tcf.js. The service's messages go to
// their fields: a failed save's details, else what publishing would refuse now (tcfIssues, as the checklist).
import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link } from 'wouter';
import { lazyComponent } from '../components/lazy';
import { ErrorState, Loading, QueryState } from '../components/states';
import { TableBox } from '../components/table-box';
import { SaveConsentExperienceDocument, TcfAtpsDocument, TcfScreenDocument, TcfVendorsDocument, type TcfScreenQuery } from '../graphql/generated';
import { stable, type Experience } from '../lib/consent-model';
import { useCan, useProjectContext } from '../lib/context';
import { paths, type ScreenProps } from '../lib/screen';
import { issuesOf, messagesAt, otherMessages, RESTRICTION_TYPES, tcfOf, toggled, type Issue, type RestrictionType, type TcfSettings } from '../lib/tcf-model';
import { PagerControls, usePager } from './parts/pager';
import './parts/screens.css';
import './tcf.css';

const Preview = lazyComponent(() => import('./tcf-preview'), 'Loading the preview…');

type Data = TcfScreenQuery;
type Declaration = { id: number; name: string };
const PAGE = 10;
const SEARCH_SETTLE_MS = 250;

export default function TcfScreen({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const { organization } = useProjectContext();
  const [result, refetch] = useQuery({ query: TcfScreenDocument, variables: { projectId }, requestPolicy: 'cache-and-network' });
  return (
    <section aria-labelledby="screen-title" className="tcf-screen">
      <div className="title-row">
        <h1 id="screen-title">IAB TCF</h1>
        {organization && <Link href={paths.projectScreen(organization.id, projectId, 'consent')}>Back to the consent editor</Link>}
      </div>
      <p className="hint">
        The IAB Transparency and Consent Framework v2.3 banner (two layers, a TC string with every receipt) and Google’s Additional Consent. Saved
        into the draft’s experience; visitors see it once you publish.
      </p>
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {(data) => <Editor projectId={projectId} data={data} reload={() => refetch({ requestPolicy: 'network-only' })} />}
      </QueryState>
    </section>
  );
}

function Editor({ projectId, data, reload }: { projectId: string; data: Data; reload: () => void }) {
  const canEdit = useCan('ADMIN');
  const savedExperience = data.consentConfiguration.experience as Experience;
  // Replaced only when the saved settings changed (a refetch after a refused save keeps what is being edited).
  const savedKey = stable(tcfOf(savedExperience));
  const saved = useMemo(() => JSON.parse(savedKey) as TcfSettings, [savedKey]);
  const [tcf, setTcf] = useState<TcfSettings>(saved);
  useEffect(() => setTcf(saved), [saved]);
  const [saving, save] = useMutation(SaveConsentExperienceDocument);
  const dirty = stable(tcf) !== stable(saved);
  const set = (patch: Partial<TcfSettings>) => setTcf((current) => ({ ...current, ...patch }));
  const list = data.tcfVendorList;
  // A failed save's messages, else what publishing the saved settings would refuse.
  const saveIssues = issuesOf(saving.error);
  const issues: Issue[] = saveIssues.length ? saveIssues : dirty ? [] : data.consentConfiguration.tcfIssues;
  const at = (...path: string[]) => messagesAt(issues, 'tcf', ...path);
  const purposes: Declaration[] = list?.purposes ?? Array.from({ length: 11 }, (_, i) => ({ id: i + 1, name: `Purpose ${i + 1}` }));
  const specialFeatures: Declaration[] = list?.specialFeatures ?? [];
  // Required purposes are always granted: mapping them means nothing (one mapped already stays visible).
  const mappable = data.consentConfiguration.draft.purposes.filter((own) => !own.required || own.key in tcf.purposeMap);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save({ projectId, input: { ...savedExperience, tcf } });
    // Saved or refused, read again: turning TCF on fetches the vendor list even when the save is refused.
    reload();
  };

  return (
    <div className="editor-grid">
      <form className="editor-main" onSubmit={submit} aria-label="IAB TCF settings" noValidate>
        {!canEdit && (
          <p className="note" role="note">
            You are a Viewer in this organization: you can read these settings but not change them.
          </p>
        )}
        <ListStatus list={list} />
        <fieldset disabled={!canEdit} className="plain">
          <legend className="visually-hidden">Banner and CMP</legend>

          <h2>Banner and CMP</h2>
          <label className="check">
            <input type="checkbox" checked={tcf.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
            Show the IAB TCF banner (in the EEA, the UK and Switzerland; elsewhere visitors get the usual banner)
          </label>
          <div className="grid-3">
            <Field label="CMP id" messages={at('cmpId')} hint="Your IAB-registered CMP id, or your CMP provider’s (iabeurope.eu/tcf).">
              {(props) => (
                <input
                  {...props}
                  type="number"
                  min={2}
                  max={4095}
                  inputMode="numeric"
                  value={tcf.cmpId ?? ''}
                  onChange={(e) => set({ cmpId: e.target.value === '' ? null : Number(e.target.value) })}
                />
              )}
            </Field>
            <Field label="CMP version" messages={at('cmpVersion')}>
              {(props) => <input {...props} type="number" min={1} max={4095} value={tcf.cmpVersion} onChange={(e) => set({ cmpVersion: Number(e.target.value) })} />}
            </Field>
            <Field label="Publisher country" messages={at('publisherCountryCode')} hint="ISO 3166-1 code (FR, DE); AA when unknown.">
              {(props) => (
                <input
                  {...props}
                  className="mono"
                  maxLength={2}
                  size={3}
                  value={tcf.publisherCountryCode}
                  onChange={(e) => set({ publisherCountryCode: e.target.value.toUpperCase() })}
                />
              )}
            </Field>
          </div>

        </fieldset>
        {/* Outside the disabled fieldsets: a Viewer searches and filters too; the pick boxes follow readOnly. */}
        <Vendors projectId={projectId} tcf={tcf} set={set} purposes={purposes} specialFeatures={specialFeatures} list={list} messages={at('vendors')} readOnly={!canEdit} />
        <Atps projectId={projectId} tcf={tcf} set={set} held={!!list?.googleAtpListHeld} messages={at('googleAtps')} readOnly={!canEdit} />
        <fieldset disabled={!canEdit} className="plain">
          <legend className="visually-hidden">Restrictions, publisher purposes, purpose map and special features</legend>
          <Restrictions projectId={projectId} tcf={tcf} set={set} purposes={purposes} issues={issues} />

          <h2 id="publisher-title">Publisher purposes</h2>
          <p className="hint">
            Purposes this site itself processes data for (the TC string’s publisher segment), asked on consent or claimed on legitimate interest.
          </p>
          <Messages messages={at('publisher')} />
          <TableBox layout="scroll" label="Publisher purposes">
          <table aria-labelledby="publisher-title" className="compact matrix">
              <thead>
                <tr>
                  <th scope="col">TCF purpose</th>
                  <th scope="col">Consent</th>
                  <th scope="col">Legitimate interest</th>
                </tr>
              </thead>
              <tbody>
                {purposes.map((p) => (
                  <tr key={p.id}>
                    <th scope="row">
                      {p.id}. {p.name}
                    </th>
                    {(['purposes', 'legitimateInterests'] as const).map((kind) => {
                      const ids = tcf.publisher?.[kind] ?? [];
                      return (
                        <td key={kind}>
                          <input
                            type="checkbox"
                            aria-label={`Publisher ${kind === 'purposes' ? 'consent' : 'legitimate interest'}: ${p.name}`}
                            checked={ids.includes(p.id)}
                            onChange={(e) => {
                              const publisher = { purposes: [], legitimateInterests: [], ...tcf.publisher, [kind]: toggled(ids, p.id, e.target.checked) };
                              set({ publisher: publisher.purposes.length || publisher.legitimateInterests.length ? publisher : null });
                            }}
                          />
                        </td>
                      );
                    })}
                  </tr>
                ))}
            </tbody>
          </table>
          </TableBox>

          <h2 id="map-title">Purpose map</h2>
          <p className="hint">
            Each of your optional purposes is granted when every TCF purpose ticked for it has consent (receipts, Google Consent Mode and tag
            blocking follow it). One left unmapped gets its own switch under “This site” in the second layer.
          </p>
          <Messages messages={at('purposeMap')} />
          {mappable.length === 0 ? (
            <p className="state empty">Save optional purposes in the consent editor first to map them.</p>
          ) : (
            <TableBox layout="scroll" label="Purpose map">
            <table aria-labelledby="map-title" className="compact matrix" data-purpose-map>
              <thead>
                <tr>
                  <th scope="col">TCF purpose</th>
                  {mappable.map((own) => (
                    <th key={own.key} scope="col">
                      {own.name || own.key}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {purposes.map((p) => (
                  <tr key={p.id}>
                    <th scope="row">
                      {p.id}. {p.name}
                    </th>
                    {mappable.map((own) => {
                      const mapped = tcf.purposeMap[own.key] ?? [];
                      return (
                        <td key={own.key}>
                          <input
                            type="checkbox"
                            aria-label={`${own.name || own.key} needs ${p.id}. ${p.name}`}
                            checked={mapped.includes(p.id)}
                            onChange={(e) => {
                              const next = toggled(mapped, p.id, e.target.checked);
                              const purposeMap = { ...tcf.purposeMap };
                              if (next.length) purposeMap[own.key] = next;
                              else delete purposeMap[own.key];
                              set({ purposeMap });
                            }}
                          />
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
            </TableBox>
          )}

          <h2>Special features</h2>
          <p className="hint">Special features the banner asks opt-in for (vendors that declare them get them only with it).</p>
          <Messages messages={at('specialFeatures')} />
          {specialFeatures.length === 0 ? (
            <p className="state empty">Shown once a vendor list is held.</p>
          ) : (
            <ul className="choices">
              {specialFeatures.map((f) => (
                <li key={f.id}>
                  <label className="check">
                    <input type="checkbox" checked={tcf.specialFeatures.includes(f.id)} onChange={(e) => set({ specialFeatures: toggled(tcf.specialFeatures, f.id, e.target.checked) })} />
                    {f.name}
                  </label>
                </li>
              ))}
            </ul>
          )}
        </fieldset>
        {canEdit && (
          <div className="savebar">
            <button type="submit" className="primary" disabled={!dirty || saving.fetching}>
              {saving.fetching ? 'Saving…' : 'Save TCF settings'}
            </button>
            <button type="button" disabled={!dirty} onClick={() => setTcf(saved)}>
              Discard changes
            </button>
            <span role="status">
              {dirty ? 'Unsaved changes.' : saveIssues.length ? `Not saved: ${saveIssues.length} problem${saveIssues.length > 1 ? 's' : ''} (shown at the fields).` : saving.data && !saving.error ? 'TCF settings saved.' : ''}
            </span>
          </div>
        )}
        {saveIssues.length > 0 && (
          <div className="state error" role="alert">
            <p className="error-title">Saving failed: fix the fields marked above</p>
            <ul>
              {saveIssues.map((issue, i) => (
                <li key={i}>
                  <code>{issue.path.join('.')}</code>: {issue.message}
                </li>
              ))}
            </ul>
          </div>
        )}
        <ErrorState title="Saving the TCF settings failed" error={otherMessages(saving.error).length ? saving.error : null} />
        {!dirty && !saveIssues.length && issues.length > 0 && <PublishBlockers issues={issues} />}
      </form>
      <aside className="editor-preview" aria-label="TCF preview">
        <Preview projectId={projectId} experience={savedExperience} tcf={tcf} listVersion={list?.version ?? null} />
      </aside>
    </div>
  );
}

function ListStatus({ list }: { list: Data['tcfVendorList'] }) {
  if (!list) {
    return (
      <p className="note" role="note" data-list="missing">
        No Global Vendor List is held yet. The service fetches it when a project turns TCF on (save with “Show the IAB TCF banner” ticked); an
        offline installation imports it with <code>npm run admin -- tcf import</code>.
      </p>
    );
  }
  return (
    <p className="hint" data-list="held">
      Global Vendor List version {list.version} (policy version {list.tcfPolicyVersion}, updated {list.lastUpdated.slice(0, 10)}): the next publish
      pins it.
    </p>
  );
}

function PublishBlockers({ issues }: { issues: Issue[] }) {
  return (
    <div className="state error publish-blockers" role="note" aria-labelledby="blockers-title">
      <p className="error-title" id="blockers-title">
        Publishing would be refused until these are fixed
      </p>
      <ul>
        {issues.map((issue, i) => (
          <li key={i}>
            <code>{issue.path.join('.')}</code>: {issue.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

let fieldIds = 0;
/** A labelled input with its hint and the service's messages, tied together for screen readers. */
function Field({ label, hint, messages, children }: { label: string; hint?: string; messages: string[]; children: (props: Record<string, unknown>) => ReactNode }) {
  const [id] = useState(() => `tcf-field-${++fieldIds}`);
  const described = [hint ? `${id}-hint` : '', messages.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': messages.length ? true : undefined, 'aria-describedby': described })}
      {hint && (
        <p className="hint small" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {messages.length > 0 && (
        <p className="field-error" id={`${id}-error`}>
          {messages.join(' ')}
        </p>
      )}
    </div>
  );
}

function Messages({ messages }: { messages: string[] }) {
  if (!messages.length) return null;
  return (
    <ul className="field-error messages">
      {messages.map((m, i) => (
        <li key={i}>{m}</li>
      ))}
    </ul>
  );
}

/** A value that follows `value` once it has stopped changing (a search box does not query per keystroke). */
function useSettled<T>(value: T, ms = SEARCH_SETTLE_MS): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

const short = (ids: readonly number[]) => (ids.length ? ids.join(', ') : '—');

interface SectionProps {
  projectId: string;
  tcf: TcfSettings;
  set: (patch: Partial<TcfSettings>) => void;
}

function Vendors({
  projectId,
  tcf,
  set,
  purposes,
  specialFeatures,
  list,
  messages,
  readOnly,
}: SectionProps & { purposes: Declaration[]; specialFeatures: Declaration[]; list: Data['tcfVendorList']; messages: string[]; readOnly: boolean }) {
  const [search, setSearch] = useState('');
  const [purpose, setPurpose] = useState('');
  const [feature, setFeature] = useState('');
  const [li, setLi] = useState('');
  const pager = usePager();
  const settledSearch = useSettled(search);
  useEffect(() => pager.reset(), [settledSearch, purpose, feature, li]); // eslint-disable-line react-hooks/exhaustive-deps -- pager.reset is stable
  const [found] = useQuery({
    query: TcfVendorsDocument,
    pause: !list,
    variables: {
      projectId,
      first: PAGE,
      after: pager.cursor ?? null,
      search: settledSearch || null,
      purpose: purpose ? Number(purpose) : null,
      specialFeature: feature ? Number(feature) : null,
      legitimateInterest: li ? li === 'yes' : null,
      ids: null,
    },
  });
  const [chosen] = useQuery({
    query: TcfVendorsDocument,
    pause: !list || tcf.vendors.length === 0,
    variables: { projectId, first: 100, after: null, search: null, purpose: null, specialFeature: null, legitimateInterest: null, ids: tcf.vendors },
  });
  const names = new Map((chosen.data?.tcfVendorList?.vendors.edges ?? []).map((e) => [e.node.id, e.node.name]));
  const page = found.data?.tcfVendorList?.vendors;
  const pick = (id: number, on: boolean) =>
    set({
      vendors: toggled(tcf.vendors, id, on),
      // A vendor no longer chosen leaves the restrictions (the service refuses one that is not among the vendors).
      restrictions: on ? tcf.restrictions : tcf.restrictions.map((r) => ({ ...r, vendorIds: r.vendorIds.filter((v) => v !== id) })).filter((r) => r.vendorIds.length),
    });
  return (
    <>
      <h2 id="vendors-title">Vendors</h2>
      <p className="hint">The Global Vendor List’s vendors your banner discloses and asks for. Search by name or id, filter by what they declare.</p>
      <Messages messages={messages} />
      <div className="chosen" aria-labelledby="chosen-title">
        <p id="chosen-title" className="chosen-title">
          Chosen vendors: {tcf.vendors.length}
        </p>
        {tcf.vendors.length > 0 && (
          <ul className="chips">
            {tcf.vendors.map((id) => (
              <li key={id}>
                {names.get(id) ?? `Vendor ${id}`} <span className="muted">#{id}</span>
                {!readOnly && (
                  <button type="button" className="link" aria-label={`Remove ${names.get(id) ?? `vendor ${id}`}`} onClick={() => pick(id, false)}>
                    ×
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </div>
      {!list ? null : (
        <>
          <div className="filters" role="search" aria-label="Vendors">
            <label>
              Search vendors
              <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Name or id" />
            </label>
            <label>
              Purpose
              <select value={purpose} onChange={(e) => setPurpose(e.target.value)}>
                <option value="">Any</option>
                {purposes.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.id}. {p.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Special feature
              <select value={feature} onChange={(e) => setFeature(e.target.value)}>
                <option value="">Any</option>
                {specialFeatures.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Legitimate interest
              <select value={li} onChange={(e) => setLi(e.target.value)}>
                <option value="">Any</option>
                <option value="yes">Claims it</option>
                <option value="no">Does not</option>
              </select>
            </label>
          </div>
          {found.error && <ErrorState title="The vendors could not be read" error={found.error} />}
          {!page && !found.error && <Loading label="Reading the vendor list…" />}
          {page && (
            <>
              <p className="hint" role="status" aria-live="polite">
                {page.totalCount} vendor{page.totalCount === 1 ? '' : 's'} match.
              </p>
              {page.edges.length > 0 && (
                <TableBox>
                  <table aria-labelledby="vendors-title" className="compact vendors">
                    <thead>
                      <tr>
                        <th scope="col">Use</th>
                        <th scope="col">Vendor</th>
                        <th scope="col">Consent purposes</th>
                        <th scope="col">Legitimate interest</th>
                        <th scope="col">Special features</th>
                      </tr>
                    </thead>
                    <tbody>
                      {page.edges.map(({ node: v }) => (
                        <tr key={v.id} data-vendor={v.id}>
                          <td>
                            <input type="checkbox" aria-label={`Use ${v.name}`} checked={tcf.vendors.includes(v.id)} disabled={readOnly} onChange={(e) => pick(v.id, e.target.checked)} />
                          </td>
                          <th scope="row">
                            {v.name} <span className="muted">#{v.id}</span>
                          </th>
                          <td>{short(v.purposes)}</td>
                          <td>{short(v.legIntPurposes)}</td>
                          <td>{short(v.specialFeatures)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableBox>
              )}
              <PagerControls pager={pager} nextCursor={page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null} label="Vendors" />
            </>
          )}
        </>
      )}
    </>
  );
}

function Atps({ projectId, tcf, set, held, messages, readOnly }: SectionProps & { held: boolean; messages: string[]; readOnly: boolean }) {
  const [search, setSearch] = useState('');
  const settled = useSettled(search);
  const pager = usePager();
  useEffect(() => pager.reset(), [settled]); // eslint-disable-line react-hooks/exhaustive-deps -- pager.reset is stable
  const [found] = useQuery({ query: TcfAtpsDocument, pause: !held, variables: { projectId, first: PAGE, after: pager.cursor ?? null, search: settled || null, ids: null } });
  const page = found.data?.tcfVendorList?.googleAtps;
  return (
    <>
      <h2 id="atps-title">Google Additional Consent providers</h2>
      <p className="hint">Google’s ad technology providers that are not on the Global Vendor List, carried in the AC string. Chosen: {tcf.googleAtps.length}.</p>
      <Messages messages={messages} />
      {!held ? (
        <p className="state empty">Google’s providers list is not held yet: it is fetched with the vendor list.</p>
      ) : (
        <>
          <div className="filters" role="search" aria-label="Google providers">
            <label>
              Search providers
              <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Name or id" />
            </label>
          </div>
          {found.error && <ErrorState title="The providers could not be read" error={found.error} />}
          {page && (
            <>
              <ul className="choices atps">
                {page.edges.map(({ node: p }) => (
                  <li key={p.id}>
                    <label className="check">
                      <input
                        type="checkbox"
                        checked={tcf.googleAtps.includes(p.id)}
                        disabled={readOnly}
                        onChange={(e) => set({ googleAtps: toggled(tcf.googleAtps, p.id, e.target.checked) })}
                      />
                      {p.name} <span className="muted">#{p.id}</span>
                    </label>
                  </li>
                ))}
              </ul>
              {page.totalCount === 0 && <p className="hint">No provider matches.</p>}
              <PagerControls pager={pager} nextCursor={page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null} label="Google providers" />
            </>
          )}
        </>
      )}
    </>
  );
}

/**
 * Why a restriction may not change what a vendor does (the IAB's rules, which the encoder applies): requiring a
 * basis needs the purpose among the vendor's flexible ones; any restriction needs the vendor to declare the purpose.
 */
function restrictionNote(v: { purposes: number[]; legIntPurposes: number[]; flexiblePurposes: number[] }, r: { purposeId: number; type: RestrictionType }): string {
  if (!v.purposes.includes(r.purposeId) && !v.legIntPurposes.includes(r.purposeId)) return ' (does not declare this purpose)';
  if (r.type !== 'notAllowed' && !v.flexiblePurposes.includes(r.purposeId)) return ' (this purpose is not flexible for it)';
  return '';
}

function Restrictions({ projectId, tcf, set, purposes, issues }: SectionProps & { purposes: Declaration[]; issues: Issue[] }) {
  const [chosen] = useQuery({
    query: TcfVendorsDocument,
    pause: tcf.vendors.length === 0,
    variables: { projectId, first: 100, after: null, search: null, purpose: null, specialFeature: null, legitimateInterest: null, ids: tcf.vendors },
  });
  const vendors = (chosen.data?.tcfVendorList?.vendors.edges ?? []).map((e) => e.node);
  const update = (index: number, patch: Partial<TcfSettings['restrictions'][number]>) =>
    set({ restrictions: tcf.restrictions.map((r, i) => (i === index ? { ...r, ...patch } : r)) });
  return (
    <>
      <h2>Publisher restrictions</h2>
      <p className="hint">
        Per purpose, the legal basis chosen vendors may use on this site (the TC string’s publisher restrictions). A vendor ignores a restriction its
        declarations do not allow.
      </p>
      {tcf.restrictions.length === 0 && <p className="state empty">No restrictions: vendors use the bases they declare.</p>}
      {tcf.restrictions.map((r, index) => (
        <fieldset key={index} className="restriction" data-restriction={index}>
          <legend>Restriction {index + 1}</legend>
          <div className="row">
            <label>
              Purpose
              <select value={r.purposeId} onChange={(e) => update(index, { purposeId: Number(e.target.value) })}>
                {purposes.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.id}. {p.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Restriction
              <select value={r.type} onChange={(e) => update(index, { type: e.target.value as RestrictionType })}>
                {RESTRICTION_TYPES.map(([type, label]) => (
                  <option key={type} value={type}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
            <button type="button" className="danger" onClick={() => set({ restrictions: tcf.restrictions.filter((_, i) => i !== index) })}>
              Remove restriction {index + 1}
            </button>
          </div>
          <Messages messages={messagesAt(issues, 'tcf', 'restrictions', String(index))} />
          <p className="hint">Vendors it applies to:</p>
          <ul className="choices">
            {vendors.map((v) => (
              <li key={v.id}>
                <label className="check">
                  <input type="checkbox" checked={r.vendorIds.includes(v.id)} onChange={(e) => update(index, { vendorIds: toggled(r.vendorIds, v.id, e.target.checked) })} />
                  {v.name}
                  {restrictionNote(v, r)}
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
      ))}
      <button
        type="button"
        disabled={tcf.vendors.length === 0}
        onClick={() => set({ restrictions: [...tcf.restrictions, { purposeId: purposes[1]?.id ?? 1, vendorIds: [], type: 'requireConsent' }] })}
      >
        Add a restriction
      </button>
      {tcf.vendors.length === 0 && <span className="hint"> Choose vendors first.</span>}
    </>
  );
}
