// The operator console (docs/console.md): the files `npm run build:console` writes to console/dist, read once
// at start-up with the brotli and gzip copies the build made (scripts/precompressed.mjs), and served by Accept-Encoding. Hashed assets
// are cached for a year (their name changes with their bytes); index.html is revalidated every time, and any
// other address under /console/ is a deep link into the single-page app, answered with index.html.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { pickBuilt, readBuilt, type BuiltFile } from '../../src/http/compression.js';
import { headerValue } from '../../src/http/headers.js';
import { htmlPageHeaders } from '../../src/http/html-headers.js';
import { errorResponse } from '../errors.js';
import { conditionalHeaders, ErrorBody } from '../schemas.js';
import { route, type RestRequest, type RestResponse, type RouteDef } from '../route.js';
import { etagMatches } from './sdk.js';

const DIST = fileURLToPath(new URL('../../console/dist/', import.meta.url));

/**
 * Nothing from another host, no inline script: the bundle is same-origin files only and talks to /graphql
 * and the two auth routes. frame-src 'self' lets the consent editor show its live preview
 * (/console/preview.html, the real SDK) in a frame of the console's own origin.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "frame-src 'self'; worker-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

interface ConsoleFile {
  type: string;
  immutable: boolean;
  /** preview.html, framed by the console's consent editor. */
  frameable: boolean;
  /** The codings the build wrote (identity always; .br and .gz for text files). */
  bodies: BuiltFile;
}

function readConsole(): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  if (!existsSync(DIST)) return files;
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
  for (const path of walk(DIST)) {
    if (path.endsWith('.br') || path.endsWith('.gz')) continue;
    const name = relative(DIST, path).split(sep).join('/');
    const bodies = readBuilt(path)!;
    files.set(name, { type: TYPES[extname(name)] ?? 'application/octet-stream', immutable: name.startsWith('assets/'), frameable: name === 'preview.html', bodies });
  }
  return files;
}

function answer(req: RestRequest, file: ConsoleFile): RestResponse {
  const { encoding, chosen } = pickBuilt(file.bodies, headerValue(req.headers['accept-encoding']));
  const headers: Record<string, string> = {
    'Content-Type': file.type,
    'Cache-Control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    ETag: chosen.etag,
    Vary: 'Accept-Encoding',
    'X-Content-Type-Options': 'nosniff',
  };
  if (encoding !== 'identity') headers['Content-Encoding'] = encoding;
  if (file.type.startsWith('text/html')) {
    // The preview page is framed by the console itself (same origin); nothing else may frame either.
    const framing = file.frameable
      ? { 'Content-Security-Policy': `${CONSOLE_CSP}; frame-ancestors 'self'`, 'X-Frame-Options': 'SAMEORIGIN' }
      : htmlPageHeaders(CONSOLE_CSP);
    Object.assign(headers, framing, { 'Referrer-Policy': 'same-origin', 'Cross-Origin-Opener-Policy': 'same-origin' });
  }
  if (etagMatches(req.headers['if-none-match'], chosen.etag)) return { status: 304, headers };
  return { status: 200, body: chosen.body, headers };
}

function consoleRoutes(): RouteDef[] {
  const files = readConsole();
  const notBuilt = () => errorResponse('not_found', 'The console has not been built (npm run build:console)');
  const index = () => files.get('index.html');
  const html = {
    200: { description: 'The console (index.html)', contentType: 'text/html', schema: z.string() },
    304: { description: 'If-None-Match matched the ETag' },
    404: { description: 'The console has not been built', schema: ErrorBody },
  };
  return [
    route({
      method: 'GET',
      path: '/console',
      summary: 'The operator console (docs/console.md): index.html, no-cache, a strict CSP; /console/ is the same',
      operationId: 'getConsole',
      requestHeaders: conditionalHeaders,
      auth: 'public',
      handle: (req) => {
        const file = index();
        return file ? answer(req, file) : notBuilt();
      },
      responses: html,
    }),
    route({
      method: 'GET',
      path: '/console/:path*',
      operationId: 'getConsoleFile',
      requestHeaders: conditionalHeaders,
      summary:
        "The console's files (hashed names: cached for a year, immutable) by Accept-Encoding, or index.html for any other " +
        'address without a file extension (a deep link into the app)',
      auth: 'public',
      handle: (req) => {
        const path = req.params.path ?? '';
        const file = files.get(path);
        if (file) return answer(req, file);
        // An address that names a file (assets/x.js, favicon.ico) and is missing is 404; a page is the app.
        if (path.startsWith('assets/') || extname(path) !== '') return errorResponse('not_found', 'Not found');
        const page = index();
        return page ? answer(req, page) : notBuilt();
      },
      responses: {
        ...html,
        200: {
          description: 'A file of the build (its type by extension: JavaScript, CSS, SVG, PNG, icons, fonts, JSON), or index.html for a deep link',
          content: Object.fromEntries(
            [...Object.values(TYPES), 'application/octet-stream'].map((type) => [type.split(';')[0]!, type.includes('json') ? z.unknown() : z.string()]),
          ),
        },
        404: { description: 'No such file (an address with a file extension or under assets/), or the console has not been built', schema: ErrorBody },
      },
    }),
  ];
}

export { consoleRoutes };
