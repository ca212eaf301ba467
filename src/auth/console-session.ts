import { parseCookie, stringifySetCookie } from 'cookie';
import type { Config } from '../config.js';
import { bearerToken } from '../http/headers.js';
import { SESSION_LIFETIME_MS } from './sessions.js';

/**
 * The console's session cookie: the same opaque token a bearer login returns. Production names it with the
 * `__Host-` prefix: browsers accept such a cookie only when it is Secure, Path=/ and has no Domain, so a sibling
 * subdomain cannot plant one for our host (session fixation). Over plain http (development, tests) browsers refuse
 * a `__Host-` cookie, so there it keeps the plain name. Each mode reads only its own name.
 */
export function sessionCookieName(config: Pick<Config, 'production'>): string {
  return config.production ? '__Host-consent_session' : 'consent_session';
}
/** The header the console sends; a cross-site form or image cannot, and a cross-site fetch needs a preflight for it. */
export const CONSOLE_HEADER = 'x-consent-console';

/** Reads one request header, lowercase name (node:http and Fetch requests alike). */
export type HeaderReader = (name: string) => string | undefined;

export interface SessionCredential {
  token: string;
  via: 'bearer' | 'cookie';
}

/**
 * The operator session a request presents, or undefined. A bearer token wins. The console's
 * cookie counts only on a console request (see isConsoleRequest): a cookie alone authenticates
 * nothing, so a cross-site page that makes the browser send it gets 401 as if it were absent.
 */
export function sessionCredential(header: HeaderReader, config: Pick<Config, 'publicBaseUrl' | 'production'>): SessionCredential | undefined {
  const bearer = bearerToken(header('authorization'));
  if (bearer) return { token: bearer, via: 'bearer' };
  if (!isConsoleRequest(header, config)) return undefined;
  const token = parseCookie(header('cookie') ?? '')[sessionCookieName(config)];
  return token ? { token, via: 'cookie' } : undefined;
}

/**
 * `X-Consent-Console: 1` and an `Origin` that is the service's own: the origin of PUBLIC_BASE_URL,
 * or the request's own `Host` (https only in production). A browser always sends the real Host
 * and Origin, so a page elsewhere cannot pass. Browsers omit Origin on same-origin GET and HEAD
 * (Fetch standard), so there `Sec-Fetch-Site: same-origin` stands in for it: a header only the
 * browser sets, which no page can forge. With neither, the request does not pass.
 */
export function isConsoleRequest(header: HeaderReader, config: Pick<Config, 'publicBaseUrl' | 'production'>): boolean {
  if (header(CONSOLE_HEADER) !== '1') return false;
  const origin = header('origin');
  if (!origin) return header('sec-fetch-site') === 'same-origin';
  if (origin === new URL(config.publicBaseUrl).origin) return true;
  const host = header('host');
  if (!host) return false;
  const schemes = config.production ? ['https'] : ['http', 'https'];
  return schemes.some((scheme) => origin === `${scheme}://${host.toLowerCase()}`);
}

/** The Set-Cookie value of a console login: lives as long as the session it carries. */
export function sessionCookie(token: string, config: Pick<Config, 'production'>): string {
  return stringifySetCookie(sessionCookieName(config), token, {
    ...COOKIE_ATTRIBUTES,
    secure: config.production,
    maxAge: Math.floor(SESSION_LIFETIME_MS / 1000),
  });
}

/** The Set-Cookie value that makes the browser forget the session cookie. */
export function clearedSessionCookie(config: Pick<Config, 'production'>): string {
  return stringifySetCookie(sessionCookieName(config), '', { ...COOKIE_ATTRIBUTES, secure: config.production, maxAge: 0 });
}

// Never a Domain: the cookie stays with this host (and `__Host-` requires it).
const COOKIE_ATTRIBUTES = { httpOnly: true, sameSite: 'strict', path: '/' } as const;
