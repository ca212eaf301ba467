import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import type { z } from 'zod';
import { withAuditScope } from '../src/audit/record.js';
import { contextWithViewer, createContext } from '../src/context.js';
import { BodyTooLarge, isJsonContentType, OPERATOR_BODY_LIMIT, readBody } from '../src/http/body.js';
import { bearerToken, headerValue } from '../src/http/headers.js';
import { sessionCredential } from '../src/auth/console-session.js';
import { mayNameOperator } from '../src/auth/sessions.js';
import type { Services } from '../src/services.js';
import { AppError, type ValidationIssue } from '../src/errors.js';
import { isStorableText, storableForm, unstorableText } from '../src/storable-text.js';
import { safeParseOnce } from '../src/validation.js';
import { authenticateSdk } from '../src/sdk/access.js';
import { geoHeaders } from '../src/sdk/location.js';
import { outageMonitor } from '../src/db/unavailable.js';
import { errorResponse, fromGraphQLError } from './errors.js';
import { authorizeRootFields, variableIssues } from './authorize.js';
import { prepareOperations, type PreparedOperation } from './operations.js';
import type { RestRequest, RestResponse, RouteDef } from './route.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  requestId: string;
  ip: string;
}

/** Runs matched REST routes: auth, body, the prepared GraphQL operation, then the response mapping. */
export class RestHandler {
  readonly operations: Map<string, PreparedOperation>;

  constructor(
    private readonly services: Services,
    private readonly schema: GraphQLSchema,
    routes: RouteDef[],
  ) {
    this.operations = prepareOperations(schema);
    for (const route of routes) {
      if (route.operation && !this.operations.has(route.operation)) {
        throw new Error(`${route.method} ${route.path}: unknown operation ${route.operation}`);
      }
    }
  }

  async run(route: RouteDef, params: Record<string, string>, exchange: Exchange): Promise<RestResponse> {
    const sdk = route.auth === 'publishableKey';
    const badBody = sdk ? 'invalid_body' : 'invalid_json';
    const bearer = bearerToken(exchange.req.headers.authorization);
    // SDK routes know only publishable keys: the console's cookie means nothing there (unless the route
    // reads an operator session for itself, see RouteDef.consoleSession).
    const session =
      sdk && !route.consoleSession ? undefined : sessionCredential((name) => headerValue(exchange.req.headers[name]), this.services.config)?.token;
    const requestInfo = {
      requestId: exchange.requestId,
      ip: exchange.ip,
      bearer,
      session,
      origin: headerValue(exchange.req.headers.origin),
      geo: sdk ? geoHeaders(this.services.config.geo, (name) => exchange.req.headers[name]) : undefined,
    };
    // An SDK call presents a publishable key, which never names an operator: its context is made at once.
    const credential = session ?? bearer;
    const context = credential && mayNameOperator(credential) ? await createContext(this.services, requestInfo) : contextWithViewer(this.services, requestInfo, null);
    // Authentication comes before anything about the body (decisions.md: order of checks).
    if (route.auth === 'session' && !context.viewer) return errorResponse('unauthorized', 'Authentication required');
    // Text the database cannot hold (src/storable-text.ts) names nothing that exists: a path parameter is 404.
    for (const name in params) {
      if (isStorableText(params[name]!)) continue;
      if (!route.unstorableParamsNameNothing) return errorResponse('not_found', 'Not found');
      params[name] = storableForm(params[name]!);
    }

    let rawBody: Buffer = Buffer.alloc(0);
    let body: unknown;
    const request: RestRequest = {
      params,
      query: Object.fromEntries(exchange.url.searchParams),
      body,
      headers: exchange.req.headers,
      rawBody,
      context,
      services: this.services,
    };
    // An unreadable body is a 400, but only once the caller has passed what the operation would
    // check first: on SDK routes the key and origin (401/403), on operator routes membership and
    // role (404/403), so a non-member learns nothing from a malformed body.
    const refuse = async (refusal: RestResponse): Promise<RestResponse> => {
      try {
        if (sdk) {
          await authenticateSdk(this.services, context.bearer, context.origin);
        } else if (route.operation) {
          const operation = this.operations.get(route.operation)!;
          // Only the parts that passed: the scopes read ids, never the refused text.
          const variables = route.variables ? route.variables({ ...request, query: storableQuery, body: undefined }) : {};
          const denied = await authorizeRootFields(this.schema, operation.definition, context, variables);
          if (denied) return fromGraphQLError(denied, { exposeInternal: false });
        }
      } catch (error) {
        // A route's own refusal of its query (login's `session`) comes with the same status as the body's.
        if (error instanceof AppError) return fromGraphQLError(error, { exposeInternal: false });
        throw error;
      }
      return refusal;
    };
    const refuseBody = (message: string) => refuse(errorResponse(badBody, message));
    /** Text the database cannot hold, as the route's 400: `details` on operator routes, `{error, code}` on SDK routes. */
    const refuseText = (issue: ValidationIssue) =>
      refuse(sdk ? errorResponse(badBody, `${issue.path.join('.')} ${issue.message}`) : errorResponse('validation_failed', 'Validation failed', { details: [issue] }));

    const storableQuery: Record<string, string> = {};
    let queryIssue: ValidationIssue | undefined;
    for (const [name, value] of Object.entries(request.query)) {
      const issue = unstorableText(value, [name]) ?? unstorableText(name, [name]);
      if (!issue) storableQuery[name] = value;
      // A parameter the route does not take is never read (every route that reads one declares it: OpenAPI), so
      // its text cannot reach the database: dropped, not refused with a 400 the route does not document.
      else if (!route.queryParams || !Object.hasOwn(route.queryParams.shape, name)) delete request.query[name];
      else queryIssue ??= issue;
    }
    if (queryIssue && route.unstorableParamsNameNothing) {
      request.query = Object.fromEntries(Object.entries(request.query).map(([name, value]) => [storableForm(name), storableForm(value)]));
    } else if (queryIssue) return refuseText(queryIssue);
    if (BODY_METHODS.has(exchange.req.method!)) {
      try {
        rawBody = await readBody(exchange.req, route.bodyLimit ?? OPERATOR_BODY_LIMIT);
      } catch (error) {
        if (error instanceof BodyTooLarge) return errorResponse('payload_too_large', 'Request body too large');
        throw error;
      }
      if (rawBody.length > 0 && route.requestBody) {
        if (!isJsonContentType(exchange.req.headers['content-type'])) {
          return refuseBody('Content-Type must be application/json');
        }
        try {
          body = JSON.parse(rawBody.toString('utf8'));
        } catch {
          return refuseBody('Malformed JSON body');
        }
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
          return refuseBody('Request body must be a JSON object');
        }
        const issue = unstorableText(body);
        if (issue) return refuseText(issue);
      } else if (route.requestBody && !route.bodyOptional) {
        return refuseBody('Request body must be a JSON object');
      }
    }

    // The body as the route's OpenAPI schema says, before GraphQL sees it: GraphQL would coerce `"urls": "https://…"`
    // into a list of one (and 42 into an ID "42"), accepting what the document refuses. Only the JSON types are
    // checked here; a field left out, and every rule on values (lengths, ranges, enums), stays the service's.
    if (body !== undefined && route.requestBody) {
      const details = bodyTypeIssues(route.requestBody, body);
      if (details.length) {
        return refuse(sdk ? errorResponse(badBody, `${details[0]!.path.join('.')}: ${details[0]!.message}`) : errorResponse('validation_failed', 'Validation failed', { details }));
      }
    }

    request.body = body;
    request.rawBody = rawBody;
    if (route.handle) {
      try {
        return await route.handle(request);
      } catch (error) {
        // Hand-written routes throw the same AppErrors as resolvers: one mapping for both.
        if (error instanceof AppError) return fromGraphQLError(error, { exposeInternal: false });
        throw error;
      }
    }

    const operation = this.operations.get(route.operation!)!;
    let variables: Record<string, unknown>;
    try {
      variables = route.variables ? route.variables(request) : {};
    } catch (error) {
      // A route may refuse its query string before the operation runs (login's `session`).
      if (error instanceof AppError) return fromGraphQLError(error, { exposeInternal: false });
      throw error;
    }
    // Publishable-key routes act for visitors, never an audit event's actor (they record none): they run outside
    // the audit scope, whose AsyncLocalStorage turns async_hooks on for every promise while any execution runs,
    // which under SDK load is all the time (bench/README.md, issue 41).
    const execute = () => operation.compiled.query(undefined, context, variables);
    const result = await (sdk ? execute() : withAuditScope(context, execute));
    if (result.errors?.length && result.data === undefined) {
      // The variables were refused before any resolver ran: authorise first (401/404/403), then 400.
      const denied = await authorizeRootFields(this.schema, operation.definition, context, variables);
      if (denied) return fromGraphQLError(denied, { exposeInternal: false });
      const details = variableIssues(this.schema, operation.definition, variables);
      if (details.length) return sdk ? errorResponse(badBody, 'Invalid request body') : errorResponse('validation_failed', 'Validation failed', { details });
    }
    if (result.errors?.length) {
      const response = fromGraphQLError(result.errors[0]!, { exposeInternal: !this.services.config.production });
      // An outage is logged once by its monitor, not once per refused request.
      if (response.status === 503) outageMonitor(this.services).report(result.errors[0]!.originalError);
      else if (response.status >= 500) {
        this.services.logger.error({ reqId: exchange.requestId, err: result.errors[0] }, 'operation failed');
      }
      return response;
    }
    return route.respond ? route.respond(result.data as never, request) : { status: 200, body: result.data };
  }
}

/** Where the body's JSON types differ from the route's documented request body (a missing field is not one). */
function bodyTypeIssues(schema: z.ZodType, body: unknown): ValidationIssue[] {
  const parsed = safeParseOnce(schema, body);
  if (parsed.success) return [];
  const valueAt = (path: readonly PropertyKey[]) => path.reduce<unknown>((value, key) => (value as Record<PropertyKey, unknown> | undefined)?.[key], body);
  return parsed.error.issues
    .filter((issue) => issue.code === 'invalid_type' && valueAt(issue.path) !== undefined)
    .map((issue) => ({ path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))), message: issue.message }));
}
