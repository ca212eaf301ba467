import { GraphQLError } from 'graphql';

/**
 * Every failure a caller can act on is an AppError: a GraphQL error whose
 * `extensions.code` is one of the contract's codes. The REST layer turns the
 * code into an HTTP status in one place (rest/errors.ts); /graphql returns it as is.
 */
export class AppError extends GraphQLError {
  constructor(
    readonly code: string,
    message: string,
    extra: Record<string, unknown> = {},
  ) {
    super(message, { extensions: { code, ...extra } });
  }
}

export interface ValidationIssue {
  path: (string | number)[];
  message: string;
}

export const unauthorized = () => new AppError('unauthorized', 'Authentication required');
export const invalidCredentials = () => new AppError('invalid_credentials', 'Invalid credentials');
export const forbidden = (message = 'Insufficient role') => new AppError('forbidden', message);
export const notFound = (what = 'Resource') => new AppError('not_found', `${what} not found`);
export const conflict = (message: string) => new AppError('conflict', message);
export const validationFailed = (details: ValidationIssue[], message = 'Validation failed') =>
  new AppError('validation_failed', message, { details });
export const entitlementExceeded = (message: string) => new AppError('entitlement_exceeded', message);

export interface RateLimitInfo {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  retryAfter: number;
  /** Unix seconds when the window resets. */
  reset: number;
}

export const rateLimited = (info: RateLimitInfo) =>
  new AppError('rate_limited', 'Too many requests', { rateLimit: info });
