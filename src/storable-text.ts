import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { validationFailed, type ValidationIssue } from './errors.js';

/**
 * Text PostgreSQL cannot hold (extensions.md section 9): U+0000, which `text` and `jsonb` refuse with an
 * error (a 500 before this check), and unpaired UTF-16 surrogates, which have no UTF-8 form (the driver would
 * store U+FFFD instead, silently changing what the caller sent). Every door refuses them before any query:
 * the REST handler for bodies, path and query parameters (rest/handler.ts), /graphql for variables and literal
 * arguments (below). JavaScript has no other text that PostgreSQL's UTF-8 cannot store.
 */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain U+0000 or an unpaired surrogate';

export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);

/** The text with each character PostgreSQL cannot hold replaced by U+FFFD (for values that then name nothing). */
export const storableForm = (text: string): string => text.replace(new RegExp(UNSTORABLE.source, 'g'), '\uFFFD');

interface Pending {
  value: unknown;
  parent: Pending | undefined;
  key: string | number | undefined;
}

/**
 * The first string in a JSON value (an object key or a string anywhere in it) that PostgreSQL cannot hold,
 * as a `details` issue with its path, or undefined. Iterative: a 1 MiB body may nest half a million levels.
 */
export function unstorableText(value: unknown, path: (string | number)[] = []): ValidationIssue | undefined {
  const stack: Pending[] = [{ value, parent: undefined, key: undefined }];
  while (stack.length) {
    const item = stack.pop()!;
    const found = (key?: string) => ({ path: [...path, ...pathOf(item), ...(key === undefined ? [] : [key])], message: UNSTORABLE_TEXT_MESSAGE });
    if (typeof item.value === 'string') {
      if (!isStorableText(item.value)) return found();
    } else if (Array.isArray(item.value)) {
      for (let i = item.value.length - 1; i >= 0; i--) stack.push({ value: item.value[i], parent: item, key: i });
    } else if (item.value !== null && typeof item.value === 'object') {
      const entries = Object.entries(item.value);
      for (const [key] of entries) if (!isStorableText(key)) return found(key);
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], parent: item, key: entries[i]![0] });
    }
  }
  return undefined;
}

function pathOf(item: Pending): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Pending | undefined = item; at?.parent; at = at.parent) path.unshift(at.key!);
  return path;
}

/** /graphql: a string literal in the document (an argument, or a field of an input object or list literal). */
export const storableLiteralsRule: ValidationRule = (context) => ({
  StringValue(node) {
    if (!isStorableText(node.value)) {
      context.reportError(
        new GraphQLError(`String literal ${UNSTORABLE_TEXT_MESSAGE}`, {
          nodes: node,
          extensions: { code: 'validation_failed', details: [{ path: [], message: UNSTORABLE_TEXT_MESSAGE }] },
        }),
      );
    }
  },
});

/**
 * /graphql: the literal rule at validation, and the variables before execution (GraphQL refuses a variable
 * of the wrong type at the same point, before any resolver). One `validation_failed` error naming the variable.
 */
export function storableTextPlugin(): Plugin {
  return {
    onValidate: ({ addValidationRule }) => addValidationRule(storableLiteralsRule),
    onExecute({ args, setResultAndStopExecution }) {
      for (const [name, value] of Object.entries(args.variableValues ?? {})) {
        const issue = unstorableText(value, [name]);
        if (issue) {
          const error = validationFailed([issue], `Variable "$${name}" ${UNSTORABLE_TEXT_MESSAGE}`);
          setResultAndStopExecution({ errors: [error] });
          return;
        }
      }
    },
  };
}

/**
 * Safety net behind the checks above: PostgreSQL's own refusal of such text (22021 invalid byte sequence in
 * text, 22P05 the same in jsonb), wherever it is wrapped, is the caller's bad input, never a 500.
 */
export function isUnstorableTextError(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 6) return false;
  const e = error as { code?: unknown; originalCode?: unknown; message?: unknown; cause?: unknown; originalError?: unknown; meta?: { driverAdapterError?: { cause?: unknown } } };
  if (e.code === '22021' || e.code === '22P05' || e.originalCode === '22021' || e.originalCode === '22P05') return true;
  if (typeof e.message === 'string' && /Code: `22(021|P05)`/.test(e.message)) return true;
  const inner = [e.originalError, e.cause, e.meta?.driverAdapterError?.cause];
  return inner.some((next) => next !== error && isUnstorableTextError(next, depth + 1));
}
