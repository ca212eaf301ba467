// Consent analytics of a project (console-screens): how visitors answer, from the daily rollup
// (docs/analytics.md). Three uPlot charts (opt-in rate per purpose, the accept/reject/customise split, the
// share of GPC browsers) for a range, an interval and optionally one version or platform (web, iOS, Android: the
// receipts' source), and the same numbers as a table.
import { TableBox } from '../components/table-box';
import { useMemo, useState, type FormEvent } from 'react';
import { useQuery } from 'urql';
import { Empty, QueryState } from '../components/states';
import { ConsentAnalyticsDocument, type ConsentAnalyticsQuery } from '../graphql/generated';
import type { ScreenProps } from '../lib/screen';
import { TimeChart, type ChartSeries } from './analytics/chart';
import { formatCount, formatDay, formatShare, utcDay } from './parts/format';
import './parts/screens.css';

type Stats = NonNullable<ConsentAnalyticsQuery['project']['consentStats']>;
type Interval = 'day' | 'week' | 'month';

interface Filters {
  from: string;
  to: string;
  interval: Interval;
  versionId: string;
  /** '' for every platform, else web, ios, android, other or unknown (receipts without a source). */
  platform: string;
}

/** The platforms analytics can split by (docs/analytics.md), as the console names them. */
export const PLATFORM_NAMES: Record<string, string> = { web: 'Web', ios: 'iOS', android: 'Android', other: 'Other apps', unknown: 'Not said (older SDKs)' };

/** Colours that keep 3:1 against white, told apart also by the legend's order and the table. */
const PALETTE = ['#1f4e79', '#b35900', '#1e6b3a', '#6a3d9a', '#a4262c', '#00707a', '#5a6470', '#8a5a00'];
const SPLIT = { accepted: '#1e6b3a', customised: '#b35900', rejected: '#a4262c' };

interface PurposeInfo {
  key: string;
  name: string;
  required: boolean;
}

/** The purposes' names and whether they are required, from the latest published config (keys alone otherwise). */
function purposesOf(data: ConsentAnalyticsQuery, stats: Stats): PurposeInfo[] {
  const config = data.project.consent?.latestVersion?.config as { purposes?: { key: string; name: string; required: boolean }[] } | undefined;
  const known = new Map((config?.purposes ?? []).map((p) => [p.key, p]));
  const keys = new Set([...(config?.purposes ?? []).map((p) => p.key), ...Object.keys(stats.totals.purposes as Record<string, number>)]);
  return [...keys].map((key) => ({ key, name: known.get(key)?.name ?? key, required: known.get(key)?.required ?? false }));
}

export default function Analytics({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const [filters, setFilters] = useState<Filters>({ from: utcDay(-29), to: utcDay(0), interval: 'day', versionId: '', platform: '' });
  const [result, refetch] = useQuery({
    query: ConsentAnalyticsDocument,
    variables: {
      projectId,
      from: filters.from,
      to: filters.to,
      interval: filters.interval,
      versionId: filters.versionId || undefined,
      platform: filters.platform || undefined,
    },
    requestPolicy: 'cache-and-network',
  });
  const versions = result.data?.project.versions?.edges.map((e) => e.node) ?? [];

  return (
    <section aria-labelledby="screen-title" className="screen">
      <div className="title-row">
        <h1 id="screen-title">Analytics</h1>
        <button type="button" onClick={() => refetch({ requestPolicy: 'network-only' })} disabled={result.fetching}>
          {result.fetching ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <p className="lead">How visitors answered the banner, counted per UTC day from the receipts.</p>
      <FilterForm value={filters} versions={versions} onApply={setFilters} />
      <QueryState
        result={result}
        retry={() => refetch({ requestPolicy: 'network-only' })}
        isEmpty={(data) => !data.project.consentStats?.totals.receipts}
        empty={
          <Empty title="No receipt in this range.">
            <p>Charts appear once visitors answer the banner on your sites and apps. Try a longer range, all versions or all platforms.</p>
          </Empty>
        }
      >
        {(data) => <Report data={data} stats={data.project.consentStats!} />}
      </QueryState>
    </section>
  );
}

function FilterForm({ value, versions, onApply }: { value: Filters; versions: { id: string; number: number }[]; onApply(f: Filters): void }) {
  const [form, setForm] = useState(value);
  const invalid = !form.from || !form.to || form.from > form.to;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!invalid) onApply(form);
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Analytics range">
      <label>
        From (UTC day)
        <input type="date" value={form.from} onChange={(e) => setForm({ ...form, from: e.target.value })} required />
      </label>
      <label>
        To (UTC day, included)
        <input type="date" value={form.to} onChange={(e) => setForm({ ...form, to: e.target.value })} required aria-invalid={invalid || undefined} />
      </label>
      <label>
        Per
        <select value={form.interval} onChange={(e) => setForm({ ...form, interval: e.target.value as Interval })}>
          <option value="day">Day</option>
          <option value="week">Week (from Monday)</option>
          <option value="month">Month</option>
        </select>
      </label>
      <label>
        Version
        <select value={form.versionId} onChange={(e) => setForm({ ...form, versionId: e.target.value })}>
          <option value="">All versions</option>
          {versions.map((v) => (
            <option key={v.id} value={v.id}>
              Version {v.number}
            </option>
          ))}
        </select>
      </label>
      <label>
        Platform
        <select value={form.platform} onChange={(e) => setForm({ ...form, platform: e.target.value })}>
          <option value="">All platforms</option>
          {Object.entries(PLATFORM_NAMES).map(([value, name]) => (
            <option key={value} value={value}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <div className="row">
        <button type="submit" className="primary" disabled={invalid}>
          Show
        </button>
      </div>
      {invalid && (
        <p className="field-error" role="alert">
          Choose a “From” day on or before the “To” day.
        </p>
      )}
    </form>
  );
}

/** Line charts of rates need this many periods with receipts; the counts (bars, tiles, table) show from the first. */
const MIN_PERIODS_FOR_TRENDS = 3;

/** A total as a share, with the count beside it. */
function Tile({ label, count, whole }: { label: string; count: number; whole: number }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        {formatShare(count, whole)} <span className="tile-count">{formatCount(count)} of {formatCount(whole)}</span>
      </dd>
    </div>
  );
}

const seconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;
const rate = (part: number | undefined, whole: number) => (whole ? Math.round(((part ?? 0) / whole) * 1000) / 10 : null);

function Report({ data, stats }: { data: ConsentAnalyticsQuery; stats: Stats }) {
  const purposes = purposesOf(data, stats);
  const optional = purposes.filter((p) => !p.required);
  const totals = stats.totals;
  const charts = useMemo(() => {
    const x = stats.buckets.map((b) => seconds(b.start));
    const perPurpose: ChartSeries[] = optional.map((p, i) => ({
      label: p.name,
      color: PALETTE[i % PALETTE.length]!,
      kind: 'line',
      values: stats.buckets.map((b) => rate((b.purposes as Record<string, number>)[p.key], b.receipts)),
    }));
    // Stacked bars: each series plots the sum of itself and those below; the tallest is drawn first.
    const split: ChartSeries[] = [
      { label: 'Rejected all', color: SPLIT.rejected, kind: 'bars', values: stats.buckets.map((b) => b.receipts) },
      { label: 'Customised', color: SPLIT.customised, kind: 'bars', values: stats.buckets.map((b) => b.acceptedAll + b.customised) },
      { label: 'Accepted all', color: SPLIT.accepted, kind: 'bars', values: stats.buckets.map((b) => b.acceptedAll) },
    ];
    const gpc: ChartSeries[] = [{ label: 'GPC share', color: PALETTE[3]!, kind: 'line', values: stats.buckets.map((b) => rate(b.gpc, b.receipts)) }];
    return { x, perPurpose, split, gpc };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the stats object identifies the data
  }, [stats]);
  const range = `${formatDay(stats.from)} to ${formatDay(stats.to)}, per ${stats.interval}`;
  // A rate over one or two periods is a lone dot in a month-wide chart, not a trend: say so instead (day one).
  const periodsWithData = stats.buckets.filter((b) => b.receipts > 0).length;
  const sparse = periodsWithData < MIN_PERIODS_FOR_TRENDS;

  return (
    <>
      <dl className="totals" aria-label="Totals of the range">
        <div>
          <dt>Receipts</dt>
          <dd>{formatCount(totals.receipts)}</dd>
        </div>
        <Tile label="Accepted all" count={totals.acceptedAll} whole={totals.receipts} />
        <Tile label="Rejected all" count={totals.rejectedAll} whole={totals.receipts} />
        <Tile label="Customised" count={totals.customised} whole={totals.receipts} />
        <Tile label="GPC browsers" count={totals.gpc} whole={totals.receipts} />
      </dl>
      <PlatformSplit platforms={totals.platforms as Record<string, number>} whole={totals.receipts} />
      {sparse && (
        <p className="note" role="note">
          {periodsWithData === 1 ? `Only one ${stats.interval} has receipts so far` : `Only ${periodsWithData} ${stats.interval}s have receipts so far`}: the
          opt-in and GPC trends are drawn from three {stats.interval}s with receipts on. Until then the counts are in the tiles above and the table
          below.
        </p>
      )}
      <div className="charts">
        {sparse ? null : optional.length ? (
          <TimeChart
            id="chart-optin"
            title="Opt-in rate per purpose"
            summary={`${range}. ${optional.map((p) => `${p.name}: ${formatShare((totals.purposes as Record<string, number>)[p.key] ?? 0, totals.receipts)} overall`).join('; ')}.`}
            x={charts.x}
            series={charts.perPurpose}
            unit="percent"
          />
        ) : (
          <p className="note">This configuration has no optional purpose: there is no opt-in rate to chart.</p>
        )}
        <TimeChart
          id="chart-split"
          title="Accepted, customised or rejected"
          summary={`${range}. Receipts per period, stacked: ${formatCount(totals.acceptedAll)} accepted all, ${formatCount(totals.customised)} customised, ${formatCount(totals.rejectedAll)} rejected all.`}
          x={charts.x}
          series={charts.split}
          unit="count"
        />
        {!sparse && (
        <TimeChart
          id="chart-gpc"
          title="Share of browsers sending Global Privacy Control"
          summary={`${range}. ${formatShare(totals.gpc, totals.receipts)} overall.`}
          x={charts.x}
          series={charts.gpc}
          unit="percent"
        />
        )}
      </div>
      <DataTable stats={stats} purposes={purposes} />
    </>
  );
}

/** Where the range's receipts came from (their source's platform), when more than one platform answered. */
function PlatformSplit({ platforms, whole }: { platforms: Record<string, number>; whole: number }) {
  const entries = Object.entries(platforms).sort(([, a], [, b]) => b - a);
  if (entries.length < 2) return null;
  return (
    <p className="muted" aria-label="Receipts by platform">
      By platform: {entries.map(([platform, count]) => `${PLATFORM_NAMES[platform] ?? platform} ${formatShare(count, whole)} (${formatCount(count)})`).join(' · ')}. Choose a
      platform above to see its decisions alone.
    </p>
  );
}

function DataTable({ stats, purposes }: { stats: Stats; purposes: PurposeInfo[] }) {
  return (
    <details className="data-table" open>
      <summary>The numbers as a table</summary>
      {/* Above the box, not a caption: a caption is as wide as the table and scrolled out of sight on a phone. */}
      <p id="data-table-about" className="muted">
        Receipts per {stats.interval} and how they answered; a purpose’s column is the share of receipts that granted it.
      </p>
      <TableBox layout="scroll" label="Consent numbers per period">
        <table aria-describedby="data-table-about">
          <caption className="visually-hidden">Consent numbers per {stats.interval}</caption>
          <thead>
            <tr>
              <th scope="col">{stats.interval === 'day' ? 'Day' : stats.interval === 'week' ? 'Week from' : 'Month from'}</th>
              <th scope="col">Receipts</th>
              <th scope="col">Accepted all</th>
              <th scope="col">Customised</th>
              <th scope="col">Rejected all</th>
              <th scope="col">GPC</th>
              {purposes.map((p) => (
                <th scope="col" key={p.key}>
                  {p.name}
                  {p.required && <small>required</small>}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {stats.buckets.map((b) => (
              <tr key={b.start}>
                <th scope="row" className="nowrap">{formatDay(b.start)}</th>
                <td>{formatCount(b.receipts)}</td>
                <td>{formatCount(b.acceptedAll)}</td>
                <td>{formatCount(b.customised)}</td>
                <td>{formatCount(b.rejectedAll)}</td>
                <td>{formatCount(b.gpc)}</td>
                {purposes.map((p) => (
                  <td key={p.key}>{formatShare((b.purposes as Record<string, number>)[p.key] ?? 0, b.receipts)}</td>
                ))}
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Total</th>
              <td>{formatCount(stats.totals.receipts)}</td>
              <td>{formatCount(stats.totals.acceptedAll)}</td>
              <td>{formatCount(stats.totals.customised)}</td>
              <td>{formatCount(stats.totals.rejectedAll)}</td>
              <td>{formatCount(stats.totals.gpc)}</td>
              {purposes.map((p) => (
                <td key={p.key}>{formatShare((stats.totals.purposes as Record<string, number>)[p.key] ?? 0, stats.totals.receipts)}</td>
              ))}
            </tr>
          </tfoot>
        </table>
      </TableBox>
    </details>
  );
}
