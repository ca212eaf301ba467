// The built browser SDK v2 (sdk/dist/v2), served precompressed: each file is read and compressed once at
// start-up (brotli and gzip at their highest levels, which a per-request compressor could not afford), and
// the answer picks by Accept-Encoding. v1 stays at /sdk/v1/ (rest/routes/sdk.ts), byte for byte.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { headerValue } from '../../src/http/headers.js';
import { route, type RouteDef } from '../route.js';
import { etagMatches } from './sdk.js';

interface Encoded {
  body: Buffer;
  etag: string;
}

function readV2(name: string): Record<'identity' | 'br' | 'gzip', Encoded> | null {
  let raw: Buffer;
  try {
    raw = readFileSync(new URL(`../../sdk/dist/v2/${name}`, import.meta.url));
  } catch {
    return null;
  }
  // One ETag per representation, so caches never hand a brotli body to a client that asked for gzip.
  const tag = createHash('sha256').update(raw).digest('hex').slice(0, 32);
  return {
    identity: { body: raw, etag: `"${tag}"` },
    br: { body: brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }), etag: `"${tag}-br"` },
    gzip: { body: gzipSync(raw, { level: 9 }), etag: `"${tag}-gz"` },
  };
}

/** Brotli, then gzip, when the client accepts them (q=0 refuses). */
export function pickEncoding(accept: string): 'br' | 'gzip' | 'identity' {
  const ok = (name: string) => new RegExp(`(^|,)\\s*${name}\\s*(;\\s*q=(?!0(\\.0*)?\\s*(,|$))[\\d.]+)?\\s*(,|$)`, 'i').test(accept);
  return ok('br') ? 'br' : ok('gzip') ? 'gzip' : 'identity';
}

function sdkV2FileRoute(name: string): RouteDef {
  const files = readV2(name);
  return route({
    method: 'GET',
    path: `/sdk/v2/${name}`,
    summary: `The built browser SDK v2 (${name.endsWith('.mjs') ? 'ES module exporting init' : 'classic script defining ConsentSDK'}), brotli or gzip by Accept-Encoding`,
    auth: 'public',
    handle: (req) => {
      if (!files) return { status: 404, body: { error: 'The SDK has not been built (npm run build:sdk)', code: 'not_found' } };
      const encoding = pickEncoding(headerValue(req.headers['accept-encoding']) ?? '');
      const file = files[encoding];
      const headers: Record<string, string> = {
        'Content-Type': 'text/javascript; charset=utf-8',
        'Cache-Control': 'public, max-age=300',
        ETag: file.etag,
        Vary: 'Accept-Encoding',
        'Access-Control-Allow-Origin': '*',
        'Cross-Origin-Resource-Policy': 'cross-origin',
        'X-Content-Type-Options': 'nosniff',
      };
      if (encoding !== 'identity') headers['Content-Encoding'] = encoding;
      if (etagMatches(req.headers['if-none-match'], file.etag)) return { status: 304, headers };
      return { status: 200, body: file.body, headers };
    },
    responses: { 200: { description: 'JavaScript', contentType: 'text/javascript', schema: z.string() } },
  });
}

export const sdkV2FileRoutes: RouteDef[] = [sdkV2FileRoute('consent.js'), sdkV2FileRoute('consent.mjs')];
