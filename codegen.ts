import type { CodegenConfig } from '@graphql-codegen/cli';

// Types for the REST layer's hand-written operations (rest/operations/*.graphql),
// generated from the committed schema: `npm run codegen`. Routes use them as
// `route<RegisterMutation>({...})` so respond() sees the operation's exact data.
// The console's operations (console/src/graphql/operations/*.graphql) become typed documents
// in console/src/graphql/generated.ts the same way; codegen fails on a document the schema refuses.
const OUTPUT_CONFIG = {
  scalars: { DateTime: 'string', JSON: 'unknown', ID: 'string' },
  avoidOptionals: true,
  enumsAsTypes: true,
  useTypeImports: true,
};

const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  generates: {
    'console/src/graphql/generated.ts': {
      documents: ['console/src/graphql/operations/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: OUTPUT_CONFIG,
    },
    'rest/generated/operations.ts': {
      documents: ['rest/operations/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: OUTPUT_CONFIG,
    },
  },
};

export default config;
