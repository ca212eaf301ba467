import { z } from 'zod';
import type { ResponseDoc, RouteDef } from './route.js';
import { ErrorBody } from './schemas.js';

export interface OpenApiOptions {
  version: string;
  /** PUBLIC_BASE_URL when it was set; otherwise the document names its own origin (a relative server URL). */
  publicBaseUrl?: string;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const ERROR_REF = { $ref: '#/components/schemas/Error' };

const DESCRIPTION = `Operator platform API (/api/platform), browser SDK API (/api/sdk/v1, /api/sdk/v2), the SDK files, the operator console and probes.

- **GraphQL**: every REST route that has an \`x-graphql-operation\` runs that named operation of \`/graphql\` in-process, and its \`operationId\` is the operation's name; routes without one (probes, files, provider callbacks) have an explicit operationId. \`/graphql\` itself is described by its schema (schema/schema.graphql), not here. It follows Relay's global object identification: every type with an \`id\` implements \`Node\`, and \`node(id:)\` / \`nodes(ids:)\` refetch any of them by the same id REST shows, with the authorisation of the type's own field (docs/graphql.md).
- **Errors**: operator routes answer \`{error, code, details?}\`, SDK routes \`{error, code}\` (the \`Error\` schema covers both). Every route may answer 500 \`internal\` and 503 \`service_unavailable\` (with Retry-After); a route with a body may answer 413 \`payload_too_large\`.
- **Servers**: PUBLIC_BASE_URL when it is set; otherwise the relative URL \`/\`, which OpenAPI resolves against the address the document was fetched from (the request's origin).
- **Path templates**: a parameter marked \`x-multi-segment: true\` (the console's \`{path}\`) matches the rest of the path, slashes included, unencoded (\`/console/settings/members\`); OpenAPI's own templates match one segment.
- **HEAD** is answered for every GET route (same status and headers, no body); a method a path does not have is 405 with Allow; an address no route has is 404 \`not_found\`.
- **Requests**: request schemas describe what the service accepts (fields with defaults are optional); responses describe what it answers (defaults filled in). The test suite checks every answer it receives against this document (test/helpers/openapi-conformance.ts).`;

/**
 * OpenAPI 3.1 from the route table: paths, bodies and responses come from the
 * same zod schemas the routes declare, so the document cannot drift from them.
 * Requests are rendered as zod *input* (a defaulted field is optional) and answers as *output*.
 */
export function buildOpenApi(routes: RouteDef[], options: OpenApiOptions | string) {
  const { version, publicBaseUrl } = typeof options === 'string' ? { version: options, publicBaseUrl: undefined } : options;
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Record<string, unknown> = {};
  // A schema with a zod id becomes a component; its request form (io: input) is named <id>Input, because
  // defaults make the two differ (ConsentExperience: every field required in the answer, optional in the request).
  const render = (schema: z.ZodType, io: 'input' | 'output' = 'output') => {
    const suffix = io === 'input' ? 'Input' : '';
    const json = JSON.parse(
      JSON.stringify(z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' })).replace(
        /"#\/\$defs\/([^"]+)"/g,
        (_, name: string) => `"#/components/schemas/${name}${suffix}"`,
      ),
    ) as Record<string, unknown> & { $defs?: Record<string, unknown> };
    for (const [name, def] of Object.entries(json.$defs ?? {})) components[name + suffix] = def;
    delete json.$defs;
    delete json.$schema;
    return json;
  };
  render(ErrorBody);

  const tags = new Set<string>();
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)\*?/g, '{$1}');
    const tag = route.tag ?? tagFromPath(route.path);
    tags.add(tag);
    const parameters = [
      ...[...route.path.matchAll(/:(\w+)(\*?)/g)].map(([, name, rest]) => ({
        name,
        in: 'path',
        required: true,
        ...(rest
          ? {
              description: 'The rest of the path, slashes included and not percent-encoded (e.g. settings/members, assets/index-1a2b.js)',
              'x-multi-segment': true,
              schema: { type: 'string', pattern: '^.+$' },
            }
          : { schema: { type: 'string' } }),
      })),
      ...Object.entries(route.queryParams?.shape ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: !(schema as z.ZodType).safeParse(undefined).success,
        ...describedBy(schema as z.ZodType),
        schema: render(schema as z.ZodType, 'input'),
      })),
      ...Object.entries(route.requestHeaders?.shape ?? {}).map(([name, schema]) => ({
        name,
        in: 'header',
        required: !(schema as z.ZodType).safeParse(undefined).success,
        ...describedBy(schema as z.ZodType),
        schema: render(schema as z.ZodType, 'input'),
      })),
    ];
    const responses: Record<string, unknown> = Object.fromEntries(
      Object.entries(route.responses).map(([status, response]) => [status, renderResponse(response, render)]),
    );
    for (const [status, response] of Object.entries(commonResponses(route))) responses[status] ??= response;

    const requestBody = route.requestBody
      ? { required: !route.bodyOptional, content: { 'application/json': { schema: render(route.requestBody, 'input') } } }
      : route.rawRequestBody && {
          description: route.rawRequestBody.description,
          required: route.rawRequestBody.required,
          content: Object.fromEntries(Object.entries(route.rawRequestBody.content).map(([type, schema]) => [type, { schema: render(schema, 'input') }])),
        };
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      operationId: operationIdOf(route),
      tags: [tag],
      summary: route.summary,
      ...(route.operation && { 'x-graphql-operation': route.operation }),
      security: route.auth === 'public' ? [] : [{ [route.auth === 'session' ? 'session' : 'publishableKey']: [] }],
      ...(parameters.length && { parameters }),
      ...(requestBody && { requestBody }),
      responses,
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Consent and privacy operations service',
      version,
      description: DESCRIPTION,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: publicBaseUrl
      ? [{ url: publicBaseUrl, description: 'PUBLIC_BASE_URL' }]
      : [{ url: '/', description: 'The origin this document was served from (PUBLIC_BASE_URL is not set)' }],
    tags: [...tags].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `Routes of rest/routes (${name})` })),
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        session: { type: 'http', scheme: 'bearer', description: 'Operator session token from login (the console sends its cookie instead)' },
        publishableKey: { type: 'http', scheme: 'bearer', description: 'pk_live_ publishable key' },
      },
    },
  };
}

/** The GraphQL operation's name; an explicit one; or one made of the method and the path's fixed words. */
export function operationIdOf(route: RouteDef): string {
  if (route.operation) return route.operation;
  if (route.operationId) return route.operationId;
  const words = route.path
    .split('/')
    .filter((part) => part && !part.startsWith(':') && part !== 'api')
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return route.method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  probes: 'Liveness and readiness',
  auth: 'Operator accounts and sessions',
  organizations: 'Organizations and their projects',
  consent: 'The consent configuration: draft, experience, versions',
  evidence: 'Publish evidence packages',
  keys: 'Publishable keys',
  sdk: 'The browser SDK API (publishable key) and the hosted preferences page',
  'sdk-files': 'The built browser SDK files',
  receipts: 'Consent receipts: list, export, analytics',
  webhooks: 'Outgoing webhooks and their deliveries',
  notifications: "The operator's notifications",
  billing: 'Plans, subscriptions and the payment provider',
  audit: 'The audit log',
  console: 'The operator console (a single-page app)',
  documents: 'This document',
};

/** A tag for a route no group tagged: the first fixed word of its path that says what it is about. */
function tagFromPath(path: string): string {
  const generic = new Set(['api', 'platform', 'v1', 'v2', 'orgs', 'projects']);
  return path.split('/').find((part) => part && !part.startsWith(':') && !generic.has(part)) ?? 'organizations';
}

function describedBy(schema: z.ZodType): { description?: string } {
  return schema.description ? { description: schema.description } : {};
}

function renderResponse(response: ResponseDoc, render: (schema: z.ZodType) => Record<string, unknown>) {
  const content =
    response.content ?? (response.schema ? { [response.contentType ?? 'application/json']: response.schema } : undefined);
  return {
    description: response.description,
    ...(response.headers && {
      headers: Object.fromEntries(Object.entries(response.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])),
    }),
    ...(content && { content: Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema: render(schema) }])) }),
  };
}

/** What any route of its kind may answer besides its own responses (rest/handler.ts, src/app.ts). */
function commonResponses(route: RouteDef): Record<string, unknown> {
  const error = (description: string, headers?: Record<string, unknown>) => ({
    description,
    ...(headers && { headers }),
    content: { 'application/json': { schema: ERROR_REF } },
  });
  const refusals400 = [
    ...(BODY_METHODS.has(route.method) && route.requestBody ? ['invalid_json / invalid_body: the body is not a JSON object'] : []),
    // rest/handler.ts refuses query text the database cannot hold before the route runs (extensions.md section 9).
    ...(route.queryParams && !route.unstorableParamsNameNothing
      ? ['validation_failed (SDK routes: invalid_body): a query parameter holds U+0000 or an unpaired surrogate']
      : []),
  ];
  return {
    ...(route.auth === 'session' && { 401: error('unauthorized: no valid session') }),
    ...(refusals400.length && { 400: error(refusals400.join('; ')) }),
    ...(BODY_METHODS.has(route.method) && { 413: error('payload_too_large: the body is over the route\u2019s limit') }),
    500: error('internal: an unexpected error (logged with the request id)'),
    // Every route may meet a database outage (extensions.md "Database unavailable"); the probes say their own 503.
    503: error('service_unavailable: the database is unavailable or overloaded; retry after Retry-After seconds', {
      'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } },
    }),
  };
}

/** GET /api/openapi.json: the document, built once at start-up (`document` is read per request). */
export function openApiRoute(document: () => string): RouteDef {
  return {
    method: 'GET',
    path: '/api/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    operationId: 'getOpenApiDocument',
    tag: 'documents',
    auth: 'public',
    handle: () => ({ status: 200, body: document(), headers: { 'Content-Type': 'application/json' } }),
    responses: { 200: { description: 'OpenAPI 3.1', schema: z.record(z.string(), z.unknown()) } },
  };
}
