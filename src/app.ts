import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import { errorResponse, rateLimitHeaders } from '../rest/errors.js';
import { RestHandler } from '../rest/handler.js';
import { buildOpenApi, openApiRoute } from '../rest/openapi.js';
import type { RestResponse, RouteDef } from '../rest/route.js';
import { Router } from '../rest/router.js';
import { outageMonitor, UNAVAILABLE_MESSAGE } from './db/unavailable.js';
import { AppError, type RateLimitInfo } from './errors.js';
import { createGraphqlServer } from './graphql.js';
import { graphqlRateRules } from './graphql-limits.js';
import { clientAddress } from './http/client-address.js';
import { BodyTooLarge, OPERATOR_BODY_LIMIT, readBody } from './http/body.js';
import { COMPRESS_MIN_BYTES, compressNow, pickEncoding, varyWithEncoding } from './http/compression.js';
import { headerValue } from './http/headers.js';
import { InFlight } from './http/in-flight.js';
import { requestIdFrom } from './http/request-id.js';
import { requestLineWriter } from './logger.js';
import { bearerMatches, metricsOf, UNMATCHED_ROUTE, type RouteTiming } from './metrics/metrics.js';
import type { Services } from './services.js';
import { isUnstorableTextError, UNSTORABLE_TEXT_MESSAGE } from './storable-text.js';

const SDK_PREFIX = '/api/sdk/';
const GRAPHQL_LIMITED_DELAY_MS = 1000;
const SDK_CORS_HEADERS = 'Authorization, Content-Type, If-None-Match, X-Consent-Installation, Idempotency-Key';
const SDK_EXPOSED_HEADERS = 'ETag, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, x-request-id';

/**
 * The fetch-less front door: one node:http listener that hands /graphql to
 * yoga and everything else to the REST route table, with request ids, CORS for
 * the SDK and one JSON log line per request.
 */
export function createApp(services: Services, schema: GraphQLSchema, documented: RouteDef[]) {
  // The document is a route like the others (so a wrong method gets 405 with Allow), and describes itself too.
  let openApi = '';
  const routes = [...documented, openApiRoute(() => openApi)];
  const { config } = services;
  openApi = JSON.stringify(buildOpenApi(routes, { version: config.version, publicBaseUrl: config.publicBaseUrlSet ? config.publicBaseUrl : undefined }));
  const rest = new RestHandler(services, schema, routes);
  const router = new Router(routes);
  const yoga = createGraphqlServer(services, schema);
  const inFlight = new InFlight();

  // Metrics (when on): one timing object per route and method, bound here, so a request bumps numbers and looks up no labels.
  const metrics = metricsOf(services);
  const timingOf = new Map(metrics ? routes.map((route) => [route, metrics.timing(route.path, route.method)]) : []);
  const fromMemory = memoryAnswers(routes, timingOf);
  const fromMemoryWithQuery = memoryAnswers(routes.filter((route) => route.fromMemoryReadsQuery), timingOf);
  const logsRequests = services.logger.isLevelEnabled('info');
  const writeRequestLine = requestLineWriter(services.logger);
  const timed = logsRequests || metrics !== undefined;

  const listener: RequestListener = (req, res) => {
    inFlight.start();
    // performance.now(): a double, where hrtime.bigint() allocated a BigInt twice per request.
    const started = timed ? performance.now() : 0;
    const requestId = requestIdFrom(req.headers['x-request-id']);
    const memory = req.method === 'GET' ? memoryAnswerFor(req.url!) : undefined;
    const cached = memory && tryFromMemory(memory, req, requestId);
    if (cached) {
      cached.then(
        (response) => answerFromMemory(req, res, requestId, started, response, memory.timing),
        (error: unknown) => answerFromMemory(req, res, requestId, started, unexpected(error, requestId), memory.timing),
      );
      return;
    }
    res.setHeader('x-request-id', requestId);
    // A request is over when its work has settled and its response has closed ('close' fires for
    // every response, after a streamed export's last byte, or when the client goes away first).
    let unfinished = 2;
    const finished = () => --unfinished === 0 && inFlight.end();
    const seen: { timing?: RouteTiming } = {};
    res.once('close', () => {
      if (logsRequests) logRequest(req, res, requestId, started);
      if (metrics) (seen.timing ?? metrics.timing(UNMATCHED_ROUTE, req.method ?? 'GET')).observe(res.statusCode, started);
      finished();
    });
    handle(req, res, requestId, seen)
      .catch((error) => {
        const response = unexpected(error, requestId);
        if (!res.headersSent) send(req, res, response);
        else res.destroy();
      })
      .finally(finished);
  };

  /** An error nothing else handled: 503 when the database is unavailable (logged once per outage), else 500, logged. */
  function unexpected(error: unknown, requestId: string): RestResponse {
    if (outageMonitor(services).report(error)) return errorResponse('service_unavailable', UNAVAILABLE_MESSAGE);
    // The database refused text it cannot hold (a safety net behind rest/handler.ts): the caller's 400, never a 500.
    if (isUnstorableTextError(error)) return errorResponse('validation_failed', 'Validation failed', { details: [{ path: [], message: UNSTORABLE_TEXT_MESSAGE }] });
    services.logger.error({ reqId: requestId, err: error }, 'unhandled error');
    return errorResponse('internal', 'Internal server error');
  }

  /** The route with a from-memory answer for this URL, if any. */
  function memoryAnswerFor(url: string): MemoryAnswer | undefined {
    const exact = fromMemory.get(url);
    if (exact) return exact;
    const query = url.indexOf('?');
    return query > 0 ? fromMemoryWithQuery.get(url.slice(0, query)) : undefined;
  }

  /** A from-memory answer; a synchronous throw falls back to the full path. */
  function tryFromMemory(memory: MemoryAnswer, req: IncomingMessage, requestId: string): Promise<RestResponse> | undefined {
    try {
      return memory.answer(req, services);
    } catch (error) {
      services.logger.error({ reqId: requestId, err: error }, 'answer from memory failed');
      return undefined;
    }
  }

  /** The hot path's answer: written in one go with the SDK's CORS headers, and logged at once. */
  function answerFromMemory(req: IncomingMessage, res: ServerResponse, requestId: string, started: number, response: RestResponse, timing?: RouteTiming): void {
    try {
      // An answer that varies on more than Origin names Origin in its own Vary.
      send(req, res, response, true, sdkCorsHeaders(req.headers.origin, ['x-request-id', requestId], response.headers?.Vary === undefined));
    } catch (error) {
      services.logger.error({ reqId: requestId, err: error }, 'unhandled error');
      res.destroy();
    } finally {
      // One small buffer, written at once: the request is over (aborted if the client had gone).
      if (logsRequests) logRequest(req, res, requestId, started, res.destroyed);
      timing?.observe(res.statusCode, started);
      inFlight.end();
    }
  }

  function logRequest(req: IncomingMessage, res: ServerResponse, requestId: string, started: number, aborted = !res.writableFinished): void {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    writeRequestLine({
      reqId: requestId,
      method: req.method ?? 'GET',
      path: query < 0 ? url : url.slice(0, query),
      status: res.statusCode,
      durationMs: Math.round((performance.now() - started) * 1e3) / 1e3,
      aborted,
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string, seen: { timing?: RouteTiming }): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const ip = clientAddress(req, services.config.trustProxy);
    const sdk = url.pathname.startsWith(SDK_PREFIX);
    if (sdk) {
      const cors = sdkCorsHeaders(req.headers.origin);
      for (let i = 0; i < cors.length; i += 2) res.setHeader(cors[i]!, cors[i + 1]!);
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', SDK_CORS_HEADERS);
        res.setHeader('Access-Control-Max-Age', '86400');
        res.writeHead(204).end();
        return;
      }
    }

    if (url.pathname === '/graphql') {
      if (metrics) seen.timing = metrics.timing('/graphql', req.method ?? 'GET');
      // Before the body is read or parsed: a refused flood must cost the attacker's budget, not the CPU.
      const limited = await graphqlRateLimit(ip);
      if (limited) return send(req, res, limited);
      if (req.method === 'POST') {
        // The operator body limit holds here too, chunked bodies included: read it ourselves
        // and hand yoga the text (whatwg-node uses a body already read from the request).
        try {
          const body = await readBody(req, OPERATOR_BODY_LIMIT);
          (req as IncomingMessage & { body?: string }).body = body.toString('utf8');
        } catch (error) {
          if (error instanceof BodyTooLarge) return send(req, res, errorResponse('payload_too_large', 'Request body too large'));
          throw error;
        }
      }
      await yoga(req, res, { requestId, ip });
      return;
    }

    // Only with the token configured and presented; otherwise the ordinary 404 (never open, never hinted at).
    if (url.pathname === '/metrics' && metrics && services.config.metricsToken && bearerMatches(req.headers.authorization, services.config.metricsToken)) {
      const scraped = await metrics.scrape();
      return send(req, res, { status: 200, body: scraped.body, headers: { 'Content-Type': scraped.contentType, 'Cache-Control': 'no-store' } });
    }

    const match = router.match(req.method ?? 'GET', url.pathname);
    if (match.kind === 'not_found') return send(req, res, errorResponse('not_found', 'Not found'), sdk);
    if (match.kind === 'method_not_allowed') {
      const response = errorResponse('method_not_allowed', 'Method not allowed');
      response.headers = { Allow: match.allow.join(', ') };
      return send(req, res, response, sdk);
    }
    seen.timing = timingOf.get(match.route);
    const response = await rest.run(match.route, match.params, { req, res, url, requestId, ip });
    send(req, res, response, sdk);
  }

  const graphqlRules = graphqlRateRules(services.config);
  /** A GraphQL-shaped 429 (code rate_limited, Retry-After) once the address has used its requests or refusals. */
  async function graphqlRateLimit(ip: string): Promise<RestResponse | null> {
    try {
      await services.rateLimits.check(graphqlRules.refused, ip);
      await services.rateLimits.consume(graphqlRules.requests, ip);
      return null;
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'rate_limited') throw error;
      const rate = error.extensions.rateLimit as RateLimitInfo;
      // The answer waits a second: a client that floods without reading Retry-After is paced by its own
      // connections instead of taking the CPU from everyone else (a timer costs the server nothing).
      await new Promise((resolve) => setTimeout(resolve, GRAPHQL_LIMITED_DELAY_MS));
      return { status: 429, body: { errors: [{ message: error.message, extensions: { code: error.code } }] }, headers: rateLimitHeaders(rate) };
    }
  }

  return {
    listener,
    rest,
    /** Resolves when every request that has started has been answered. */
    drain: () => inFlight.drained(),
  };
}

interface MemoryAnswer {
  answer: NonNullable<RouteDef['fromMemory']>;
  /** The route's metrics, when they are on. */
  timing: RouteTiming | undefined;
}

/**
 * GET routes with a from-memory answer, by exact URL (a query string takes the normal path). The
 * answer is written with the SDK's CORS headers and error shape, so only static SDK paths qualify.
 */
function memoryAnswers(routes: RouteDef[], timingOf: Map<RouteDef, RouteTiming>): Map<string, MemoryAnswer> {
  const answers = new Map<string, MemoryAnswer>();
  for (const route of routes.filter((r) => r.fromMemory)) {
    if (route.method !== 'GET' || !route.path.startsWith(SDK_PREFIX) || route.path.includes(':')) {
      throw new Error(`${route.method} ${route.path}: fromMemory is only for static GET routes under ${SDK_PREFIX}`);
    }
    answers.set(route.path, { answer: route.fromMemory!, timing: timingOf.get(route) });
  }
  return answers;
}

/** The SDK is called from any site: echo the origin (or *). Preflights are answered in `handle`. */
function sdkCorsHeaders(origin: string | undefined, list: string[] = [], vary = true): string[] {
  list.push('Access-Control-Allow-Origin', origin ?? '*', 'Access-Control-Expose-Headers', SDK_EXPOSED_HEADERS);
  if (vary) list.push('Vary', 'Origin');
  return list;
}

/**
 * Writes a route's answer. Headers go to writeHead as one flat list: measurably cheaper for
 * node:http than an object built per request (bench/README.md, SDK config).
 */
function send(req: IncomingMessage, res: ServerResponse, response: RestResponse, sdk = false, first: string[] = []): void {
  const headers = first;
  for (const name in response.headers) headers.push(name, response.headers[name]!);
  if (response.stream) {
    res.writeHead(response.status, headers);
    if (req.method === 'HEAD') {
      // Nothing has been read yet: a HEAD export costs no database scan.
      response.stream.destroy();
      res.end();
      return;
    }
    response.stream.pipe(res);
    response.stream.on('error', () => res.destroy());
    return;
  }
  let payload: string | Buffer | undefined;
  if (typeof response.body === 'string' || Buffer.isBuffer(response.body)) {
    payload = response.body;
  } else if (response.body !== undefined) {
    let body = response.body as Record<string, unknown>;
    // SDK error bodies are exactly {error, code}.
    if (sdk && response.status >= 400 && body && 'code' in body) body = { error: body.error, code: body.code };
    payload = JSON.stringify(body);
    if (!response.headers?.['Content-Type']) headers.push('Content-Type', 'application/json; charset=utf-8');
  }
  if (payload !== undefined && compressible(response, payload)) payload = compressed(req, res, headers, payload);
  if (payload !== undefined) headers.push('Content-Length', String(Buffer.byteLength(payload)));
  res.writeHead(response.status, headers);
  res.end(req.method === 'HEAD' ? undefined : payload);
}

/**
 * JSON over 1 KB that no route has encoded itself (the SDK config's codings are made once per version in
 * rest/routes/sdk.ts). Streamed exports go out as they are (they are CSV or NDJSON, read once, and often
 * compressed by whatever downloads them); a 204 or 304 has no body. /graphql answers are yoga's own.
 */
function compressible(response: RestResponse, payload: string | Buffer): boolean {
  if (response.status === 204 || response.status === 304 || payload.length <= COMPRESS_MIN_BYTES) return false;
  const type = response.headers?.['Content-Type'];
  return (type === undefined || type.startsWith('application/json')) && response.headers?.['Content-Encoding'] === undefined;
}

/** The payload in the client's preferred coding (a fast level), with `Vary: Accept-Encoding` either way. */
function compressed(req: IncomingMessage, res: ServerResponse, headers: string[], payload: string | Buffer): string | Buffer {
  let vary = -1;
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() === 'vary') vary = i + 1;
  if (vary > 0) headers[vary] = varyWithEncoding(headers[vary]);
  // A Vary set earlier on the response (the SDK's CORS) is replaced by this one: keep what it names.
  else headers.push('Vary', varyWithEncoding(res.getHeader('vary') as string | undefined));
  const encoding = pickEncoding(headerValue(req.headers['accept-encoding']));
  if (encoding === 'identity') return payload;
  headers.push('Content-Encoding', encoding);
  return compressNow(payload, encoding);
}
