import { validationFailed, type ValidationIssue } from '../errors.js';
import { DEFAULT_FIRST, MAX_FIRST } from '../graph/connection.js';
import type { AcProvider, StoredVendorList } from './vendor-list.js';

// The operator console's reading of the held lists (docs/tcf.md, "Console"): the newest GVL's vendors and the
// live AC providers list, searched, filtered and paged in memory (a GVL has about a thousand vendors, Google's
// list a few hundred: one JSON row each, already read whole by every check).

export interface VendorFilter {
  /** Name contains it (case-insensitive), or it is the id. */
  search?: string | null;
  /** Declares this purpose, on consent or on legitimate interest. */
  purpose?: number | null;
  specialFeature?: number | null;
  /** true: claims legitimate interest (for `purpose` when given, else for any purpose); false: never does. */
  legitimateInterest?: boolean | null;
  /** Only these ids (the chosen vendors). */
  ids?: readonly number[] | null;
}

export interface ListPage {
  first?: number | null;
  after?: string | null;
}

export type ConsoleVendor = StoredVendorList['content']['vendors'][string];

/** Cursor: base64url of `id:<n>` (both lists are sorted by id). */
const cursorOf = (id: number) => Buffer.from(`id:${id}`).toString('base64url');

function pageOf(args: ListPage): { first: number; after: number } {
  const issues: ValidationIssue[] = [];
  const first = args.first ?? DEFAULT_FIRST;
  if (!Number.isInteger(first) || first < 1 || first > MAX_FIRST) issues.push({ path: ['first'], message: `Must be an integer from 1 to ${MAX_FIRST}` });
  let after = 0;
  if (args.after != null) {
    const match = /^id:(\d{1,9})$/.exec(Buffer.from(args.after, 'base64url').toString('utf8'));
    if (match) after = Number(match[1]);
    else issues.push({ path: ['after'], message: 'Invalid cursor' });
  }
  if (issues.length) throw validationFailed(issues);
  return { first, after };
}

function connection<T extends { id: number }>(all: T[], args: ListPage) {
  const { first, after } = pageOf(args);
  const rest = all.filter((item) => item.id > after);
  const edges = rest.slice(0, first).map((node) => ({ node, cursor: cursorOf(node.id) }));
  return {
    totalCount: all.length,
    edges,
    pageInfo: { hasNextPage: rest.length > first, hasPreviousPage: after > 0, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
  };
}

const matches = (search: string | null | undefined, id: number, name: string) => {
  const text = search?.trim().toLowerCase();
  return !text || String(id) === text || name.toLowerCase().includes(text);
};

/** Vendors a banner may disclose (not deleted), filtered, by id. */
export function vendorConnection(list: StoredVendorList, filter: VendorFilter & ListPage, now: Date) {
  const ids = filter.ids ? new Set(filter.ids) : null;
  const vendors = Object.values(list.content.vendors)
    .filter((vendor) => !(vendor.deletedDate && new Date(vendor.deletedDate) <= now))
    .filter((vendor) => !ids || ids.has(vendor.id))
    .filter((vendor) => matches(filter.search, vendor.id, vendor.name))
    .filter((vendor) => filter.purpose == null || vendor.purposes.includes(filter.purpose) || vendor.legIntPurposes.includes(filter.purpose))
    .filter((vendor) => filter.specialFeature == null || vendor.specialFeatures.includes(filter.specialFeature))
    .filter((vendor) => {
      if (filter.legitimateInterest == null) return true;
      const claims = filter.purpose == null ? vendor.legIntPurposes.length > 0 : vendor.legIntPurposes.includes(filter.purpose);
      return claims === filter.legitimateInterest;
    })
    .sort((a, b) => a.id - b.id);
  return connection(vendors, filter);
}

/** Google's ATPs, filtered, by id. */
export function atpConnection(providers: AcProvider[], filter: Pick<VendorFilter, 'search' | 'ids'> & ListPage) {
  const ids = filter.ids ? new Set(filter.ids) : null;
  const atps = providers.filter((p) => (!ids || ids.has(p.id)) && matches(filter.search, p.id, p.name)).sort((a, b) => a.id - b.id);
  return connection(atps, filter);
}
