import { z } from 'zod';
import type { RouteDef } from './route.js';

/**
 * OpenAPI 3.1 from the route table: paths, bodies and responses come from the
 * same zod schemas the routes declare, so the document cannot drift from them.
 */
export function buildOpenApi(routes: RouteDef[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const toSchema = (schema: z.ZodType) =>
    JSON.parse(
      JSON.stringify(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' })).replaceAll(
        '"#/$defs/',
        '"#/components/schemas/',
      ),
    );

  const components: Record<string, unknown> = {};
  const render = (schema: z.ZodType) => {
    const json = toSchema(schema) as Record<string, unknown> & { $defs?: Record<string, unknown> };
    if (json.$defs) {
      Object.assign(components, json.$defs);
      delete json.$defs;
    }
    delete json.$schema;
    return json;
  };

  for (const route of routes) {
    const path = route.path.replace(/:(\w+)\*?/g, '{$1}');
    const parameters = [
      ...[...route.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
      ...Object.entries(route.queryParams?.shape ?? {}).map(([name, schema]) => ({
        name,
        in: 'query',
        required: !(schema as z.ZodType).safeParse(undefined).success,
        schema: render(schema as z.ZodType),
      })),
    ];
    const responses: Record<string, unknown> = Object.fromEntries(
      Object.entries(route.responses).map(([status, response]) => [
        status,
        {
          description: response.description,
          ...(response.schema && { content: { [response.contentType ?? 'application/json']: { schema: render(response.schema) } } }),
        },
      ]),
    );
    // Every route may meet a database outage (extensions.md "Database unavailable"); the probes say their own 503.
    responses['503'] ??= {
      description: 'service_unavailable: the database is unavailable or overloaded; retry after Retry-After seconds',
      headers: { 'Retry-After': { schema: { type: 'integer' } } },
      content: {
        'application/json': {
          schema: { type: 'object', properties: { error: { type: 'string' }, code: { const: 'service_unavailable' } }, required: ['error', 'code'] },
        },
      },
    };
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      summary: route.summary,
      ...(route.operation && { 'x-graphql-operation': route.operation }),
      security: route.auth === 'public' ? [] : [{ [route.auth === 'session' ? 'session' : 'publishableKey']: [] }],
      ...(parameters.length && { parameters }),
      ...(route.requestBody && {
        requestBody: { required: !route.bodyOptional, content: { 'application/json': { schema: render(route.requestBody) } } },
      }),
      responses,
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Consent and privacy operations service',
      version,
      description:
        'Operator platform API (/api/platform), browser SDK API (/api/sdk/v1) and probes. ' +
        'Every REST route runs a GraphQL operation of /graphql in-process (x-graphql-operation). ' +
        'Operator errors: {error, code, details?}; SDK errors: {error, code}. See docs/ for decisions.',
    },
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        session: { type: 'http', scheme: 'bearer', description: 'Operator session token from login' },
        publishableKey: { type: 'http', scheme: 'bearer', description: 'pk_live_ publishable key' },
      },
    },
  };
}
