import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type GraphQLSchema } from 'graphql';
import { createYoga, maskError, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import { outageMonitor, RETRY_AFTER_SECONDS, UNAVAILABLE_MESSAGE } from './db/unavailable.js';
import { bearerToken } from './http/headers.js';
import { withAuditScope } from './audit/record.js';
import { sessionCredential } from './auth/console-session.js';
import { geoHeaders } from './sdk/location.js';
import { isUnstorableTextError, storableTextPlugin, UNSTORABLE_TEXT_MESSAGE } from './storable-text.js';
import { createContext, type Context } from './context.js';
import { costLimitPlugin, limitRules, parseWithLimits, refusalPenaltyPlugin } from './graphql-limits.js';
import type { Services } from './services.js';

interface ServerContext {
  requestId: string;
  ip: string;
}

/** /graphql for operator tooling: same session bearer, same domain code as REST. */
export function createGraphqlServer(services: Services, schema: GraphQLSchema) {
  const { config } = services;
  const plugins: Plugin[] = [
    // Abusive queries get a GraphQL error (code query_too_complex) before any resolver runs:
    // tokens while parsing, depth and aliases at validation, cost with the variables (src/graphql-limits.ts).
    { onParse: ({ setParseFn }) => setParseFn(parseWithLimits) },
    { onValidate: ({ addValidationRule }) => limitRules().forEach(addValidationRule) },
    costLimitPlugin(),
    // Text PostgreSQL cannot hold, in a literal or a variable: validation_failed before any resolver (src/storable-text.ts).
    storableTextPlugin(),
    refusalPenaltyPlugin(services) as Plugin,
    databaseUnavailable(),
    // Mutations record their actor and request id in the audit log (src/audit/record.ts).
    { onExecute: ({ executeFn, setExecuteFn }) => setExecuteFn((args) => withAuditScope(args.contextValue as Context, () => executeFn(args))) },
  ];
  if (!config.introspection) {
    plugins.push({ onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) });
  }
  // "Did you mean ..." would reveal the schema even with introspection off.
  if (config.production) plugins.push(blockFieldSuggestionsPlugin({ mask: '' }) as Plugin);
  return createYoga<ServerContext>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: !config.production,
    landingPage: false,
    logging: false,
    batching: false,
    maskedErrors: { isDev: !config.production, maskError: maskUnavailable(services) },
    // Same origin only, unless GRAPHQL_CORS_ORIGINS lists the origin: never reflected, never credentials for others.
    cors: (request) => {
      const origin = request.headers.get('origin');
      return origin && config.graphqlCorsOrigins.includes(origin) ? { origin: [origin], credentials: true, maxAge: 600 } : false;
    },
    plugins,
    context: ({ request, requestId, ip }) => {
      const header = (name: string) => request.headers.get(name) ?? undefined;
      return createContext(services, {
        requestId,
        ip,
        bearer: bearerToken(header('authorization')),
        // The operator session: the bearer, or the console's cookie on a same-origin console request.
        session: sessionCredential(header, config)?.token,
        // SDK fields check the allowed origins exactly as the REST SDK routes do.
        origin: header('origin'),
        geo: geoHeaders(config.geo, header),
      });
    },
  });
}

type MaskError = NonNullable<Exclude<YogaServerOptions<object, object>['maskedErrors'], boolean | undefined>['maskError']>;

/** Database unavailability (a resolver's or the context's) becomes `service_unavailable`, not an unexpected error. */
function maskUnavailable(services: Services): MaskError {
  return (error, message, isDev) => {
    const at = error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {};
    // Never the database's message (it quotes the query), even in development.
    if (isUnstorableTextError(error)) return new GraphQLError(`Text ${UNSTORABLE_TEXT_MESSAGE}`, { ...at, extensions: { code: 'validation_failed' } });
    if (!outageMonitor(services).report(error)) return maskError(error, message, isDev);
    return new GraphQLError(UNAVAILABLE_MESSAGE, { ...at, extensions: { code: 'service_unavailable' } });
  };
}

/**
 * A result whose only errors are `service_unavailable` is answered 503 with Retry-After, like REST;
 * with any other error next to them it keeps GraphQL's usual status and the code stays in `extensions`.
 */
function databaseUnavailable(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || !('errors' in result) || !result.errors?.length) return;
      if (!result.errors.every((error) => error.extensions?.code === 'service_unavailable')) return;
      const http = { status: 503, headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } };
      setResult({ ...result, extensions: { ...result.extensions, http } });
    },
  };
}
