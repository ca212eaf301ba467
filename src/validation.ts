import type { z } from 'zod';
import { validationFailed, type ValidationIssue } from './errors.js';

/** zod issues in the contract's `details` shape: `[{ path, message }]`. */
export function toIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
    message: issue.message,
  }));
}

/** Parses domain input after authorisation, so bad input is a 400 only for callers allowed to try. */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationFailed(toIssues(result.error));
  return result.data;
}

const parsed = new WeakMap<object, { schema: z.ZodType; result: z.ZodSafeParseResult<unknown> }>();

/**
 * `schema.safeParse(value)`, remembered for the object: the REST layer checks a body against its route's schema
 * before the operation runs, and the SDK consent resolver parses the same object with the same schema; once is
 * enough (zod was 5 µs of the consent POST's CPU, issue 41). The result is the same object for both: neither
 * changes it.
 */
export function safeParseOnce<Schema extends z.ZodType>(schema: Schema, value: unknown): z.ZodSafeParseResult<z.output<Schema>> {
  if (value === null || typeof value !== 'object') return schema.safeParse(value);
  const known = parsed.get(value);
  if (known?.schema === schema) return known.result as z.ZodSafeParseResult<z.output<Schema>>;
  const result = schema.safeParse(value);
  parsed.set(value, { schema, result });
  return result;
}
