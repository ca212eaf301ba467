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
