// The requests collector: every request to another site (host, URL without its query, resource type, the
// script or document behind it, whether the decision was made, the EasyPrivacy rule that names it), once per
// URL, type and side of the decision on each page of the visit, with the load that sent it.
import type { Request } from 'playwright-core';
import type { GuardProxy, ProxiedConnection } from './guard-proxy.js';
import { siteOf } from './catalogue.js';
import { VISIT_CAPS, withoutQuery, type Collector, type VisitSession } from './visit-session.js';
import type { ObservedRequest } from './visit.js';

/** The frame that made a request (its document's URL), or for a redirect the request it came from. */
function initiatorOf(request: Request): string | null {
  const previous = request.redirectedFrom();
  if (previous) return withoutQuery(previous.url());
  try {
    const frameUrl = request.frame().url();
    return frameUrl ? withoutQuery(frameUrl) : null;
  } catch {
    return null; // a worker's request has no frame
  }
}

/** The URL of the main-frame document that sent a request (null for frames' and workers' requests). */
function mainFrameUrl(request: Request): string | null {
  try {
    const frame = request.frame();
    return frame.parentFrame() === null && frame.url() && frame.url() !== 'about:blank' ? frame.url() : null;
  } catch {
    return null;
  }
}

/** Adds a request to the visit's list within its cap (the WebSockets collector adds sockets to other sites here too). */
export function addRequest(session: VisitSession, entry: ObservedRequest): void {
  if (session.result.requests.length >= VISIT_CAPS.requests) session.result.cut.requests++;
  else session.result.requests.push(entry);
}

export function collectRequests(session: VisitSession, proxy: Pick<GuardProxy, 'connections'>): Collector {
  const { context, cdp, options } = session;
  const seen = new Set<string>();
  // Every request the browser showed, same-site ones included, by URL without query and by host: what the proxy
  // let through beyond these escaped the browser's events.
  const shown = new Map<string, number>();
  const hostsShown = new Set<string>();
  const requested: { entry: ObservedRequest; rawUrl: string }[] = [];
  // The script behind each request, from Chromium's own network events (Playwright does not expose it).
  const scriptInitiators = new Map<string, string>();
  context.on('request', (request: Request) => {
    const requestUrl = request.url();
    let parsed: URL;
    try {
      parsed = new URL(requestUrl);
    } catch {
      return;
    }
    const bare = withoutQuery(requestUrl, VISIT_CAPS.urlChars);
    shown.set(bare, (shown.get(bare) ?? 0) + 1);
    hostsShown.add(parsed.hostname);
    if (!/^(https?|wss?):$/.test(parsed.protocol) || siteOf(parsed.hostname) === session.pageSite) return;
    const { afterDecision } = session.now();
    const { load, pageUrl } = session.loadOfDocument(mainFrameUrl(request) ?? session.now().pageUrl);
    const entry: ObservedRequest = { host: parsed.hostname, url: withoutQuery(requestUrl, VISIT_CAPS.urlChars), resourceType: request.resourceType(), initiator: initiatorOf(request), afterDecision, load, tracker: null };
    // Once per URL and type on each side of the decision, on each page of the visit (the next page's are its own).
    const key = `${entry.url} ${entry.resourceType} ${entry.afterDecision} ${pageUrl}`;
    if (seen.has(key)) return;
    entry.tracker = options.trackers?.match(requestUrl, session.url, entry.resourceType) ?? null;
    if (session.result.requests.length >= VISIT_CAPS.requests) return void session.result.cut.requests++;
    seen.add(key);
    session.result.requests.push(entry);
    requested.push({ entry, rawUrl: requestUrl });
  });
  cdp.on('Network.requestWillBeSent', (event) => {
    // The script on top of the (async) stack, else the parser's document; a CORS preflight names itself.
    let stack = event.initiator.stack;
    while (stack && !stack.callFrames.some((frame) => frame.url)) stack = stack.parent;
    const script = stack?.callFrames.find((frame) => frame.url)?.url ?? (event.initiator.type === 'preflight' ? undefined : event.initiator.url);
    if (script && !scriptInitiators.has(event.request.url)) scriptInitiators.set(event.request.url, withoutQuery(script, VISIT_CAPS.urlChars));
  });
  /** Requests to other sites the proxy let through and the browser never showed: sent by a page being left. */
  const addEscaped = () => {
    // WebSockets are tunnelled too, and the browser shows them as sockets, not requests.
    for (const socket of session.result.websockets?.sockets ?? []) hostsShown.add(socket.host);
    const proxied = new Map<string, ProxiedConnection[]>();
    for (const connection of proxy.connections) {
      if (siteOf(connection.host) === session.pageSite) continue;
      if (connection.kind === 'tunnel' && hostsShown.has(connection.host)) continue;
      const same = proxied.get(connection.url);
      if (same) same.push(connection);
      else proxied.set(connection.url, [connection]);
    }
    for (const [url, connections] of proxied) {
      // Past as many as the browser showed: a page's last requests to a URL are the ones sent on leaving.
      for (const connection of connections.slice(shown.get(url) ?? 0)) {
        const load = session.loadLeftAt(connection.at);
        const afterDecision = session.decidedAt !== null && connection.at >= session.decidedAt;
        const key = `${url} leaving ${afterDecision} ${load}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const tracker = connection.kind === 'http' ? (options.trackers?.match(url, session.url, 'ping') ?? null) : null;
        addRequest(session, { host: connection.host, url, resourceType: 'ping', initiator: null, afterDecision, load, tracker, leaving: true });
      }
    }
  };
  return {
    async finish() {
      for (const { entry, rawUrl } of requested) entry.initiator = scriptInitiators.get(rawUrl) ?? entry.initiator;
      addEscaped();
    },
  };
}
