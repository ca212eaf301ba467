import type { z } from 'zod';
import { AppError } from '../errors.js';
import { safeParseOnce } from '../validation.js';

// The SDK codes of service-api.md section 7; rest/errors.ts gives their statuses.
export const invalidKey = () => new AppError('invalid_key', 'Unknown publishable key');
export const revokedKey = () => new AppError('revoked_key', 'This publishable key has been revoked');
export const originNotAllowed = () =>
  new AppError('origin_not_allowed', "This origin is not in the project's allowed origins");
export const noPublishedVersion = () => new AppError('no_published_version', 'The project has no published consent version');
export const invalidBody = (message: string) => new AppError('invalid_body', message);

/** An SDK body checked against its schema (parsed once per request), or 400 `invalid_body` naming the first issue. */
export function parseSdkBody<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = safeParseOnce(schema, input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw invalidBody(issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message);
}
export const invalidVersion = () => new AppError('invalid_version', 'versionId is not a published version of this project');
export const consentHashMismatch = () =>
  new AppError('consent_hash_mismatch', "consentHash does not match the version's consent hash");
