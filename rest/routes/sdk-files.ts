// The built browser SDK, v1 (sdk/dist) and v2 (sdk/dist/v2), served precompressed: the build writes brotli and
// gzip copies of each file at their highest levels (scripts/precompressed.mjs), read once at start-up, and the
// answer picks by Accept-Encoding. The bytes themselves are the build's, byte for byte.
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { pickBuilt, readBuilt } from '../../src/http/compression.js';
import { headerValue } from '../../src/http/headers.js';
import { route, type RouteDef } from '../route.js';
import { conditionalHeaders } from '../schemas.js';
import { etagMatches } from './sdk.js';

const WHAT: Record<string, string> = {
  'consent.js': 'classic script defining ConsentSDK',
  'consent.mjs': 'ES module exporting init',
  'gpp.js': "the IAB GPP CMP API (__gpp) on the IAB's @iabgpp/cmpapi, loaded by consent.js only in opt-out jurisdictions",
  'stub.js': "what must exist before the core, loaded by the page synchronously before consent.js: with data-tcf, the IAB TCF __tcfapi stub and __tcfapiLocator frame; with data-integrations, the vendors' consent APIs' first-view defaults",
  'tcf.js': "the IAB TCF v2.3 CMP (__tcfapi, TC and AC strings, two-layer banner) on the IAB's @iabtechlabtcf/core and cmpapi, loaded by stub.js on TCF pages",
  'declaration.js': 'the cookie declaration table, loaded by consent.js only on a page with a data-consent-declaration element',
  'more.js': 'shared cookie, decorate() adoption, /decision, cookie removal: loaded by consent.js only where a page needs it',
  'integrations.js': "the vendors' consent API updates (UET, Clarity, Meta, TikTok, Shopify, WordPress), loaded by more.js where configured",
};

function sdkFileRoute(version: 'v1' | 'v2', name: string): RouteDef {
  const files = readBuilt(fileURLToPath(new URL(`../../sdk/dist/${version === 'v1' ? name : `${version}/${name}`}`, import.meta.url)));
  return route({
    method: 'GET',
    path: `/sdk/${version}/${name}`,
    operationId: `getSdk${version.toUpperCase()}${name.replace(/(^|[.-])(\w)/g, (_, _sep: string, c: string) => c.toUpperCase())}`,
    summary:
      `The built browser SDK${version === 'v1' ? '' : ' v2'} (${WHAT[name]}), ` + 'brotli or gzip by Accept-Encoding (Vary: Accept-Encoding; an ETag per encoding)',
    auth: 'public',
    requestHeaders: conditionalHeaders,
    handle: (req) => {
      if (!files) return { status: 404, body: { error: 'The SDK has not been built (npm run build:sdk)', code: 'not_found' } };
      const { encoding, chosen: file } = pickBuilt(files, headerValue(req.headers['accept-encoding']));
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
    responses: {
      200: { description: 'JavaScript', contentType: 'text/javascript', schema: z.string() },
      304: { description: 'If-None-Match matched the ETag' },
      404: { description: 'The SDK has not been built (npm run build:sdk)', schema: z.object({ error: z.string(), code: z.literal('not_found') }) },
    },
  });
}

export const sdkFileRoutes: RouteDef[] = [
  ...['v1' as const, 'v2' as const].flatMap((version) => [sdkFileRoute(version, 'consent.js'), sdkFileRoute(version, 'consent.mjs')]),
  sdkFileRoute('v2', 'gpp.js'),
  sdkFileRoute('v2', 'stub.js'),
  sdkFileRoute('v2', 'tcf.js'),
  sdkFileRoute('v2', 'declaration.js'),
  sdkFileRoute('v2', 'more.js'),
  sdkFileRoute('v2', 'integrations.js'),
];
