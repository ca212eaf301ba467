// Loading, empty and error states: every screen shows one of these instead of a blank area or a silent
// failure. API errors are shown in the API's own words (its message, the field details of a 400).
import type { ReactNode } from 'react';
import type { CombinedError } from 'urql';
import { ApiError } from '../lib/rest';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="state loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state empty">
      <p className="empty-title">{title}</p>
      {children}
    </div>
  );
}

interface FieldDetail {
  field?: string;
  path?: string;
  message?: string;
}

/** Every message an error carries, in words: one per GraphQL error, with its field details. */
export function errorMessages(error: unknown): string[] {
  if (!error) return [];
  const combined = error as Partial<CombinedError>;
  if (Array.isArray(combined.graphQLErrors) && combined.graphQLErrors.length) {
    return combined.graphQLErrors.flatMap((e) => [e.message, ...detailMessages(e.extensions?.details)]);
  }
  if (combined.networkError) {
    const status = combined.response?.status;
    return [status ? `The service answered ${status}. Try again in a moment.` : 'The service cannot be reached. Check your connection and try again.'];
  }
  if (error instanceof ApiError) return [error.message, ...detailMessages(error.details)];
  if (error instanceof Error) return [error.message];
  return [String(error)];
}

function detailMessages(details: unknown): string[] {
  if (Array.isArray(details)) {
    return details.map((d: FieldDetail | string) => (typeof d === 'string' ? d : [d.field ?? d.path, d.message].filter(Boolean).join(': ')));
  }
  if (details && typeof details === 'object') {
    return Object.entries(details as Record<string, unknown>).map(([field, message]) => `${field}: ${String(message)}`);
  }
  return [];
}

/** An error box (role=alert, read out at once) with the API's words and, when given, a retry button. */
export function ErrorState({ error, title = 'Something went wrong', retry }: { error: unknown; title?: string; retry?: () => void }) {
  const messages = errorMessages(error);
  if (!messages.length) return null;
  return (
    <div className="state error" role="alert">
      <p className="error-title">{title}</p>
      <ul>
        {messages.map((message, i) => (
          <li key={i}>{message}</li>
        ))}
      </ul>
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * A query's three states in one place: loading (no data yet), error (with retry), else the children with
 * the data. `isEmpty` picks the empty state.
 */
export function QueryState<T>({
  result,
  retry,
  empty,
  isEmpty,
  children,
}: {
  result: { fetching: boolean; data?: T; error?: CombinedError };
  retry?: () => void;
  empty?: ReactNode;
  isEmpty?: (data: T) => boolean;
  children: (data: T) => ReactNode;
}) {
  if (result.error && !result.data) return <ErrorState error={result.error} retry={retry} />;
  if (!result.data) return <Loading />;
  if (isEmpty?.(result.data)) return <>{empty}</>;
  return (
    <>
      {result.error && <ErrorState error={result.error} retry={retry} />}
      {children(result.data)}
    </>
  );
}
