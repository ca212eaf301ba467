// GET /api/sdk/v2/cookie-declaration (docs/scanner.md, "Cookie declaration"): the table for the operator's
// privacy page, public and cacheable like the v2 config (same key, origin, allowance, ETag/304, Cache-Control).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { headerValue } from '../../src/http/headers.js';
import { CATEGORIES } from '../../src/scanner/catalogue.js';
import type { CookieDeclaration } from '../../src/scanner/declaration.js';
import { route, type RouteDef } from '../route.js';
import { ifNoneMatch } from '../schemas.js';
import { chosenAnswer, CONFIG_CACHE_CONTROL, frozenAnswers, SdkError, type ConfigAnswers } from './sdk.js';

const DeclaredItem = z.object({
  name: z.string().describe('cookie name or storage key; a listed prefix the scan saw nothing under keeps its *'),
  kind: z.enum(['cookie', 'storage']),
  category: z.enum(CATEGORIES),
  vendor: z.string().nullable(),
  description: z.string().nullable().describe('from the cookie catalogue (Open Cookie Database, in English)'),
  party: z.enum(['first', 'third', 'both']).nullable().describe('null when the scan did not see it'),
  lifetime: z.string().describe('"session", "2 years", "persistent" (localStorage); empty when the scan did not see it'),
  where: z.array(z.string()).describe('cookie domains or storage areas'),
  seen: z.boolean().describe('the latest finished scan saw it; false: only listed in the purpose’s cookies'),
});

const CookieDeclarationBody = z
  .object({
    projectId: z.string(),
    version: z.object({ id: z.string(), number: z.number().int() }).describe('the live version'),
    locale: z.string().describe('as the v2 config chooses it: the exact tag, then its language, then the default locale'),
    dir: z.enum(['ltr', 'rtl']),
    scan: z
      .object({ id: z.string(), finishedAt: z.string(), reportHash: z.string().nullable() })
      .nullable()
      .describe('the latest finished scan the table comes from; null before the first'),
    purposes: z.array(
      z.object({ key: z.string(), name: z.string(), description: z.string(), required: z.boolean(), items: z.array(DeclaredItem) }),
    ),
    unassigned: z.array(DeclaredItem).describe('seen by the scan but listed in no purpose’s cookies'),
  })
  .meta({ id: 'CookieDeclaration' });

// One set of frozen answers per (version, scan, locale, language variance): compressed once, like the config's.
const answers = new Map<string, ConfigAnswers>();
const MAX_ANSWERS = 512;

function declarationAnswers(data: CookieDeclaration): ConfigAnswers {
  const { variesByLanguage, ...declaration } = data;
  const key = `${data.version.id} ${data.scan?.id ?? ''} ${data.locale} ${variesByLanguage ? 'a' : 'l'}`;
  let found = answers.get(key);
  if (!found) {
    const body = Buffer.from(JSON.stringify(declaration));
    const etag = `"${createHash('sha256').update(body).digest('hex')}"`;
    found = frozenAnswers(body, etag, {
      ETag: etag,
      'Cache-Control': CONFIG_CACHE_CONTROL,
      ...(variesByLanguage && { Vary: 'Origin, Accept-Language' }),
    });
    if (answers.size >= MAX_ANSWERS) answers.delete(answers.keys().next().value!);
    answers.set(key, found);
  }
  return found;
}

export const declarationRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/sdk/v2/cookie-declaration',
    summary:
      'SDK v2: the cookie declaration for the operator’s privacy page: the live version’s purposes (in the locale) with the cookies ' +
      'and storage keys the latest finished scan saw, and those listed in no purpose. Key, origin, CORS, rate limit, ETag/304 and ' +
      'Cache-Control as the v2 config; the SDK fills a `data-consent-declaration` element with it (docs/scanner.md)',
    auth: 'publishableKey',
    operation: 'SdkCookieDeclaration',
    requestHeaders: z.object({
      ...ifNoneMatch,
      'Accept-Language': z.string().optional().describe('Picks the locale when `locale` is not given'),
    }),
    queryParams: z.object({
      locale: z.string().optional().describe('BCP 47 tag; exact tag, then language, then the default locale (never an error)'),
      key: z.string().optional().describe('For pages without the SDK: the publishable key (the SDK sends it as Bearer)'),
    }),
    variables: ({ query, headers }) => ({ key: query.key, locale: query.locale, acceptLanguage: headerValue(headers['accept-language']) }),
    respond: (data: { sdkCookieDeclaration: CookieDeclaration }, req) => chosenAnswer(declarationAnswers(data.sdkCookieDeclaration), req.headers),
    responses: {
      200: { description: 'The declaration in the locale', schema: CookieDeclarationBody },
      304: { description: 'If-None-Match matched the ETag' },
      401: { description: 'invalid_key', schema: SdkError },
      403: { description: 'revoked_key or origin_not_allowed', schema: SdkError },
      404: { description: 'no_published_version', schema: SdkError },
      429: { description: 'rate_limited (Retry-After, X-RateLimit-*); the config allowance', schema: SdkError },
    },
  }),
];
