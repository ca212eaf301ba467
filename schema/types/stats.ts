// Consent analytics (extensions.md §5, docs/analytics.md): the root field behind
// GET /receipts/stats and Project.consentStats on the nested graph (schema/types/graph.ts).
import DataLoader from 'dataloader';
import type { Context } from '../../src/context.js';
import { consentStatsOf, parseStatsInput, type ActionCounts, type ConsentStats, type StatsBucket, type StatsCounts } from '../../src/stats/service.js';
import { builder } from '../builder.js';

const PLATFORMS_DESCRIPTION = 'Source platform (web, ios, android, other; unknown: receipts without a source) → receipts';

// Field names as the SDK sends the actions (and as REST answers them), so both answers are the same JSON.
export const ConsentActionCounts = builder.objectRef<ActionCounts>('ConsentActionCounts').implement({
  description: 'Receipts whose SDK reported each action (receipts without an action are not counted here)',
  fields: (t) => ({
    accept_all: t.exposeInt('accept_all'),
    reject_all: t.exposeInt('reject_all'),
    custom: t.exposeInt('custom'),
    opt_out: t.exposeInt('opt_out'),
    gpc: t.exposeInt('gpc', { description: 'Choices made for the visitor by Global Privacy Control' }),
  }),
});

export const ConsentStatsCounts = builder.objectRef<StatsCounts>('ConsentStatsCounts').implement({
  description: 'Receipts of a range and how they answered (definitions: docs/analytics.md)',
  fields: (t) => ({
    receipts: t.exposeInt('receipts'),
    acceptedAll: t.exposeInt('acceptedAll', { description: 'Every optional purpose granted (also when the version has none)' }),
    rejectedAll: t.exposeInt('rejectedAll', { description: 'Every optional purpose denied' }),
    customised: t.exposeInt('customised', { description: 'Some optional purposes granted, some denied' }),
    gpc: t.exposeInt('gpc', { description: 'Receipts whose browser sent Global Privacy Control' }),
    purposes: t.expose('purposes', { type: 'JSON', description: 'Purpose key → receipts that granted it' }),
    actions: t.field({ type: ConsentActionCounts, resolve: (counts) => counts.actions }),
    jurisdictions: t.expose('jurisdictions', { type: 'JSON', description: 'Location code (DE, US-CA) → receipts whose SDK reported it' }),
    platforms: t.expose('platforms', { type: 'JSON', description: PLATFORMS_DESCRIPTION }),
  }),
});

export const ConsentStatsBucket = builder.objectRef<StatsBucket>('ConsentStatsBucket').implement({
  description: 'The counts of one day, week (from Monday) or month, in UTC',
  fields: (t) => ({
    start: t.exposeString('start', { description: 'First UTC day of the bucket, YYYY-MM-DD' }),
    receipts: t.exposeInt('receipts'),
    acceptedAll: t.exposeInt('acceptedAll'),
    rejectedAll: t.exposeInt('rejectedAll'),
    customised: t.exposeInt('customised'),
    gpc: t.exposeInt('gpc'),
    purposes: t.expose('purposes', { type: 'JSON', description: 'Purpose key → receipts that granted it' }),
    actions: t.field({ type: ConsentActionCounts, resolve: (counts) => counts.actions }),
    jurisdictions: t.expose('jurisdictions', { type: 'JSON', description: 'Location code (DE, US-CA) → receipts whose SDK reported it' }),
    platforms: t.expose('platforms', { type: 'JSON', description: PLATFORMS_DESCRIPTION }),
  }),
});

export const ConsentStatsRef = builder.objectRef<ConsentStats>('ConsentStats').implement({
  description: 'Consent analytics of a range of UTC days, from the daily rollup',
  fields: (t) => ({
    from: t.exposeString('from', { description: 'First UTC day counted, YYYY-MM-DD' }),
    to: t.exposeString('to', { description: 'Last UTC day counted (inclusive), YYYY-MM-DD' }),
    interval: t.exposeString('interval'),
    buckets: t.field({ type: [ConsentStatsBucket], resolve: (stats) => stats.buckets }),
    totals: t.field({ type: ConsentStatsCounts, resolve: (stats) => stats.totals }),
  }),
});

export const STATS_ARGS_DESCRIPTION =
  'from, to: UTC days YYYY-MM-DD, both inclusive (default: the 30 days up to today); interval: day (default), week or month; ' +
  'versionId: only receipts of that version of the project; platform: only receipts from web, ios, android, other or unknown (no ' +
  'source); at most 5 years';

/** GraphQL nulls mean "not given". */
export const statsArgs = (args: {
  from?: string | null;
  to?: string | null;
  interval?: string | null;
  versionId?: string | number | null;
  platform?: string | null;
}) => ({
  ...(args.from != null && { from: args.from }),
  ...(args.to != null && { to: args.to }),
  ...(args.interval != null && { interval: args.interval }),
  ...(args.versionId != null && { versionId: String(args.versionId) }),
  ...(args.platform != null && { platform: args.platform }),
});

const perRequest = new WeakMap<Context, Map<string, DataLoader<string, ConsentStats>>>();

/** Project.consentStats of every project asking the same range in one batch (one statement). */
export function consentStatsLoader(ctx: Context, input: unknown): DataLoader<string, ConsentStats> {
  const parsed = parseStatsInput(input);
  let loaders = perRequest.get(ctx);
  if (!loaders) perRequest.set(ctx, (loaders = new Map()));
  const key = JSON.stringify(parsed);
  let loader = loaders.get(key);
  if (!loader) loaders.set(key, (loader = new DataLoader((projectIds) => consentStatsOf(ctx.services, projectIds, parsed))));
  return loader;
}

builder.queryFields((t) => ({
  consentStats: t.field({
    type: ConsentStatsRef,
    description: `Consent analytics of a project (Viewer or above, as GET /receipts/stats). ${STATS_ARGS_DESCRIPTION}`,
    args: {
      projectId: t.arg.id({ required: true }),
      from: t.arg.string(),
      to: t.arg.string(),
      interval: t.arg.string(),
      versionId: t.arg.id(),
      platform: t.arg.string(),
    },
    authScopes: (_root, args) => ({ projectRole: { projectId: String(args.projectId), role: 'VIEWER' } }),
    resolve: (_root, { projectId, ...args }, ctx) => consentStatsLoader(ctx, statsArgs(args)).load(String(projectId)),
  }),
}));
