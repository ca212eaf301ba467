import type { CodegenConfig } from '@graphql-codegen/cli';

// Types for the REST layer's hand-written operations (rest/operations/*.graphql),
// generated from the committed schema: `npm run codegen`. Routes use them as
// `route<RegisterMutation>({...})` so respond() sees the operation's exact data.
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['rest/operations/*.graphql'],
  generates: {
    'rest/generated/operations.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        scalars: { DateTime: 'string', JSON: 'unknown', ID: 'string' },
        avoidOptionals: true,
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;
