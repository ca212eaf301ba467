/** What the build reads: a newer file in any of these makes dist/ stale. */
export const INPUTS: readonly string[];
/** Whether dist/ was built from the current INPUTS. */
export function distIsFresh(): boolean;
/** Builds dist/ under a lock (with ifStale, only when it is not fresh); true when it built. */
export function build(options?: { ifStale?: boolean }): boolean;
