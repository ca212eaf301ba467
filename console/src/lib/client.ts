// The one urql client: /graphql on the service's own origin with the session cookie and the header that
// lets the cookie count (docs/console-sessions.md), and a normalised cache (graphcache) so a change made on
// one screen shows on every other without a refetch.
import { cacheExchange } from '@urql/exchange-graphcache';
import { Client, fetchExchange, mapExchange, type CombinedError } from 'urql';
import { cacheConfig } from './cache';

/** Every console request (REST and /graphql) sends it; without it the cookie is ignored. */
export const CONSOLE_HEADERS = { 'X-Consent-Console': '1' } as const;

/** Called when the API says the session is gone (expired, signed out elsewhere): the app shows sign-in. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

export function isUnauthorized(error: CombinedError | undefined): boolean {
  return !!error && (error.response?.status === 401 || error.graphQLErrors.some((e) => e.extensions?.code === 'unauthorized'));
}

export function createClient(): Client {
  return new Client({
    url: '/graphql',
    preferGetMethod: false,
    fetchOptions: () => ({ credentials: 'same-origin', headers: { ...CONSOLE_HEADERS } }),
    exchanges: [
      mapExchange({
        onError(error, operation) {
          // A query's 401 means the session ended; a mutation's error stays with its form.
          if (operation.kind === 'query' && isUnauthorized(error)) onSignedOut();
        },
      }),
      cacheExchange(cacheConfig),
      fetchExchange,
    ],
  });
}
