// Relay connection arguments and cursors of the nested operator graph.
import { validationFailed } from '../errors.js';

export const DEFAULT_FIRST = 20;
export const MAX_FIRST = 100;

/** Where a page starts: after the row with this sort key (time, then id), both descending or ascending. */
export interface PageAfter {
  at: Date;
  id: string;
}

export interface PageArgs {
  first: number;
  after: PageAfter | null;
}

/** The cursor of a row: its sort key, opaque to clients (base64url of `<iso time>|<id>`). */
export const encodePageCursor = (at: Date, id: string) => Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');

export function decodePageCursor(cursor: string): PageAfter | null {
  const [iso, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const at = new Date(iso ?? '');
  if (!id || extra !== undefined || Number.isNaN(at.getTime()) || at.toISOString() !== iso) return null;
  return { at, id };
}

/**
 * `first` (1..100, default 20) and `after`: the only arguments the connections take (every list here is
 * read newest or oldest first from its start; the schema has no `last`/`before`). Out of range → validation_failed.
 */
export function pageArgs(args: { first?: number | null; after?: string | null }): PageArgs {
  const issues = [];
  const first = args.first ?? DEFAULT_FIRST;
  if (!Number.isInteger(first) || first < 1 || first > MAX_FIRST) {
    issues.push({ path: ['first'], message: `Must be an integer from 1 to ${MAX_FIRST}` });
  }
  const after = args.after == null ? null : decodePageCursor(args.after);
  if (args.after != null && !after) issues.push({ path: ['after'], message: 'Invalid cursor' });
  if (issues.length) throw validationFailed(issues);
  return { first, after };
}

/** A Relay connection from `first + 1` rows read in order. */
export function toConnection<Row>(rows: Row[], args: PageArgs, keyOf: (row: Row) => PageAfter) {
  const page = rows.slice(0, args.first);
  const edges = page.map((node) => {
    const key = keyOf(node);
    return { node, cursor: encodePageCursor(key.at, key.id) };
  });
  return {
    edges,
    pageInfo: {
      hasNextPage: rows.length > args.first,
      hasPreviousPage: args.after !== null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
