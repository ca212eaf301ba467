import { createHmac } from 'node:crypto';
import { errors, jwtVerify } from 'jose';
import { AppError } from '../errors.js';

/** A token may live at most this long: `exp` at most 24 hours after now (extensions.md section 14). */
export const MAX_TOKEN_LIFETIME_S = 24 * 60 * 60;
/** Clocks differ: `iat` and `exp` are checked with a minute's tolerance. */
const CLOCK_TOLERANCE_S = 60;
export const MAX_TOKEN_LENGTH = 4096;
const MAX_SUB_LENGTH = 255;

/** 401: the message says what was wrong with the token, never the token or its claims. */
export const invalidSubjectToken = (reason = 'The subject token is not valid') => new AppError('invalid_subject_token', reason);

/**
 * The `sub` of an HS256 subject token signed for this project with one of its secrets (the current one, or the
 * previous one within its grace period). Verified by jose: the algorithm pinned to HS256, `aud` the project id,
 * `sub`, `iat` and `exp` required, not expired, `iat` not in the future; then `exp` at most 24 hours ahead.
 */
export async function subjectOfToken(token: string, projectId: string, secrets: string[], now: Date): Promise<string> {
  if (token.length > MAX_TOKEN_LENGTH) throw invalidSubjectToken();
  let lastError: unknown;
  for (const secret of secrets) {
    try {
      const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
        algorithms: ['HS256'],
        audience: projectId,
        requiredClaims: ['sub', 'iat', 'exp'],
        currentDate: now,
        clockTolerance: CLOCK_TOLERANCE_S,
        maxTokenAge: MAX_TOKEN_LIFETIME_S,
      });
      const sub = payload.sub!;
      if (!sub || sub.length > MAX_SUB_LENGTH) throw invalidSubjectToken('The subject token’s sub must be 1 to 255 characters');
      if (payload.exp! > now.getTime() / 1000 + MAX_TOKEN_LIFETIME_S + CLOCK_TOLERANCE_S) {
        throw invalidSubjectToken('The subject token’s exp must be at most 24 hours ahead');
      }
      return sub;
    } catch (error) {
      lastError = error;
      // Another secret may have signed it (a rotation's grace period); any other fault is final.
      if (error instanceof errors.JWSSignatureVerificationFailed) continue;
      break;
    }
  }
  throw reasonOf(lastError);
}

function reasonOf(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof errors.JWTExpired) return invalidSubjectToken('The subject token has expired');
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud') {
    return invalidSubjectToken('The subject token’s aud is not this project’s id');
  }
  return invalidSubjectToken();
}

/** HMAC-SHA256(project pepper, sub), hex: all the service keeps of who the person is (docs/subjects.md). */
export const subjectHashOf = (pepper: Buffer, sub: string) => createHmac('sha256', pepper).update(sub, 'utf8').digest('hex');
export const SUBJECT_HASH = /^[0-9a-f]{64}$/;
