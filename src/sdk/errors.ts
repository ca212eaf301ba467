import { AppError } from '../errors.js';

// The SDK codes of service-api.md section 7; rest/errors.ts gives their statuses.
export const invalidKey = () => new AppError('invalid_key', 'Unknown publishable key');
export const revokedKey = () => new AppError('revoked_key', 'This publishable key has been revoked');
export const originNotAllowed = () =>
  new AppError('origin_not_allowed', "This origin is not in the project's allowed origins");
export const noPublishedVersion = () => new AppError('no_published_version', 'The project has no published consent version');
export const invalidBody = (message: string) => new AppError('invalid_body', message);
export const invalidVersion = () => new AppError('invalid_version', 'versionId is not a published version of this project');
export const consentHashMismatch = () =>
  new AppError('consent_hash_mismatch', "consentHash does not match the version's consent hash");
