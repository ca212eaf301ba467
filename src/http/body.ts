import type { IncomingMessage } from 'node:http';

/** decisions.md: operator request bodies over 64 KiB are refused with 413. */
export const OPERATOR_BODY_LIMIT = 64 * 1024;

export class BodyTooLarge extends Error {}

/** Reads the whole body, refusing (without buffering it) anything over `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

export const isJsonContentType = (value: string | undefined) =>
  !!value && /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(value);
