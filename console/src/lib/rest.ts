// The only two REST calls of the console (docs/console-sessions.md): a login that sets the HttpOnly session
// cookie, and the logout that revokes it and clears the cookie. Everything else goes through /graphql.
import { CONSOLE_HEADERS } from './client';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

async function post(path: string, body?: unknown): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: body === undefined ? { ...CONSOLE_HEADERS } : { ...CONSOLE_HEADERS, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('The service cannot be reached. Check your connection and try again.', 'network', 0);
  }
  const json = (await response.json().catch(() => ({}))) as { error?: string; code?: string; details?: unknown };
  if (!response.ok) throw new ApiError(json.error ?? `The service answered ${response.status}`, json.code ?? 'error', response.status, json.details);
  return json;
}

export const signIn = (email: string, password: string) => post('/api/platform/auth/login?session=cookie', { email, password });
export const signOut = () => post('/api/platform/auth/logout');
