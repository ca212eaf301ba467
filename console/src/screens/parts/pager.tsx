// Forward paging by cursor (Relay `after`, or a REST-shaped `nextCursor`): the list keeps the cursors it
// came through, so "Previous" goes back without the API paging backwards (it only pages forwards).
import { useCallback, useState } from 'react';

export interface Pager {
  /** The cursor of the page shown (undefined: the first page). */
  cursor: string | undefined;
  page: number;
  next(cursor: string): void;
  previous(): void;
  reset(): void;
}

export function usePager(): Pager {
  const [stack, setStack] = useState<string[]>([]);
  return {
    cursor: stack.at(-1),
    page: stack.length + 1,
    next: useCallback((cursor: string) => setStack((s) => [...s, cursor]), []),
    previous: useCallback(() => setStack((s) => s.slice(0, -1)), []),
    reset: useCallback(() => setStack([]), []),
  };
}

/** "Previous" and "Next" under a list; `label` names the list for screen readers. */
export function PagerControls({ pager, nextCursor, label }: { pager: Pager; nextCursor: string | null | undefined; label: string }) {
  if (pager.page === 1 && !nextCursor) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={pager.previous} disabled={pager.page === 1}>
        Previous
      </button>
      <span aria-live="polite">Page {pager.page}</span>
      <button type="button" onClick={() => nextCursor && pager.next(nextCursor)} disabled={!nextCursor}>
        Next
      </button>
    </nav>
  );
}
