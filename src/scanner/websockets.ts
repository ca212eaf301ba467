// The WebSockets a page opens, what the EDPS Website Evidence Collector keeps as websockets-log.json (docs/scanner.md
// "WebSockets"): each socket's URL without its query (the query's keys only: values may be identifiers), host,
// party, when it opened, its frames sent and received (counts and bytes) and a preview of the first few each way.
// A socket to another site is also a request (resourceType `websocket`): findings and the inventory judge it
// through the same path as every other request (catalogue host, EasyPrivacy's `$websocket` rules).
//
// Playwright's `page.on('websocket')` listens on the CDP session of each of the page's frames (cross-site ones too;
// only the page's own sockets are tested); the visit's CDP session adds which script opened a socket of the page's
// own frames.
import type { CDPSession, Page, WebSocket } from 'playwright-core';
import { esc } from '../evidence/html.js';
import { siteOf } from './catalogue.js';
import { addRequest } from './requests.js';
import type { Collector, VisitSession } from './visit-session.js';
import type { TrackerList } from './trackers.js';
import type { LoadPhase, ObservedRequest, VisitResult } from './visit.js';

/**
 * What one visit keeps of its sockets: at most `websockets` sockets (the rest only counted, in `cut.sockets`),
 * the first `websocketPreviewFrames` frames each way with `websocketPreviewChars` characters of text (binary:
 * its byte length only), up to `websocketQueryKeys` query keys; past the previews a frame only adds to counters.
 */
export const WEBSOCKET_CAPS = { websockets: 50, websocketPreviewFrames: 5, websocketPreviewChars: 200, websocketQueryKeys: 20, websocketUrlChars: 2000 };

export interface FramePreview {
  /** Milliseconds after the visit started. */
  atMs: number;
  bytes: number;
  /** A text frame's first characters; null for a binary frame. */
  text: string | null;
}

export interface FrameTally {
  frames: number;
  bytes: number;
  preview: FramePreview[];
}

export interface ObservedWebSocket {
  /** ws: or wss: URL without its query. */
  url: string;
  /** The query's keys (never its values), in order, once each. */
  queryKeys: string[];
  host: string;
  party: 'first' | 'third';
  /** The load it was opened in, milliseconds after the visit started, and whether the decision was made by then. */
  load: LoadPhase;
  openedAtMs: number;
  afterDecision: boolean;
  closedAtMs: number | null;
  /** The script that opened it, where the browser tells (the page's own frames). */
  initiator: string | null;
  /** The EasyPrivacy rule that names it as tracking (sockets to other sites); null when none does. */
  tracker: string | null;
  sent: FrameTally;
  received: FrameTally;
}

export interface VisitWebSockets {
  sockets: ObservedWebSocket[];
  /** Sockets opened beyond the cap: counted, not kept. */
  cut: { sockets: number };
}

export interface WebSocketWatch {
  pageUrl: string;
  pageSite: string;
  trackers?: TrackerList;
  /** The visit's clock: which load is going on, milliseconds since the visit started, whether the decision was made. */
  now(): { load: LoadPhase; atMs: number; afterDecision: boolean };
  /** A socket to another site, as a request (the visit applies its request cap). */
  request(entry: ObservedRequest): void;
}

const split = (raw: string) => {
  try {
    const parsed = new URL(raw);
    const keys = [...new Set(parsed.searchParams.keys())].slice(0, WEBSOCKET_CAPS.websocketQueryKeys).map((key) => key.slice(0, WEBSOCKET_CAPS.websocketPreviewChars));
    return { url: `${parsed.protocol}//${parsed.host}${parsed.pathname}`.slice(0, WEBSOCKET_CAPS.websocketUrlChars), host: parsed.hostname, keys };
  } catch {
    return null;
  }
};

const tally = (): FrameTally => ({ frames: 0, bytes: 0, preview: [] });

/** Starts watching the page's sockets; answers the visit's record, filled in as sockets open and frames pass. */
export function watchWebSockets(page: Page, cdp: CDPSession, watch: WebSocketWatch): VisitWebSockets {
  const record: VisitWebSockets = { sockets: [], cut: { sockets: 0 } };
  const seen = new Set<string>();
  // Which script opened a socket: Chromium tells the visit's session (the page's own frames), not Playwright's object.
  const scripts = new Map<string, string>();
  const waiting = new Map<string, { socket: ObservedWebSocket; entry: ObservedRequest | null }[]>();
  cdp.on('Network.webSocketCreated', (event) => {
    let stack = event.initiator?.stack;
    while (stack && !stack.callFrames.some((frame) => frame.url)) stack = stack.parent;
    const script = stack?.callFrames.find((frame) => frame.url)?.url ?? event.initiator?.url;
    if (!script || scripts.size >= WEBSOCKET_CAPS.websockets) return;
    const initiator = split(script)?.url ?? script.slice(0, WEBSOCKET_CAPS.websocketUrlChars);
    scripts.set(event.url, initiator);
    for (const opened of waiting.get(event.url) ?? []) {
      opened.socket.initiator ??= initiator;
      if (opened.entry) opened.entry.initiator ??= initiator;
    }
    waiting.delete(event.url);
  });
  page.on('websocket', (socket: WebSocket) => {
    const raw = socket.url();
    const parts = split(raw);
    if (!parts) return;
    if (record.sockets.length >= WEBSOCKET_CAPS.websockets) return void record.cut.sockets++;
    const { load, atMs, afterDecision } = watch.now();
    const party = siteOf(parts.host) === watch.pageSite ? 'first' : 'third';
    const tracker = party === 'third' ? (watch.trackers?.match(raw, watch.pageUrl, 'websocket') ?? null) : null;
    const initiator = scripts.get(raw) ?? null;
    const observed: ObservedWebSocket = { url: parts.url, queryKeys: parts.keys, host: parts.host, party, load, openedAtMs: atMs, afterDecision, closedAtMs: null, initiator, tracker, sent: tally(), received: tally() };
    record.sockets.push(observed);
    let entry: ObservedRequest | null = null;
    // Once per URL before and once after the decision, like requests.
    if (party === 'third' && !seen.has(`${parts.url} ${afterDecision}`)) {
      seen.add(`${parts.url} ${afterDecision}`);
      entry = { host: parts.host, url: parts.url, resourceType: 'websocket', initiator, afterDecision, load, tracker };
      watch.request(entry);
    }
    if (!initiator && waiting.size < WEBSOCKET_CAPS.websockets) waiting.set(raw, [...(waiting.get(raw) ?? []), { socket: observed, entry }]);
    const count = (into: FrameTally) => (frame: { payload: string | Buffer }) => {
      const text = typeof frame.payload === 'string' ? frame.payload : null;
      const bytes = text !== null ? Buffer.byteLength(text) : frame.payload.length;
      into.frames++;
      into.bytes += bytes;
      if (into.preview.length < WEBSOCKET_CAPS.websocketPreviewFrames) into.preview.push({ atMs: watch.now().atMs, bytes, text: text === null ? null : text.slice(0, WEBSOCKET_CAPS.websocketPreviewChars) });
    };
    socket.on('framesent', count(observed.sent));
    socket.on('framereceived', count(observed.received));
    socket.on('close', () => (observed.closedAtMs ??= watch.now().atMs));
  });
  return record;
}

/** CSV observation rows (kind `websocket`), in the request rows' columns: page, visit, kind, URL, host, party, …, initiator. */
export function webSocketRows(pageUrl: string, visit: Pick<VisitResult, 'kind' | 'websockets'>): string[][] {
  return (visit.websockets?.sockets ?? []).map((s) => [pageUrl, visit.kind, 'websocket', s.url, s.host, s.party, '', '', '', '', s.initiator ?? '']);
}

const FOLD_OVER = 5;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function previewLines(direction: string, t: FrameTally): string {
  const lines = t.preview.map((f) => `<li><span class="muted">${direction} +${esc(f.atMs)} ms</span> ${f.text === null ? `<span class="muted">binary, ${plural(f.bytes, 'byte')}</span>` : `<code>${esc(f.text)}</code>`}</li>`);
  return lines.join('');
}

/** The HTML report's list of a page's sockets, per visit (nothing for reports made before sockets were recorded). */
export function webSocketsHtml(visits: Pick<VisitResult, 'kind' | 'websockets'>[]): string {
  const items = visits.flatMap((visit) => {
    const record = visit.websockets;
    if (!record || (!record.sockets.length && !record.cut.sockets)) return [];
    const sockets = record.sockets.map((s) => {
      const frames = `sent ${plural(s.sent.frames, 'frame')} (${plural(s.sent.bytes, 'byte')}), received ${plural(s.received.frames, 'frame')} (${plural(s.received.bytes, 'byte')})`;
      const keys = s.queryKeys.length ? ` <span class="muted">query keys: ${s.queryKeys.map((k) => `<code>${esc(k)}</code>`).join(' ')}</span>` : '';
      const when = `${s.afterDecision ? 'after the decision' : 'before any decision'}, ${esc(s.load)} load, +${esc(s.openedAtMs)} ms`;
      const shown = s.sent.preview.length + s.received.preview.length;
      return `<li><span class="url">${esc(s.url)}</span>${keys} <span class="${s.party === 'third' ? 'warn' : 'muted'}">${esc(s.party)} party</span>${s.tracker ? ' <span class="tag analytics">EasyPrivacy</span>' : ''}<br><span class="muted">${when}; ${frames}</span>${
        shown ? `<details><summary>First frames</summary><ul class="visits">${previewLines('sent', s.sent)}${previewLines('received', s.received)}</ul></details>` : ''
      }</li>`;
    });
    const cut = record.cut.sockets ? `<span class="muted">, ${record.cut.sockets} not kept (cap)</span>` : '';
    const list = `<ul class="visits">${sockets.join('')}</ul>`;
    // A page with many sockets folds them, so its visits' lines stay together.
    const shown = sockets.length > FOLD_OVER ? `<details><summary>${plural(sockets.length, 'socket')} listed</summary>${list}</details>` : list;
    return [`<li><b>${esc(visit.kind)}</b>: ${plural(record.sockets.length + record.cut.sockets, 'WebSocket')}${cut}${shown}</li>`];
  });
  return items.length ? `<ul class="visits websockets">${items.join('')}</ul>` : '';
}

/** The WebSockets collector: the page's sockets with their frames; one to another site is also a request. */
export function collectWebSockets(session: VisitSession): Collector {
  session.result.websockets = watchWebSockets(session.page, session.cdp, {
    pageUrl: session.url,
    pageSite: session.pageSite,
    trackers: session.options.trackers,
    now: () => {
      const { load, visitMs, afterDecision } = session.now();
      return { load, atMs: visitMs, afterDecision };
    },
    request: (entry) => addRequest(session, entry),
  });
  return {};
}
