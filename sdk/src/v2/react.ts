// `@consent/sdk/react`: `useConsent(purpose)` re-renders when the visitor's decision changes. It reads the
// SDK's `consent:ready` and `consent:change` window events, so it works with a client started anywhere on the page (the npm
// import, or the /sdk/v2/consent.js tag); before a decision, and on the server, it answers false.
import { useSyncExternalStore } from 'react';
import type { ConsentState } from './public';

let last: ConsentState | null = null;

function subscribe(notify: () => void): () => void {
  const on = (e: Event) => {
    last = (e as CustomEvent<ConsentState>).detail;
    notify();
  };
  addEventListener('consent:change', on);
  addEventListener('consent:ready', on);
  return () => {
    removeEventListener('consent:change', on);
    removeEventListener('consent:ready', on);
  };
}

/** True when the visitor's current decision grants `purpose`. */
export function useConsent(purpose: string): boolean {
  return useSyncExternalStore(
    subscribe,
    () => last?.choices[purpose] === true,
    () => false,
  );
}
