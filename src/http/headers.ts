/** The token of an `Authorization: Bearer <token>` header (session token or publishable key). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** The first value of a header node:http may give as a list. */
export const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
