import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, validate, type GraphQLSchema, Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { checkPreparedOperation } from '../src/graphql-limits.js';

const OPERATIONS_DIR = fileURLToPath(new URL('./operations', import.meta.url));

/**
 * Every operation in rest/operations/*.graphql, parsed, validated against the
 * schema and compiled with graphql-jit once at start-up. A route runs its
 * operation in-process: no HTTP loopback, no per-request parsing.
 */
export interface PreparedOperation {
  compiled: CompiledQuery;
  /** The parsed operation (its root fields and variable types, for errors found before execution). */
  definition: OperationDefinitionNode;
}

export function prepareOperations(schema: GraphQLSchema, dir = OPERATIONS_DIR): Map<string, PreparedOperation> {
  const prepared = new Map<string, PreparedOperation>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.graphql')).sort()) {
    const source = readFileSync(join(dir, file), 'utf8');
    if (!source.replace(/#.*$/gm, '').trim()) continue; // a domain with no operations yet
    const document = parse(source);
    const errors = validate(schema, document);
    if (errors.length) throw new Error(`${file}: ${errors.map((e) => e.message).join('; ')}`);
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION || !definition.name) continue;
      const name = definition.name.value;
      if (prepared.has(name)) throw new Error(`${file}: operation ${name} is defined twice`);
      const single: DocumentNode = {
        kind: Kind.DOCUMENT,
        definitions: [definition, ...document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)],
      };
      // The same limits as /graphql, so an operation can never be more than a client may ask for there.
      checkPreparedOperation(schema, single, name);
      const compiled = compileQuery(schema, single, name);
      if (!isCompiledQuery(compiled)) throw new Error(`${file}: ${name}: ${compiled.errors?.map((e) => e.message).join('; ')}`);
      prepared.set(name, { compiled, definition });
    }
  }
  return prepared;
}
