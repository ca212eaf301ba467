// Content-coding (RFC 9110 section 8.4) for the answers the service sends: brotli or gzip by Accept-Encoding.
// Answers that never change (the SDK files, a published version's config) are compressed ONCE, at the
// highest levels; other JSON answers over 1 KB are compressed as they are sent, at a fast level.
import Negotiator from 'negotiator';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export type Encoding = 'br' | 'gzip' | 'identity';

/** One body in every coding the service offers. */
export type Encoded = Readonly<Record<Encoding, Buffer>>;

/** Answers smaller than this are sent as they are: the coding's framing would eat most of the gain. */
export const COMPRESS_MIN_BYTES = 1024;

const OFFERED: Encoding[] = ['br', 'gzip', 'identity'];
// negotiator 1.x breaks q-value ties by `preferred`; its @types still describe 0.6.
type RankingNegotiator = { encodings(available: string[], options: { preferred: string[] }): string[] };
const MAX_REMEMBERED_HEADERS = 256;
const chosen = new Map<string, Encoding>();

/**
 * The coding for an Accept-Encoding header: the client's q-values first (q=0 refuses), brotli before gzip
 * when they tie, the bytes as they are when the header is absent or accepts neither. Remembered per
 * distinct header (browsers send a handful), so the hot path does not parse it for each request.
 */
export function pickEncoding(acceptEncoding: string | undefined): Encoding {
  if (!acceptEncoding) return 'identity';
  let encoding = chosen.get(acceptEncoding);
  if (encoding === undefined) {
    const ranked = (new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }) as RankingNegotiator).encodings(OFFERED, { preferred: OFFERED });
    encoding = (ranked[0] as Encoding | undefined) ?? 'identity';
    // Bounded: a client sending ever new headers only costs the parsing again.
    if (chosen.size >= MAX_REMEMBERED_HEADERS) chosen.clear();
    chosen.set(acceptEncoding, encoding);
  }
  return encoding;
}

/** The highest levels, for bytes compressed once and sent many times. */
export function precompress(body: Buffer): Encoded {
  return Object.freeze({
    identity: body,
    br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    gzip: gzipSync(body, { level: constants.Z_BEST_COMPRESSION }),
  });
}

// Brotli 4 is about as fast as gzip 6 and still smaller: the level CDNs use for dynamic answers.
const DYNAMIC_BROTLI_QUALITY = 4;

/** A fast level, for an answer compressed as it is sent (synchronously: answers are small, exports stream). */
export function compressNow(body: string | Buffer, encoding: 'br' | 'gzip'): Buffer {
  return encoding === 'br'
    ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: DYNAMIC_BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(body) } })
    : gzipSync(body);
}

/** `Vary` with Accept-Encoding added to what it already names (caches key the stored answer on both). */
export function varyWithEncoding(vary: string | undefined): string {
  if (!vary) return 'Accept-Encoding';
  return /(^|,)\s*accept-encoding\s*(,|$)/i.test(vary) ? vary : `${vary}, Accept-Encoding`;
}

/** One coding of a built file, with its own ETag (caches never hand a brotli body to a client that asked for gzip). */
export interface Representation {
  body: Buffer;
  etag: string;
}

/** The plain file always; its .br and .gz copies when the build wrote them (text files). */
export type BuiltFile = Partial<Record<Encoding, Representation>> & { identity: Representation };

/**
 * A file of a build (sdk/dist, console/dist) with the .br and .gz copies the build wrote beside it
 * (scripts/precompressed.mjs), for answers by Accept-Encoding; null when the file is not there. The plain
 * file's ETag is a SHA-256 of its bytes, the copies' the same with `-br` or `-gz`.
 */
export function readBuilt(path: string): BuiltFile | null {
  if (!existsSync(path)) return null;
  const raw = readFileSync(path);
  const tag = createHash('sha256').update(raw).digest('hex').slice(0, 32);
  const codings: BuiltFile = { identity: { body: raw, etag: `"${tag}"` } };
  if (existsSync(`${path}.br`)) codings.br = { body: readFileSync(`${path}.br`), etag: `"${tag}-br"` };
  if (existsSync(`${path}.gz`)) codings.gzip = { body: readFileSync(`${path}.gz`), etag: `"${tag}-gz"` };
  return codings;
}

/** The client's preferred coding among those there are (identity always is). */
export function pickBuilt(codings: BuiltFile, acceptEncoding: string | undefined): { encoding: Encoding; chosen: Representation } {
  const wanted = pickEncoding(acceptEncoding);
  const chosen = codings[wanted];
  return chosen ? { encoding: wanted, chosen } : { encoding: 'identity', chosen: codings.identity };
}
