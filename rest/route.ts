import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { Context } from '../src/context.js';
import type { Services } from '../src/services.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RestRequest {
  params: Record<string, string>;
  query: Record<string, string>;
  /** Parsed JSON body (undefined when none was sent). */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body bytes, for signature checks. */
  rawBody: Buffer;
  context: Context;
  services: Services;
}

export interface RestResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Streams (exports) are piped as they come. */
  stream?: Readable;
}

/**
 * One REST route: which GraphQL operation it runs, how the request becomes
 * variables and how the result becomes a response. Domain logic stays in the
 * GraphQL layer, so REST and /graphql behave identically.
 */
export interface RouteDef<Data = any> {
  method: Method;
  path: string;
  summary: string;
  /** Who may call it: an operator session, anyone, or a browser with a publishable key. */
  auth: 'session' | 'public' | 'publishableKey';
  /** Name of an operation in rest/operations/*.graphql. */
  operation?: string;
  variables?: (req: RestRequest) => Record<string, unknown>;
  /** Maps the operation's data to the response; default: 200 with `data`. */
  respond?: (data: Data, req: RestRequest) => RestResponse | Promise<RestResponse>;
  /**
   * A GET answered from in-process caches before any context is built, or undefined to run the
   * route normally. Only for hot paths whose domain function has a from-memory form.
   */
  fromMemory?: (req: IncomingMessage, services: Services) => Promise<RestResponse> | undefined;
  /** The from-memory answer reads its own query string: it is also tried for this path with one. */
  fromMemoryReadsQuery?: boolean;
  /** A route served without GraphQL (probes, documents): use sparingly. */
  handle?: (req: RestRequest) => RestResponse | Promise<RestResponse>;
  /**
   * OpenAPI operationId of a route without a GraphQL operation (those use the operation's name, which is
   * stable); rest/openapi.ts derives one from the method and path when neither is given.
   */
  operationId?: string;
  /** OpenAPI tag: set per route group file in rest/routes/index.ts. */
  tag?: string;
  /** Documents the JSON body for OpenAPI; the domain layer validates it. */
  requestBody?: z.ZodType;
  /**
   * Documents a body the route reads itself from `rawBody` (a signed provider callback, a form post): OpenAPI
   * only, the handler does not parse it. Media type → schema.
   */
  rawRequestBody?: { description: string; required: boolean; content: Record<string, z.ZodType> };
  /** Documents the query string for OpenAPI. */
  queryParams?: z.ZodObject;
  /** Documents the request headers the route reads (Authorization is the security scheme's): name → schema. */
  requestHeaders?: z.ZodObject;
  responses: Record<number, ResponseDoc>;
  /** Body limit in bytes (default 64 KiB). */
  bodyLimit?: number;
  /**
   * An SDK route that also reads the operator session (the bearer, or the console's cookie on a console
   * request) into the context, for an operator-only option (the v2 config's `jurisdiction` override).
   */
  consoleSession?: boolean;
  /** Requests without a JSON body are fine (e.g. logout, publish). */
  bodyOptional?: boolean;
  /**
   * The route defines its own answer for a parameter that names nothing (an unknown key, locale, location or
   * checkout): path and query text the database cannot hold is passed on as such a value (its unstorable
   * characters replaced by U+FFFD, which names nothing either) instead of the guard's JSON 404 (path) or 400
   * (query), so `?key=%00` is answered as an unknown key and an HTML page's bad id gets the page's own 404.
   */
  unstorableParamsNameNothing?: boolean;
}

/**
 * One documented answer. `schema` with `contentType` (default application/json) for one media type, or
 * `content` (media type → schema) when the route answers several (evidence: JSON, HTML or CSV).
 */
export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  content?: Record<string, z.ZodType>;
  /** Response headers worth documenting: name → description. */
  headers?: Record<string, string>;
}

export const route = <Data = any>(def: RouteDef<Data>) => def;
