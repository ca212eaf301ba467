// `npm run schema:print`: writes the printed GraphQL schema that CI checks for drift.
import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { schema } from '../schema/index.js';

writeFileSync(new URL('../schema/schema.graphql', import.meta.url), `${printSchema(schema)}\n`);
console.log('schema/schema.graphql written');
