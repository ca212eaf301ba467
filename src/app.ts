import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import { errorResponse } from '../rest/errors.js';
import { RestHandler } from '../rest/handler.js';
import { buildOpenApi } from '../rest/openapi.js';
import type { RestResponse, RouteDef } from '../rest/route.js';
import { Router } from '../rest/router.js';
import { createGraphqlServer } from './graphql.js';
import { BodyTooLarge, readBody } from './http/body.js';
import { requestIdFrom } from './http/request-id.js';
import type { Services } from './services.js';

const SDK_PREFIX = '/api/sdk/';
const OPERATOR_BODY_LIMIT = 64 * 1024;
const SDK_CORS_HEADERS = 'Authorization, Content-Type, If-None-Match';

/**
 * The fetch-less front door: one node:http listener that hands /graphql to
 * yoga and everything else to the REST route table, with request ids, CORS for
 * the SDK and one JSON log line per request.
 */
export function createApp(services: Services, schema: GraphQLSchema, routes: RouteDef[]) {
  const rest = new RestHandler(services, schema, routes);
  const router = new Router(routes);
  const yoga = createGraphqlServer(services, schema);
  const openApi = JSON.stringify(buildOpenApi(routes, services.config.version));
  const inFlight = new Set<Promise<void>>();

  const listener: RequestListener = (req, res) => {
    const started = process.hrtime.bigint();
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('x-request-id', requestId);
    // 'close' fires for every request, also when the client goes away before the answer.
    res.once('close', () => {
      services.logger.info(
        {
          reqId: requestId,
          method: req.method,
          path: (req.url ?? '').split('?')[0],
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          ...(!res.writableFinished && { aborted: true }),
        },
        'request',
      );
    });
    const work = handle(req, res, requestId).catch((error) => {
      services.logger.error({ reqId: requestId, err: error }, 'unhandled error');
      if (!res.headersSent) send(req, res, errorResponse('internal', 'Internal server error'));
      else res.destroy();
    });
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const ip = clientIp(req, services.config.trustProxy);
    const sdk = url.pathname.startsWith(SDK_PREFIX);
    if (sdk) {
      // The SDK is called from any site: echo the origin (or *) and answer preflights here.
      res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Expose-Headers', 'ETag, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, x-request-id');
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', SDK_CORS_HEADERS);
        res.setHeader('Access-Control-Max-Age', '86400');
        res.writeHead(204).end();
        return;
      }
    }

    if (url.pathname === '/graphql') {
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
    if (url.pathname === '/api/openapi.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      return send(req, res, { status: 200, body: openApi, headers: { 'Content-Type': 'application/json' } });
    }

    const match = router.match(req.method ?? 'GET', url.pathname);
    if (match.kind === 'not_found') return send(req, res, errorResponse('not_found', 'Not found'), sdk);
    if (match.kind === 'method_not_allowed') {
      const response = errorResponse('method_not_allowed', 'Method not allowed');
      response.headers = { Allow: match.allow.join(', ') };
      return send(req, res, response, sdk);
    }
    const response = await rest.run(match.route, match.params, { req, res, url, requestId, ip });
    send(req, res, response, sdk);
  }

  return {
    listener,
    rest,
    /** Resolves when every request that has started has been answered. */
    drain: () => Promise.allSettled([...inFlight]).then(() => undefined),
  };
}

function send(req: IncomingMessage, res: ServerResponse, response: RestResponse, sdk = false): void {
  const headers: Record<string, string> = { ...response.headers };
  let payload: string | Buffer | undefined;
  if (response.stream) {
    res.writeHead(response.status, headers);
    response.stream.pipe(res);
    response.stream.on('error', () => res.destroy());
    return;
  }
  if (typeof response.body === 'string' || Buffer.isBuffer(response.body)) {
    payload = response.body;
  } else if (response.body !== undefined) {
    let body = response.body as Record<string, unknown>;
    // SDK error bodies are exactly {error, code}.
    if (sdk && response.status >= 400 && body && 'code' in body) body = { error: body.error, code: body.code };
    payload = JSON.stringify(body);
    headers['Content-Type'] ??= 'application/json; charset=utf-8';
  }
  if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
  res.writeHead(response.status, headers);
  res.end(req.method === 'HEAD' ? undefined : payload);
}

function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return req.socket.remoteAddress ?? 'unknown';
}
