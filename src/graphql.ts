import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { NoSchemaIntrospectionCustomRule, type GraphQLSchema } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { bearerToken } from './http/headers.js';
import { createContext } from './context.js';
import type { Services } from './services.js';

interface ServerContext {
  requestId: string;
  ip: string;
}

/** /graphql for operator tooling: same session bearer, same domain code as REST. */
export function createGraphqlServer(services: Services, schema: GraphQLSchema) {
  const plugins: Plugin[] = [
    // Abusive queries get a GraphQL error at validation, before any resolver runs.
    maxDepthPlugin({ n: 8, flattenFragments: true }) as Plugin,
    costLimitPlugin({ maxCost: 5000 }) as Plugin,
  ];
  if (!services.config.introspection) {
    plugins.push({ onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule) });
  }
  return createYoga<ServerContext>({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: !services.config.production,
    landingPage: false,
    logging: false,
    maskedErrors: { isDev: !services.config.production },
    plugins,
    context: ({ request, requestId, ip }) =>
      createContext(services, { requestId, ip, bearer: bearerToken(request.headers.get('authorization') ?? undefined) }),
  });
}
