import { z } from 'zod';
import type { ChangePasswordMutation, LoginMutation, LogoutMutation, MeQuery, RegisterMutation } from '../generated/operations.js';
import { clearedSessionCookie, isConsoleRequest, sessionCookie } from '../../src/auth/console-session.js';
import { headerValue } from '../../src/http/headers.js';
import { validationFailed } from '../../src/errors.js';
import { route, type RestRequest } from '../route.js';
import { ErrorBody, Organization, Project, User, pick, validationError } from '../schemas.js';

const rateLimited = { 429: { description: 'Rate limited (Retry-After, X-RateLimit-*)', schema: ErrorBody } };
const Success = z.object({ success: z.literal(true) });

export const authRoutes = [
  route<RegisterMutation>({
    method: 'POST',
    path: '/api/platform/auth/register',
    summary: 'Register a user (no organization, no session)',
    auth: 'public',
    operation: 'Register',
    requestBody: z.object({ email: z.string(), password: z.string().min(12), name: z.string() }),
    variables: ({ body }) => ({ input: pick(body, ['email', 'password', 'name']) }),
    respond: (data) => ({ status: 201, body: data.register }),
    responses: {
      201: { description: 'Registered', schema: z.object({ user: User }) },
      ...validationError,
      409: { description: 'E-mail already registered', schema: ErrorBody },
      ...rateLimited,
    },
  }),
  route<LoginMutation>({
    method: 'POST',
    path: '/api/platform/auth/login',
    summary: 'Log in and receive an opaque session token',
    auth: 'public',
    operation: 'Login',
    requestBody: z.object({ email: z.string(), password: z.string() }),
    queryParams: z.object({
      session: z.enum(['cookie']).optional().describe(
        'Extension for the operator console: `cookie` answers `{ user }` without the token and sets the session cookie instead: ' +
          '`__Host-consent_session` in production (Secure, Path=/, no Domain), `consent_session` in development and tests ' +
          '(browsers refuse `__Host-` without Secure over http); HttpOnly, SameSite=Strict, Max-Age = the session lifetime. ' +
          'The cookie authenticates only requests with `X-Consent-Console: 1` and the service\'s own `Origin`; ' +
          'a bearer token, when present, wins. Any other value is 400 validation_failed. See docs/console-sessions.md.',
      ),
    }),
    variables: (req) => {
      cookieSessionWanted(req); // refuses a bad `session` before any session is made
      return { input: pick(req.body, ['email', 'password']) };
    },
    respond: (data, req) =>
      cookieSessionWanted(req)
        ? // The token goes only into the HttpOnly cookie: no script of the console ever holds it.
          { status: 200, body: { user: data.login.user }, headers: { 'Set-Cookie': sessionCookie(data.login.token, req.services.config) } }
        : { status: 200, body: data.login },
    responses: {
      200: {
        description:
          'Logged in: `{ token, user }`. With `?session=cookie`: `{ user }` only, the token is in the Set-Cookie header ' +
          '(`__Host-consent_session` in production, `consent_session` otherwise)',
        schema: z.union([z.object({ token: z.string(), user: User }), z.object({ user: User })]),
      },
      ...validationError,
      401: { description: 'Invalid credentials (same body for unknown e-mail and wrong password)', schema: ErrorBody },
      ...rateLimited,
    },
  }),
  route<LogoutMutation>({
    method: 'POST',
    path: '/api/platform/auth/logout',
    summary: 'Revoke the presented session, if any; always 200',
    auth: 'public',
    operation: 'Logout',
    respond: (data, req) => ({
      status: 200,
      body: data.logout,
      // The console's logout also makes the browser forget the cookie (the session is revoked either way).
      ...(isConsoleRequest((name) => headerValue(req.headers[name]), req.services.config) && {
        headers: { 'Set-Cookie': clearedSessionCookie(req.services.config) },
      }),
    }),
    responses: { 200: { description: 'Logged out (a console request also gets the session cookie cleared, Max-Age=0)', schema: Success } },
  }),
  route<MeQuery>({
    method: 'GET',
    path: '/api/platform/auth/me',
    summary: 'The session user with their organizations and projects',
    auth: 'session',
    operation: 'Me',
    respond: (data) => ({ status: 200, body: data.me }),
    responses: {
      200: {
        description: 'The session user',
        schema: z.object({ user: User, organizations: z.array(Organization), projects: z.array(Project) }),
      },
      401: { description: 'Missing, invalid or expired session', schema: ErrorBody },
    },
  }),
  route<ChangePasswordMutation>({
    method: 'POST',
    path: '/api/platform/auth/password',
    summary: 'Change the password; revokes every session of the user, this one included',
    auth: 'session',
    operation: 'ChangePassword',
    requestBody: z.object({ currentPassword: z.string(), newPassword: z.string().min(12) }),
    variables: ({ body }) => ({ input: pick(body, ['currentPassword', 'newPassword']) }),
    respond: (data) => ({ status: 200, body: data.changePassword }),
    responses: {
      200: { description: 'Changed', schema: Success },
      ...validationError,
      401: { description: 'No session, or wrong current password (invalid_credentials)', schema: ErrorBody },
      429: { description: 'Too many wrong current passwords: they count as failed logins (Retry-After, X-RateLimit-*)', schema: ErrorBody },
    },
  }),
];

/** Whether a login asked for a console cookie session (`?session=cookie`); any other value is refused. */
function cookieSessionWanted({ query }: RestRequest): boolean {
  if (query.session === undefined) return false;
  if (query.session === 'cookie') return true;
  throw validationFailed([{ path: ['session'], message: 'must be "cookie" when given' }]);
}
