import { randomUUID } from 'node:crypto';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed client id so traces join up; otherwise make one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && CLIENT_ID.test(header) ? header : randomUUID();
}
