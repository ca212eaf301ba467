// The transport of each scanned origin, as the EDPS Website Evidence Collector checks it (docs/scanner.md
// "Transport: HTTPS redirect, TLS, HSTS"): whether `http://<host>/` redirects to https (the chain of answers,
// and whether an https step falls back to http), and the TLS of the https origin as Node's tls sees it
// (protocol, cipher, certificate, whether the chain is trusted and names the host) with its
// Strict-Transport-Security header.
//
// Every connection goes through the scanner's own guard proxy (guard-proxy.ts), as a CONNECT tunnel for
// plain http too: the proxy resolves the host, checks every address with the scan's AddressPolicy and
// connects to the address it checked, so this check reaches nothing a scanned page could not. Only the
// status line and headers of an answer are read (at most 16 KiB of them), never a body; each step has a
// short timeout, the whole check the scan's deadline, and the proxy cuts past a byte limit per origin.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { isIP, type Socket } from 'node:net';
import * as tls from 'node:tls';
import type { Deadline } from './deadline.js';
import { startGuardProxy, type AddressPolicy, type GuardProxy } from './guard-proxy.js';
import { bareHost } from '../webhooks/address.js';

export const TRANSPORT_LIMITS = {
  /** Distinct origins checked per scan (in the order of the scan's pages); the rest are counted. */
  origins: 5,
  /** Redirects followed from `http://<host>/`. */
  redirects: 5,
  /** One connection and answer (tunnel, TLS handshake, status line and headers). */
  stepTimeoutMs: 5000,
  /** The whole check, all origins at once; never more than what is left of the scan's budget. */
  totalMs: 20_000,
  /** Response headers read per answer (Node's parser refuses more). */
  maxHeaderBytes: 16_384,
  /** Bytes received per origin through the guard proxy (TLS handshakes and headers); past it every connection is cut. */
  maxBytes: 1_048_576,
} as const;

const MAX_URL = 2000;
const MAX_TEXT = 300;
const MAX_NAMES = 20;
const DAY_MS = 86_400_000;

export interface TransportStep {
  url: string;
  /** The HTTP status, null when no answer came (see `error`). */
  status: number | null;
  /** The Location header of a redirect (cut to 2,000 characters). */
  location: string | null;
  error: string | null;
}

export interface HstsPolicy {
  /** The header as sent (cut to 300 characters). */
  header: string;
  /** Seconds; null when the header has no valid max-age. */
  maxAge: number | null;
  includeSubDomains: boolean;
  preload: boolean;
}

export interface CertificateSummary {
  subject: string;
  issuer: string;
  /** `DNS:name` and `IP Address:a.b.c.d` entries, at most 20. */
  subjectAltNames: string[];
  subjectAltNamesCut: number;
  /** Whether the certificate names the host (Node's checkServerIdentity). */
  hostMatches: boolean;
  selfSigned: boolean;
  validFrom: string | null;
  validTo: string | null;
  /** Whole days from the check to validTo (negative once expired). */
  daysLeft: number | null;
  fingerprint256: string;
}

/** Machine-readable problems of the https origin: each one makes a `tls_invalid` finding. */
export type TlsProblem = 'no_tls' | 'untrusted_chain' | 'host_mismatch' | 'expired' | 'not_yet_valid';

export interface TlsCheck {
  /** The https URL checked: the page's own origin when it is https, else the first https step of the redirect, else `https://<host>/`. */
  url: string;
  /** Whether the site uses https here (an https page, or `http://<host>/` redirects to https). */
  used: boolean;
  /** `TLSv1.3`, `TLSv1.2`; null without a handshake. */
  protocol: string | null;
  cipher: { name: string; standardName: string; version: string } | null;
  /** The chain is trusted by Node's root store and names the host. */
  authorized: boolean;
  /** OpenSSL's or Node's reason when not authorized (`DEPTH_ZERO_SELF_SIGNED_CERT`, `CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID`). */
  authorizationError: string | null;
  certificate: CertificateSummary | null;
  /** The answer to `GET <url>` over that connection. */
  status: number | null;
  location: string | null;
  hsts: HstsPolicy | null;
  problems: TlsProblem[];
  error: string | null;
}

export interface OriginTransport {
  origin: string;
  /** The first scanned page of this origin (findings name it). */
  pageUrl: string;
  httpsRedirect: {
    url: string;
    /** Each answer from `url` on, at most `redirects + 1`. */
    chain: TransportStep[];
    /** The chain reaches an https URL and does not leave https again. */
    redirectsToHttps: boolean;
    /** An https step of the chain (or the https origin itself) redirects to plain http. */
    fallsBackToHttp: boolean;
    error: string | null;
  };
  tls: TlsCheck;
}

export interface TransportReport {
  limits: typeof TRANSPORT_LIMITS;
  origins: OriginTransport[];
  /** Distinct origins among the pages beyond `limits.origins`, not checked. */
  originsNotChecked: number;
}

export interface TransportOptions {
  policy: AddressPolicy;
  /** The check's deadline (the scan's budget, at most `totalMs`). */
  deadline: Deadline;
  now?: () => Date;
  /** Tests shorten the step timeout. */
  stepTimeoutMs?: number;
}

const cut = (value: string, max = MAX_TEXT) => (value.length > max ? value.slice(0, max) : value);

/** Checks each distinct origin of the pages (at most TRANSPORT_LIMITS.origins), all at once, within the deadline. */
export async function checkTransport(pageUrls: string[], options: TransportOptions): Promise<TransportReport> {
  const firstPage = new Map<string, string>();
  for (const pageUrl of pageUrls) {
    const url = new URL(pageUrl);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && !firstPage.has(url.origin)) firstPage.set(url.origin, pageUrl);
  }
  const origins = [...firstPage].slice(0, TRANSPORT_LIMITS.origins);
  const checked = await Promise.all(origins.map(([origin, pageUrl]) => checkOrigin(new URL(origin), pageUrl, options)));
  return { limits: TRANSPORT_LIMITS, origins: checked, originsNotChecked: firstPage.size - origins.length };
}

async function checkOrigin(origin: URL, pageUrl: string, options: TransportOptions): Promise<OriginTransport> {
  // A guard of its own per origin: its byte limit is this origin's, a hostile origin cannot spend another's.
  const guard = await startGuardProxy(options.policy, TRANSPORT_LIMITS.maxBytes);
  const step = (url: string) => fetchHead(url, guard, options);
  try {
    const start = origin.protocol === 'http:' ? `${origin.origin}/` : `http://${origin.hostname}/`;
    const chain: StepResult[] = [];
    let url: string | null = start;
    let error: string | null = null;
    while (url) {
      if (chain.length > TRANSPORT_LIMITS.redirects) {
        error = `more than ${TRANSPORT_LIMITS.redirects} redirects`;
        break;
      }
      const answer = await step(url);
      chain.push(answer);
      url = answer.next;
      if (answer.nextError) error = answer.nextError;
    }
    error ??= chain.at(-1)?.step.error ?? null;
    const firstHttps = chain.findIndex((answer) => answer.step.url.startsWith('https:'));
    const fallsBack = chain.some((answer, i) => answer.step.url.startsWith('https:') && chain[i + 1]?.step.url.startsWith('http:'));
    const redirectsToHttps = firstHttps >= 0 && !chain.slice(firstHttps).some((answer) => answer.step.url.startsWith('http:'));

    // The https origin: the page's own, else where the redirect went, else the host on 443.
    const httpsUrl = origin.protocol === 'https:' ? `${origin.origin}/` : firstHttps >= 0 ? chain[firstHttps]!.step.url : `https://${origin.hostname}/`;
    const tlsAnswer = chain.find((answer) => answer.step.url === httpsUrl) ?? (await step(httpsUrl));
    const used = origin.protocol === 'https:' || redirectsToHttps;
    const tlsCheck = tlsOf(httpsUrl, used, tlsAnswer);
    return {
      origin: origin.origin,
      pageUrl,
      httpsRedirect: {
        url: start,
        chain: chain.map((answer) => answer.step),
        redirectsToHttps,
        fallsBackToHttp: fallsBack || (tlsAnswer.step.location !== null && tlsAnswer.next?.startsWith('http:') === true),
        error,
      },
      tls: tlsCheck,
    };
  } finally {
    await guard.close();
  }
}

function tlsOf(url: string, used: boolean, answer: StepResult): TlsCheck {
  const session = answer.tls;
  const problems: TlsProblem[] = [];
  if (!session) {
    if (used) problems.push('no_tls');
  } else {
    const certificate = session.certificate;
    if (!session.authorized && session.authorizationError !== 'ERR_TLS_CERT_ALTNAME_INVALID') problems.push('untrusted_chain');
    if (certificate && !certificate.hostMatches) problems.push('host_mismatch');
    if (certificate?.daysLeft !== null && certificate?.daysLeft !== undefined && certificate.daysLeft < 0) problems.push('expired');
    if (certificate?.validFrom && Date.parse(certificate.validFrom) > answer.checkedAt) problems.push('not_yet_valid');
  }
  return {
    url,
    used,
    protocol: session?.protocol ?? null,
    cipher: session?.cipher ?? null,
    authorized: session?.authorized ?? false,
    authorizationError: session?.authorizationError ?? null,
    certificate: session?.certificate ?? null,
    status: answer.step.status,
    location: answer.step.location,
    hsts: session ? answer.hsts : null,
    problems,
    error: answer.step.error,
  };
}

interface TlsSession {
  protocol: string | null;
  cipher: TlsCheck['cipher'];
  authorized: boolean;
  authorizationError: string | null;
  certificate: CertificateSummary | null;
}

interface StepResult {
  step: TransportStep;
  /** The absolute URL the redirect leads to (http or https), null at the end of the chain. */
  next: string | null;
  /** Why the chain stops here although the answer was a redirect. */
  nextError: string | null;
  tls: TlsSession | null;
  hsts: HstsPolicy | null;
  checkedAt: number;
}

/**
 * `GET url` through the guard proxy: a CONNECT tunnel to host:port (the proxy checks the address), TLS over
 * it for https, then the request; the answer's status line and headers only. Never throws: what went wrong
 * is the step's error.
 */
async function fetchHead(url: string, guard: GuardProxy, options: TransportOptions): Promise<StepResult> {
  const now = (options.now ?? (() => new Date()))().getTime();
  const target = new URL(url);
  const https = target.protocol === 'https:';
  const port = Number(target.port || (https ? 443 : 80));
  const result: StepResult = { step: { url: cut(url, MAX_URL), status: null, location: null, error: null }, next: null, nextError: null, tls: null, hsts: null, checkedAt: now };
  const ms = Math.min(options.stepTimeoutMs ?? TRANSPORT_LIMITS.stepTimeoutMs, options.deadline.passed ? 0 : options.deadline.left());
  if (options.deadline.passed) return { ...result, step: { ...result.step, error: "not checked: the scan's time for it was spent" } };

  const open: { destroy(): unknown }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${(ms / 1000).toFixed(1)} s`)), ms)));
  try {
    await Promise.race([
      timedOut,
      (async () => {
        const tunnel = await openTunnel(guard, `${target.hostname}:${port}`, open);
        let socket: Socket = tunnel;
        if (https) {
          const secure = await handshake(tunnel, bareHost(target.hostname), open, now);
          socket = secure.socket;
          result.tls = secure.session;
        }
        const answer = await get(socket, target, open);
        result.step.status = answer.statusCode ?? null;
        const location = answer.headers.location;
        if (answer.statusCode && answer.statusCode >= 300 && answer.statusCode < 400 && location) {
          result.step.location = cut(location, MAX_URL);
          try {
            const next = new URL(location, url);
            if (next.protocol === 'http:' || next.protocol === 'https:') result.next = next.href.split('#')[0]!;
            else result.nextError = `redirect to the scheme ${cut(next.protocol, 20)}`;
          } catch {
            result.nextError = 'redirect to an invalid URL';
          }
        }
        const hsts = answer.headers['strict-transport-security'];
        if (https && typeof hsts === 'string') result.hsts = parseHsts(hsts);
      })(),
    ]);
  } catch (error) {
    result.step.error = describe(error, guard, target, port);
  } finally {
    clearTimeout(timer);
    for (const handle of open) handle.destroy();
  }
  return result;
}

function openTunnel(guard: GuardProxy, authority: string, open: { destroy(): unknown }[]): Promise<Socket> {
  const proxy = new URL(guard.url);
  return new Promise((resolve, reject) => {
    const connect: ClientRequest = httpRequest({ host: proxy.hostname, port: Number(proxy.port), method: 'CONNECT', path: authority, headers: { host: authority } });
    open.push(connect);
    connect.on('connect', (answer: IncomingMessage, socket: Socket) => {
      open.push(socket);
      socket.on('error', () => socket.destroy()); // the TLS socket or the request over it reports the failure
      if (answer.statusCode === 200) resolve(socket);
      else reject(new RefusedByGuard());
    });
    // The proxy closes the tunnel it could not open (the upstream refused, reset or never answered): no status.
    connect.on('error', () => reject(new Error('could not connect (refused, or closed before the connection was made)')));
    connect.end();
  });
}

class RefusedByGuard extends Error {}

function handshake(tunnel: Socket, host: string, open: { destroy(): unknown }[], now: number): Promise<{ socket: tls.TLSSocket; session: TlsSession }> {
  return new Promise((resolve, reject) => {
    // rejectUnauthorized false: the certificate is observed, not trusted; `authorized` says what Node's
    // root store and the host name check make of it, whatever the scan's browser was told to accept.
    const socket = tls.connect({ socket: tunnel, host, servername: isIP(host) ? undefined : host, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      const peer = socket.getPeerCertificate();
      const cipher = socket.getCipher();
      resolve({
        socket,
        session: {
          protocol: socket.getProtocol(),
          cipher: cipher ? { name: cipher.name, standardName: cipher.standardName, version: cipher.version } : null,
          authorized: socket.authorized,
          authorizationError: socket.authorizationError ? cut(String(socket.authorizationError), 200) : null,
          certificate: peer && Object.keys(peer).length ? summarize(peer, host, now) : null,
        },
      });
    });
    open.push(socket);
    socket.on('error', reject);
  });
}

function get(socket: Socket, target: URL, open: { destroy(): unknown }[]): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      createConnection: () => socket,
      method: 'GET',
      path: `${target.pathname}${target.search}`,
      headers: { Host: target.host, 'User-Agent': 'Mozilla/5.0 (compatible; consent-service site scanner; transport check)', Accept: '*/*', Connection: 'close' },
      maxHeaderSize: TRANSPORT_LIMITS.maxHeaderBytes,
    });
    open.push(request);
    request.on('response', (answer) => {
      open.push(answer);
      answer.on('error', () => {}); // the body is never read: the answer is destroyed once its headers are in
      resolve(answer);
    });
    request.on('error', reject);
    request.end();
  });
}

function describe(error: unknown, guard: GuardProxy, target: URL, port: number): string {
  if (error instanceof RefusedByGuard) {
    // The guard recorded why (the address it refused, or the DNS error).
    const refused = guard.refused.find((entry) => entry.target === `${target.hostname}:${port}`);
    return `refused by the address guard: ${refused?.reason ?? 'not allowed'}`;
  }
  const { code, message } = error as NodeJS.ErrnoException;
  if (code === 'HPE_HEADER_OVERFLOW') return `response headers over ${TRANSPORT_LIMITS.maxHeaderBytes} bytes`;
  if (guard.overLimit) return `cut at the byte limit of ${TRANSPORT_LIMITS.maxBytes} bytes`;
  return cut(code ? `${code}: ${message}` : message || String(error), 200);
}

function summarize(peer: tls.PeerCertificate, host: string, now: number): CertificateSummary {
  const names = (peer.subjectaltname ?? '').split(', ').filter(Boolean);
  const validFrom = dateOf(peer.valid_from);
  const validTo = dateOf(peer.valid_to);
  const subject = distinguishedName(peer.subject);
  const issuer = distinguishedName(peer.issuer);
  return {
    subject,
    issuer,
    subjectAltNames: names.slice(0, MAX_NAMES).map((name) => cut(name, 200)),
    subjectAltNamesCut: Math.max(0, names.length - MAX_NAMES),
    hostMatches: tls.checkServerIdentity(host, peer) === undefined,
    selfSigned: subject === issuer,
    validFrom,
    validTo,
    daysLeft: validTo ? Math.floor((Date.parse(validTo) - now) / DAY_MS) : null,
    fingerprint256: cut(peer.fingerprint256 ?? '', 200),
  };
}

const dateOf = (value: string | undefined) => {
  const time = value ? Date.parse(value) : Number.NaN;
  return Number.isNaN(time) ? null : new Date(time).toISOString();
};

function distinguishedName(name: tls.PeerCertificate['subject'] | undefined): string {
  if (!name) return '';
  return cut(
    Object.entries(name)
      .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : value}`)
      .join(', '),
  );
}

/** RFC 6797: `max-age=<seconds>` (required), `includeSubDomains`, `preload` (not in the RFC; hstspreload.org's). */
export function parseHsts(header: string): HstsPolicy {
  const directives = header.split(';').map((part) => part.trim().toLowerCase());
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d{1,12})"?$/.exec(d)?.[1]).find((value) => value !== undefined);
  return {
    header: cut(header),
    maxAge: maxAge === undefined ? null : Number(maxAge),
    includeSubDomains: directives.includes('includesubdomains'),
    preload: directives.includes('preload'),
  };
}
