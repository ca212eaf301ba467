import {
  coerceInputValue,
  GraphQLError,
  Kind,
  typeFromAST,
  valueFromASTUntyped,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { scopesFor } from '../schema/builder.js';
import type { Context } from '../src/context.js';
import { forbidden, unauthorized, type ValidationIssue } from '../src/errors.js';

/**
 * GraphQL refuses variables of the wrong type (`{"name": 42}`) before any
 * resolver runs, so before its scope checks. The contract orders the checks
 * authentication, membership, role, then validation: when the variables are
 * refused, this runs the root fields' own `authScopes` first, and returns the
 * 401/404/403 error they raise, or null when the caller may see a 400.
 */
export async function authorizeRootFields(
  schema: GraphQLSchema,
  definition: OperationDefinitionNode,
  context: Context,
  variables: Record<string, unknown>,
): Promise<GraphQLError | null> {
  const rootType = definition.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const scopes = scopesFor(context) as Record<string, boolean | ((param: never) => Promise<boolean>)>;
  for (const selection of definition.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    const options = rootType?.getFields()[selection.name.value]?.extensions?.pothosOptions as
      | { authScopes?: unknown }
      | undefined;
    if (!options?.authScopes) continue;
    const args = Object.fromEntries(
      (selection.arguments ?? []).map((arg) => [
        arg.name.value,
        arg.value.kind === Kind.VARIABLE ? variables[arg.value.name.value] : valueFromASTUntyped(arg.value),
      ]),
    );
    const required = (
      typeof options.authScopes === 'function' ? await options.authScopes(undefined, args, context) : options.authScopes
    ) as Record<string, unknown>;
    // Pothos grants a field when any of its scopes passes.
    let denied: GraphQLError | null = null;
    for (const [name, param] of Object.entries(required)) {
      const check = scopes[name];
      try {
        const passed = typeof check === 'function' ? await check(param as never) : check === param;
        if (passed) {
          denied = null;
          break;
        }
        denied ??= context.viewer ? forbidden() : unauthorized();
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error;
        denied ??= error;
      }
    }
    if (denied) return denied;
  }
  return null;
}

/**
 * The refused variables as `details` with paths into the REST body: a route's
 * `input` variable is the body itself, other variables keep their name.
 */
export function variableIssues(
  schema: GraphQLSchema,
  definition: OperationDefinitionNode,
  variables: Record<string, unknown>,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const variable of definition.variableDefinitions ?? []) {
    const name = variable.variable.name.value;
    const type = typeFromAST(schema, variable.type as never) as GraphQLInputType | undefined;
    if (!type) continue;
    coerceInputValue(variables[name], type, (path, _invalid, error) => {
      issues.push({ path: name === 'input' ? [...path] : [name, ...path], message: error.message });
    });
  }
  return issues;
}
