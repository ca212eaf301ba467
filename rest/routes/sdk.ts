import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { IncomingMessage } from 'node:http';
import { AppError } from '../../src/errors.js';
import { clientAddress } from '../../src/http/client-address.js';
import { COMPRESS_MIN_BYTES, pickEncoding, precompress, varyWithEncoding, type Encoding } from '../../src/http/compression.js';
import { bearerToken, headerValue } from '../../src/http/headers.js';
import { htmlPageHeaders } from '../../src/http/html-headers.js';
import type { Config } from '../../src/config.js';
import type { Services } from '../../src/services.js';
import { geoHeaderNames, geoHeaders } from '../../src/sdk/location.js';
import { sdkConfigFromMemory, type SdkConfig } from '../../src/sdk/config.js';
import { sdkConfigV2FromMemory, type SdkConfigV2 } from '../../src/sdk/config-v2.js';
import { consentBody } from '../../src/sdk/consent.js';
import { IDEMPOTENCY_KEY } from '../../src/sdk/idempotency.js';
import { forgetBody, identifyBody } from '../../src/subjects/links.js';
import { isStorableText } from '../../src/storable-text.js';
import { publishedTcfSettings } from '../../src/tcf/settings.js';
import { fromGraphQLError } from '../errors.js';
import { route, type RestRequest, type RestResponse, type RouteDef } from '../route.js';
import { conditionalHeaders, ErrorBody, ifNoneMatch, pick, sessionErrors, timestamp, validationError } from '../schemas.js';

// --- Allowed origins (operators) ---

const AllowedOrigins = z
  .object({ enforce: z.boolean(), origins: z.array(z.string().describe('scheme://host[:port], or https://*.example.com')) })
  .meta({ id: 'AllowedOrigins' });

const originsPath = '/api/platform/projects/:projectId/allowed-origins';

const originRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: originsPath,
    summary: 'Allowed origins of the SDK API for this project (Viewer or above)',
    auth: 'session',
    operation: 'AllowedOrigins',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: data.allowedOrigins }),
    responses: { 200: { description: 'Allowed origins', schema: AllowedOrigins }, ...sessionErrors },
  }),
  route({
    method: 'PUT',
    path: originsPath,
    summary: 'Set enforcement and/or replace the origin list (Admin or above); origins are stored normalised',
    auth: 'session',
    operation: 'UpdateAllowedOrigins',
    requestBody: z.object({ enforce: z.boolean().optional(), origins: z.array(z.string()).max(100).optional() }),
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, ['enforce', 'origins']) }),
    respond: (data) => ({ status: 200, body: data.updateAllowedOrigins }),
    responses: { 200: { description: 'Allowed origins', schema: AllowedOrigins }, ...validationError, ...sessionErrors },
  }),
];

// --- The SDK API (publishable key) ---

export const SdkError = ErrorBody.describe('{error, code} with an SDK code');
const SdkDecisionBody = z.object({ versionId: z.string(), consentHash: z.string(), choices: z.record(z.string(), z.boolean()), createdAt: timestamp });
export const CONFIG_CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=600';

const SdkConfigBody = z.object({
  projectId: z.string(),
  version: z.object({ id: z.string(), number: z.number().int(), publishedAt: timestamp, contentHash: z.string(), consentHash: z.string() }),
  config: z.object({ purposes: z.array(z.unknown()), categories: z.array(z.unknown()), notice: z.record(z.string(), z.string()) }),
});

/**
 * A version's answers (200 in each content-coding, and 304), made once per instance: keyed by the
 * cached config object, so they go when the version leaves the cache. The body's fields are picked in
 * the contract's order, so the operation's data and the hot path's domain object give the same bytes.
 */
export interface ConfigAnswers {
  etag: string;
  ok: Readonly<Record<Encoding, RestResponse>>;
  notModified: RestResponse;
}

/**
 * The frozen answers for one body. Over 1 KB the body is compressed here, once (brotli and gzip at their
 * highest levels), so a request only picks one: the hot path never compresses. The ETag is the same for
 * every coding: v1's is fixed by the contract as `"<contentHash>"` (decisions.md), and v2's is the SHA-256
 * of the body it documents. RFC 9110 would give each coding its own (or a weak) tag; here
 * `Vary: Accept-Encoding` makes caches store one answer per coding, so a cache never serves a coding its
 * client did not ask for, and a 304 (which carries no body) is right for any coding the client holds.
 */
export function frozenAnswers(body: Buffer, etag: string, headers: Record<string, string>): ConfigAnswers {
  const compressed = body.length > COMPRESS_MIN_BYTES ? precompress(body) : undefined;
  // The CORS layer's `Vary: Origin` is replaced by the route's own, so it names Origin too. The key travels in
  // `Authorization`, not the URL, and the answer is `public`: without `Authorization` in Vary, a browser or a
  // shared cache would hand one project's config to a page that asked with another project's key.
  const vary = `${headers.Vary ?? 'Origin'}, Authorization`;
  const caching = Object.freeze({ ...headers, Vary: compressed ? varyWithEncoding(vary) : vary });
  const ok = (encoding: Encoding): RestResponse => {
    const coded = compressed && encoding !== 'identity';
    return Object.freeze({
      status: 200,
      body: compressed ? compressed[encoding] : body,
      headers: Object.freeze({ ...caching, 'Content-Type': 'application/json; charset=utf-8', ...(coded && { 'Content-Encoding': encoding }) }),
    });
  };
  // Shared by every request for this version: frozen, so nothing downstream can change them.
  return Object.freeze({
    etag,
    ok: Object.freeze({ identity: ok('identity'), br: ok('br'), gzip: ok('gzip') }),
    notModified: Object.freeze({ status: 304, headers: caching }),
  });
}

export type ConfigHeaders = Partial<Record<'if-none-match' | 'accept-encoding', string | string[]>>;

/** The 304 when If-None-Match matches, else the 200 in the coding the client prefers. */
export function chosenAnswer(answers: ConfigAnswers, headers: ConfigHeaders): RestResponse {
  if (etagMatches(headers['if-none-match'], answers.etag)) return answers.notModified;
  return answers.ok[pickEncoding(headerValue(headers['accept-encoding']))];
}

const configAnswers = new WeakMap<object, ConfigAnswers>();

function answersFor(config: ConfigData): ConfigAnswers {
  const key = config.config as object;
  let answers = configAnswers.get(key);
  if (answers === undefined) {
    const { id, number, publishedAt, contentHash, consentHash } = config.version;
    const body = Buffer.from(
      JSON.stringify({ projectId: config.projectId, version: { id, number, publishedAt, contentHash, consentHash }, config: config.config }),
    );
    const etag = `"${contentHash}"`;
    answers = frozenAnswers(body, etag, { ETag: etag, 'Cache-Control': CONFIG_CACHE_CONTROL });
    configAnswers.set(key, answers);
  }
  return answers;
}

/** The operation's data, or the same from memory (`publishedAt` is then a Date, serialised alike). */
type ConfigData = Omit<SdkConfig, 'version'> & { version: Omit<SdkConfig['version'], 'publishedAt'> & { publishedAt: Date | string } };

function configResponse(config: ConfigData, headers: ConfigHeaders): RestResponse {
  return chosenAnswer(answersFor(config), headers);
}

/**
 * The config hot path (docs/architecture.md): when the key and project are in memory, the same
 * domain checks and rate limit run without a request context or the operation, and the answer
 * is the version's cached bytes. Anything else (first request, `key` query, refusal) runs SdkConfig.
 */
function configFromMemory(req: IncomingMessage, services: Services): Promise<RestResponse> | undefined {
  const config = sdkConfigFromMemory(services, {
    token: bearerToken(req.headers.authorization),
    origin: headerValue(req.headers.origin),
    address: clientAddress(req, services.config.trustProxy),
  });
  return config?.then(
    (data) => configResponse(data, req.headers),
    (error: unknown) => {
      if (error instanceof AppError) return fromGraphQLError(error, { exposeInternal: false });
      throw error;
    },
  );
}

// --- SDK API v2 config: per locale, ETag = SHA-256 of the body ---

const SdkConfigV2Body = SdkConfigBody.extend({
  locale: z.string().describe('The locale served: the exact tag, then its language, then the default locale'),
  locales: z.array(z.string()).describe('Every locale of the version, the default first'),
  dir: z.enum(['ltr', 'rtl']),
  ui: z.record(z.string(), z.string()).describe('UI strings in the locale: built in, overridden by translations.<locale>.ui'),
  experience: z.object({
    privacyPolicyUrl: z.string(),
    reconsentAfterDays: z.number().int(),
    gpc: z.object({ optOutPurposes: z.array(z.string()) }),
    googleConsentMode: z.object({ enabled: z.boolean(), signals: z.record(z.string(), z.array(z.string())) }),
    cookies: z.record(z.string(), z.array(z.string())),
    theme: z.object({ colorScheme: z.enum(['light', 'dark', 'auto']), borderRadius: z.number().int() }),
    gpp: z
      .object({
        mspaCoveredTransaction: z.boolean(),
        mspaMode: z.enum(['none', 'opt-out-option', 'service-provider']),
        sections: z.enum(['national', 'state']).optional().describe('state: the US state’s own GPP section in place of usnat where one exists; absent: national'),
      })
      .describe('The GPP settings (MSPA), defaults filled in'),
    tcf: publishedTcfSettings.optional().describe('IAB TCF settings as published, with the pinned vendorListVersion (docs/tcf.md); absent: no TCF'),
    integrations: z
      .array(z.object({ type: z.string(), signals: z.record(z.string(), z.array(z.string())) }))
      .optional()
      .describe('Vendor consent APIs the SDK drives, every signal listed (docs/integrations.md); absent when the version has none'),
    cookieDomain: z.string().optional().describe('Where the SDK shares its state cookie across subdomains; absent when not set'),
  }),
  jurisdiction: z
    .object({ code: z.string().describe('DE, US, US-CA, …'), rule: z.string().nullable().describe('The id of the matching rule; null when none matched') })
    .nullable()
    .describe('Where the visitor is (GEO_COUNTRY_HEADER / GEO_REGION_HEADER, or the override); null without a usable location'),
  mode: z.enum(['opt-in', 'opt-out', 'notice', 'none']).describe('The consent mode of the matching rule (opt-in when none matched)'),
});

// The IAB's GVL v3 shapes (docs/tcf.md), as much as a client relies on; the IAB may add fields.
const gvlItem = z.looseObject({ id: z.number().int(), name: z.string(), description: z.string() });
const gvlMap = (item: z.ZodType) => z.record(z.string(), item);
const SdkTcfVendorListBody = z
  .object({
    vendorListVersion: z.number().int().describe('The GVL version the live consent version pinned'),
    tcfPolicyVersion: z.number().int(),
    language: z.string().describe('ISO 639-1 language of the texts (en when the IAB’s translation is not held): the TC string’s ConsentLanguage'),
    purposes: gvlMap(gvlItem),
    specialPurposes: gvlMap(gvlItem),
    features: gvlMap(gvlItem),
    specialFeatures: gvlMap(gvlItem),
    stacks: gvlMap(gvlItem.extend({ purposes: z.array(z.number().int()), specialFeatures: z.array(z.number().int()) })),
    dataCategories: gvlMap(gvlItem),
    standardTexts: z
      .looseObject({ features: z.string().optional().describe('Introduces the features: shown above them as it is, without controls') })
      .describe('The IAB’s standard texts of the pinned list (GVL `standardTexts`, TCF v2.4), in `language` where its file has them, else English; {} when the list has none'),
    vendors: gvlMap(z.looseObject({ id: z.number().int(), name: z.string(), purposes: z.array(z.number().int()) })).describe(
      'The live version’s vendors as the GVL declares them (purposes, legitimate interests, special purposes, features, retention, data categories, storage disclosures, privacy URLs)',
    ),
    googleAtps: z
      .array(z.object({ id: z.number().int(), name: z.string(), policyUrl: z.string(), domains: z.array(z.string()) }))
      .describe('The live version’s Google Additional Consent providers'),
  })
  .meta({ id: 'SdkTcfVendorList' });

/** The operation's data or the domain object, flattened to the same fields. */
interface ConfigV2Data {
  projectId: string;
  version: ConfigData['version'];
  locale: string;
  locales: string[];
  dir: string;
  config: object;
  ui: object;
  experience: object;
  variesByLanguage: boolean;
  jurisdiction: { code: string; rule: string | null } | null;
  mode: string;
  overridden: boolean;
}

// Keyed by the localized config (one object per version and locale), then by how the answer varies
// (language, override) and the location code: about 310 codes at most, and the cap is a backstop.
const configV2Answers = new WeakMap<object, Map<string, ConfigAnswers>>();
const MAX_V2_ANSWERS_PER_LOCALE = 1024;

function answersV2For(data: ConfigV2Data, geo: Config['geo']): ConfigAnswers {
  let byKind = configV2Answers.get(data.config);
  if (!byKind) configV2Answers.set(data.config, (byKind = new Map()));
  const key = (data.variesByLanguage ? 'a' : 'l') + (data.overridden ? '!' : '') + (data.jurisdiction?.code ?? '');
  let answers = byKind.get(key);
  if (answers === undefined) {
    const { id, number, publishedAt, contentHash, consentHash } = data.version;
    const { projectId, locale, locales, dir, config, ui, experience, jurisdiction, mode } = data;
    const body = Buffer.from(
      JSON.stringify({
        projectId,
        version: { id, number, publishedAt, contentHash, consentHash },
        locale,
        locales,
        dir,
        config,
        ui,
        experience,
        jurisdiction,
        mode,
      }),
    );
    const etag = `"${createHash('sha256').update(body).digest('hex')}"`;
    // The CORS layer's `Vary: Origin` is replaced by the route's own, so it names Origin too.
    const vary = ['Origin', ...(data.variesByLanguage ? ['Accept-Language'] : []), ...geoHeaderNames(geo)];
    answers = frozenAnswers(body, etag, {
      ETag: etag,
      // An overridden answer depends on the operator's session: no cache keeps it.
      'Cache-Control': data.overridden ? 'no-store' : CONFIG_CACHE_CONTROL,
      ...(vary.length > 1 && { Vary: vary.join(', ') }),
    });
    if (byKind.size >= MAX_V2_ANSWERS_PER_LOCALE) byKind.delete(byKind.keys().next().value!);
    byKind.set(key, answers);
  }
  return answers;
}

function configV2Response(data: ConfigV2Data, headers: ConfigHeaders, geo: Config['geo']): RestResponse {
  return chosenAnswer(answersV2For(data, geo), headers);
}

// Fields copied by name: object rest/spread compiles to a for-in helper that cost the hot path ~5 µs a request
// (CPU profile of bench/sdk-config.ts, v2 case).
const flattenV2 = ({ projectId, version, variesByLanguage, localized: l, placement, overridden }: SdkConfigV2): ConfigV2Data => ({
  projectId,
  version,
  variesByLanguage,
  jurisdiction: placement.jurisdiction,
  mode: placement.mode,
  overridden,
  locale: l.locale,
  locales: l.locales,
  dir: l.dir,
  config: l.config,
  ui: l.ui,
  experience: l.experience,
});

/** `?locale=` only (anything else, such as `key`, takes the full path); undefined when there is none. */
function localeQuery(url: string): { locale?: string } | undefined {
  const query = url.indexOf('?');
  if (query < 0) return {};
  // The SDK's own form, `?locale=<tag>`, without building URLSearchParams.
  if (url.startsWith('locale=', query + 1) && !/[&+%]/.test(url.slice(query))) return { locale: url.slice(query + 8) };
  const params = new URLSearchParams(url.slice(query + 1));
  for (const name of params.keys()) if (name !== 'locale') return undefined;
  const locale = params.get('locale');
  // Text the database cannot hold is refused by the full path (400), as on the first request.
  if (locale !== null && !isStorableText(locale)) return undefined;
  return locale === null ? {} : { locale };
}

function configV2FromMemory(req: IncomingMessage, services: Services): Promise<RestResponse> | undefined {
  const query = localeQuery(req.url!);
  if (!query) return undefined;
  const geo = services.config.geo;
  const location = geo.countryHeader ? geoHeaders(geo, (name) => req.headers[name]) : undefined;
  const config = sdkConfigV2FromMemory(
    services,
    { token: bearerToken(req.headers.authorization), origin: headerValue(req.headers.origin), address: clientAddress(req, services.config.trustProxy) },
    { locale: query.locale, acceptLanguage: headerValue(req.headers['accept-language']), country: location?.country, region: location?.region },
  );
  return config?.then(
    (data) => configV2Response(flattenV2(data), req.headers, geo),
    (error: unknown) => {
      if (error instanceof AppError) return fromGraphQLError(error, { exposeInternal: false });
      throw error;
    },
  );
}

/** If-None-Match: `*`, one tag or a list, weak (`W/`) or strong, compared weakly as RFC 9110 says for GET. */
export function etagMatches(header: string | string[] | undefined, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true; // what the SDK and browsers send back
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

const sdkApiRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/sdk/v1/config',
    summary: 'SDK: the latest published consent config (Bearer publishable key; ETag and 304)',
    auth: 'publishableKey',
    operation: 'SdkConfig',
    queryParams: z.object({ key: z.string().optional().describe('For compatibility only; the SDK sends the key as Bearer') }),
    requestHeaders: conditionalHeaders,
    variables: ({ query }) => ({ key: query.key }),
    // The contract's config errors have no 400 and an unknown key is 401: `?key=%00` is an unknown key (ignored
    // beside a Bearer key, as any `key` is), not extensions.md section 9's 400 for query text.
    unstorableParamsNameNothing: true,
    respond: (data: { sdkConfig: ConfigData }, req) => configResponse(data.sdkConfig, req.headers),
    fromMemory: configFromMemory,
    responses: {
      200: { description: 'Published config', schema: SdkConfigBody },
      304: { description: 'If-None-Match matched the ETag' },
      401: { description: 'invalid_key', schema: SdkError },
      403: { description: 'revoked_key or origin_not_allowed', schema: SdkError },
      404: { description: 'no_published_version', schema: SdkError },
      429: { description: 'rate_limited (Retry-After, X-RateLimit-*)', schema: SdkError },
    },
  }),
  route({
    method: 'GET',
    path: '/api/sdk/v2/config',
    summary:
      'SDK v2: the latest published config with its texts in one locale, UI strings and experience settings (Bearer publishable key; ' +
      'ETag = SHA-256 of the body, 304; without `locale`, Accept-Language decides and the answer has Vary: Accept-Language). ' +
      '`jurisdiction` and `mode` come from the location a CDN resolved (GEO_COUNTRY_HEADER, GEO_REGION_HEADER, named in Vary) and the ' +
      'version’s jurisdiction rules (docs/jurisdictions.md)',
    auth: 'publishableKey',
    consoleSession: true,
    operation: 'SdkConfigV2',
    requestHeaders: z.object({
      ...ifNoneMatch,
      'Accept-Language': z.string().optional().describe('Picks the locale when `locale` is not given'),
    }),
    queryParams: z.object({
      locale: z.string().optional().describe('BCP 47 tag; exact tag, then language, then the default locale (never an error)'),
      key: z.string().optional().describe('For compatibility only; the SDK sends the key as Bearer'),
      jurisdiction: z
        .string()
        .optional()
        .describe(
          'Testing: a location code (DE, US, US-CA) used instead of the CDN’s, answered with Cache-Control: no-store. Honoured only in ' +
            'development or with an operator session (a session bearer or the console’s cookie, the key then in `key`); ignored otherwise. ' +
            'A value that is not a location code means an unknown location',
        ),
    }),
    variables: ({ query, headers }) => ({
      key: query.key,
      locale: query.locale,
      acceptLanguage: headerValue(headers['accept-language']),
      jurisdiction: query.jurisdiction,
    }),
    respond: (data: { sdkConfigV2: ConfigV2Data }, req) => configV2Response(data.sdkConfigV2, req.headers, req.services.config.geo),
    fromMemory: configV2FromMemory,
    fromMemoryReadsQuery: true,
    responses: {
      200: { description: 'Published config in the locale', schema: SdkConfigV2Body },
      304: { description: 'If-None-Match matched the ETag' },
      401: { description: 'invalid_key', schema: SdkError },
      403: { description: 'revoked_key or origin_not_allowed', schema: SdkError },
      404: { description: 'no_published_version', schema: SdkError },
      429: { description: 'rate_limited (Retry-After, X-RateLimit-*); one allowance with v1 config', schema: SdkError },
    },
  }),
  route({
    method: 'GET',
    path: '/api/sdk/v2/tcf/vendor-list',
    summary:
      'SDK v2, IAB TCF: what the live version’s TCF banner shows: its vendors and Google ATPs from the Global Vendor List version it ' +
      'pinned, with the IAB’s purpose, feature, stack and data category texts in the locale’s language (Bearer publishable key; key, ' +
      'origin and rate limit as the v2 config; ETag = SHA-256 of the body, 304; cacheable by a CDN). docs/tcf.md',
    auth: 'publishableKey',
    operation: 'SdkTcfVendorList',
    requestHeaders: conditionalHeaders,
    queryParams: z.object({
      locale: z.string().optional().describe('BCP 47 tag; resolved as the v2 config does (exact tag, language, default locale), then its language'),
      key: z.string().optional().describe('For compatibility only; the SDK sends the key as Bearer'),
    }),
    variables: ({ query }) => ({ key: query.key, locale: query.locale }),
    respond: (data: { sdkTcfVendorList: object }, req) => {
      const body = Buffer.from(JSON.stringify(data.sdkTcfVendorList));
      const etag = `"${createHash('sha256').update(body).digest('hex')}"`;
      return chosenAnswer(frozenAnswers(body, etag, { ETag: etag, 'Cache-Control': CONFIG_CACHE_CONTROL }), req.headers);
    },
    responses: {
      200: { description: 'The vendor list subset in the locale’s language', schema: SdkTcfVendorListBody },
      304: { description: 'If-None-Match matched the ETag' },
      401: { description: 'invalid_key', schema: SdkError },
      403: { description: 'revoked_key or origin_not_allowed', schema: SdkError },
      404: {
        description: 'no_published_version, tcf_not_enabled (the live version does not use TCF) or tcf_vendor_list_missing (its pinned GVL is not held)',
        schema: SdkError,
      },
      429: { description: 'rate_limited (Retry-After, X-RateLimit-*); one allowance with the config', schema: SdkError },
    },
  }),
  route({
    method: 'GET',
    path: '/api/sdk/v2/decision',
    summary:
      'SDK v2: the latest decision recorded for the installation in X-Consent-Installation (Bearer publishable key; key, origin ' +
      'and rate limit as the config); for an installation signed in with identify, the newest decision of that person across their ' +
      'installations (docs/subjects.md). The SDK calls it when a decision may have been made elsewhere (the hosted preferences page).',
    auth: 'publishableKey',
    operation: 'SdkDecision',
    requestHeaders: z.object({
      'X-Consent-Installation': z
        .string()
        .regex(/^[A-Za-z0-9_-]{8,64}$/)
        .describe("The visitor's installation id (the SDK's own, as on its receipts); missing or malformed: 400 invalid_body"),
    }),
    variables: ({ headers }) => ({ installationId: headerValue(headers['x-consent-installation']) }),
    respond: (data) => ({ status: 200, body: { decision: data.sdkDecision }, headers: { 'Cache-Control': 'no-store' } }),
    responses: {
      200: {
        description: 'The latest decision, or null',
        schema: z.object({
          decision: SdkDecisionBody.nullable(),
        }),
      },
      400: { description: 'invalid_body: X-Consent-Installation missing or not 8 to 64 of [A-Za-z0-9_-]', schema: SdkError },
      401: { description: 'invalid_key', schema: SdkError },
      403: { description: 'revoked_key or origin_not_allowed', schema: SdkError },
      429: { description: 'rate_limited (Retry-After, X-RateLimit-*); the config allowance', schema: SdkError },
    },
  }),
  route({
    method: 'POST',
    path: '/api/sdk/v2/identify',
    summary:
      'SDK v2: sign the installation in as the person a subject token names (an HS256 JWT from the operator’s backend: `sub`, `iat`, ' +
      '`exp` at most 24 h ahead, `aud` = the project id; docs/subjects.md). Only HMAC(project pepper, sub) is kept. Answers the decision ' +
      'the installation now follows: the newest of its own and the subject’s, across devices. Key and origin as the consent POST, ' +
      'and its per key and address allowance',
    auth: 'publishableKey',
    operation: 'SdkIdentify',
    requestBody: identifyBody,
    bodyLimit: 16 * 1024,
    variables: ({ body }) => ({ input: body }),
    respond: (data) => ({ status: 200, body: data.sdkIdentify, headers: { 'Cache-Control': 'no-store' } }),
    responses: {
      200: { description: 'Signed in; the decision the installation follows, or null', schema: z.object({ decision: SdkDecisionBody.nullable() }) },
      400: { description: 'invalid_body', schema: SdkError },
      401: {
        description: 'invalid_key, or invalid_subject_token (bad, forged, expired, wrong audience, exp over 24 h ahead, or no subject secret): nothing changed',
        schema: SdkError,
      },
      403: { description: 'revoked_key or origin_not_allowed', schema: SdkError },
      413: { description: 'payload_too_large (over 16 KiB)', schema: SdkError },
      429: { description: 'rate_limited (Retry-After, X-RateLimit-*)', schema: SdkError },
    },
  }),
  route({
    method: 'POST',
    path: '/api/sdk/v2/forget',
    summary: 'SDK v2: sign the installation out (sign-out): it follows its own decisions again. Key, origin and allowance as identify',
    auth: 'publishableKey',
    operation: 'SdkForget',
    requestBody: forgetBody,
    bodyLimit: 16 * 1024,
    variables: ({ body }) => ({ input: body }),
    respond: (data) => ({ status: 200, body: data.sdkForget }),
    responses: {
      200: { description: 'Signed out (also when it was not signed in)', schema: z.object({ ok: z.literal(true) }) },
      400: { description: 'invalid_body', schema: SdkError },
      401: { description: 'invalid_key', schema: SdkError },
      403: { description: 'revoked_key or origin_not_allowed', schema: SdkError },
      413: { description: 'payload_too_large (over 16 KiB)', schema: SdkError },
      429: { description: 'rate_limited (Retry-After, X-RateLimit-*)', schema: SdkError },
    },
  }),
  route({
    method: 'POST',
    path: '/api/sdk/v1/consent',
    summary: 'SDK: record an append-only consent receipt (Bearer publishable key)',
    auth: 'publishableKey',
    operation: 'RecordConsent',
    requestBody: consentBody,
    requestHeaders: z.object({
      'Idempotency-Key': z
        .string()
        .regex(IDEMPOTENCY_KEY)
        .optional()
        .describe(
          'Optional; 1 to 255 visible ASCII characters (U+0021 to U+007E), e.g. a UUID made with the receipt. Within 24 hours a repeat ' +
            'with the same key in the project answers the first 201 again (same id and createdAt) and stores, seals and sends to ' +
            'webhooks one receipt; the same key with another body (compared as the parsed body’s canonical JSON) is 409 ' +
            'idempotency_conflict; a malformed key is 400 invalid_idempotency_key. Only a stored receipt is remembered: after an ' +
            'error the same key may be sent again (docs/sdk-api.md, "Idempotency-Key")',
        ),
    }),
    bodyLimit: 16 * 1024,
    variables: ({ body, headers }) => ({ input: body, idempotencyKey: headerValue(headers['idempotency-key']) }),
    respond: (data) => ({ status: 201, body: data.recordConsent }),
    responses: {
      201: { description: 'Stored, or stored earlier under the same Idempotency-Key (the first answer)', schema: z.object({ ok: z.literal(true), id: z.string(), createdAt: timestamp }) },
      400: { description: 'invalid_body, invalid_version, consent_hash_mismatch or invalid_idempotency_key', schema: SdkError },
      401: { description: 'invalid_key', schema: SdkError },
      403: { description: 'revoked_key or origin_not_allowed', schema: SdkError },
      409: { description: 'idempotency_conflict: the Idempotency-Key was used with another body in the last 24 hours', schema: SdkError },
      413: { description: 'payload_too_large (over 16 KiB)', schema: SdkError },
      429: { description: 'rate_limited (Retry-After, X-RateLimit-*)', schema: SdkError },
    },
  }),
];

// --- The hosted preferences page (the built SDK files: sdk-files.ts) ---

const PAGE_STYLE = 'body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:2rem;color:#1f2328}main{max-width:40rem;margin:auto}';

function page(status: number, title: string, inner: string, script = ''): RestResponse {
  const nonce = randomBytes(16).toString('base64');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<main><h1>${title}</h1>${inner}</main>
${script.replaceAll('<script>', `<script nonce="${nonce}">`)}
</body>
</html>
`;
  return {
    status,
    body: html,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      ...htmlPageHeaders(
        `default-src 'none'; script-src 'self' 'nonce-${nonce}'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'`,
      ),
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
    },
  };
}

/**
 * The hosted page embeds nothing but the key; everything else comes from the config endpoint, through the SDK.
 * With `#i=<installationId>` in the address (the site's SDK puts it there; a fragment never reaches a server),
 * the page shows and records the site's decision: it adopts the installation's latest decision through
 * /api/sdk/v2/decision and the SDK files the new receipt under that installation, so the site's SDK finds it
 * at its next init (docs/sdk-api.md, "Hosted preferences for a site").
 */
function preferencesPage(key: string): RestResponse {
  // SDK v2, in the visitor's language (the page's own lang is fixed). The SDK files receipts under the
  // installation in #i= by itself on this page, and without one under an id of this project's own (never one
  // shared by every operator's page on this origin: sdk/src/v2/index.ts). The script below only lets the
  // dialog start from the site's latest decision.
  const script = `<script src="/sdk/v2/consent.js"></script>
<script>
(function () {
  var KEY = ${JSON.stringify(key).replaceAll('<', '\\u003c')};
  var match = /^#i=([A-Za-z0-9_-]{8,64})$/.exec(location.hash);
  var site = match && match[1];
  function start() {
    ConsentSDK.init({ publicKey: KEY, locale: (navigator.languages || [])[0] || navigator.language }).then(function (c) {
      var button = document.getElementById('open');
      document.getElementById('status').textContent = site
        ? 'Choose which purposes you allow, then save. Your choices apply to the site you came from.'
        : 'Choose which purposes you allow, then save. Your choices are kept in this browser for this site.';
      button.hidden = false;
      button.addEventListener('click', function () { c.showPreferences(); });
      c.showPreferences();
    }).catch(function () {
      document.getElementById('status').textContent = 'Your preferences cannot be shown right now.';
    });
  }
  if (!site) return start();
  // Put the site's latest decision where the SDK reads it (this project's slot), so the dialog starts from it.
  var auth = { Authorization: 'Bearer ' + KEY };
  Promise.all([
    fetch('/api/sdk/v1/config', { headers: auth }).then(function (r) { return r.ok ? r.json() : null; }),
    fetch('/api/sdk/v2/decision', { headers: { Authorization: auth.Authorization, 'X-Consent-Installation': site }, cache: 'no-store' })
      .then(function (r) { return r.ok ? r.json() : null; }),
  ]).then(function (answers) {
    var config = answers[0], found = answers[1] && answers[1].decision;
    var slot = config && 'consent:' + config.projectId;
    if (!slot) return;
    if (!found) return localStorage.removeItem(slot);
    localStorage.setItem(slot, JSON.stringify({
      consentHash: found.consentHash,
      versionNumber: found.versionId === config.version.id ? config.version.number : 0,
      choices: found.choices,
      decidedAt: found.createdAt,
    }));
  }).catch(function () {}).then(start);
})();
</script>`;
  return page(
    200,
    'Privacy preferences',
    '<p id="status">Loading your preferences…</p><button id="open" type="button" hidden>Change preferences</button>',
    script,
  );
}

const preferencesRoute = route({
  method: 'GET',
  path: '/preferences',
  summary: 'Hosted preferences page for a publishable key (HTML)',
  auth: 'public',
  operation: 'PublishableKeyStatus',
  queryParams: z.object({ key: z.string().describe('pk_live_ publishable key') }),
  variables: ({ query }) => ({ key: query.key ?? '' }),
  unstorableParamsNameNothing: true, // `?key=%00` is an unknown key: the 401 HTML page
  respond: (data: { publishableKeyStatus: 'ACTIVE' | 'REVOKED' | 'UNKNOWN' }, req) => {
    if (!req.query.key) return page(400, 'Missing key', '<p>This address needs a <code>key</code> parameter with a publishable key.</p>');
    if (data.publishableKeyStatus === 'REVOKED') return page(403, 'Key revoked', '<p>This publishable key has been revoked.</p>');
    if (data.publishableKeyStatus === 'UNKNOWN') return page(401, 'Unknown key', '<p>This publishable key is not known.</p>');
    return preferencesPage(req.query.key);
  },
  responses: {
    200: { description: 'The preferences page', contentType: 'text/html', schema: z.string() },
    400: { description: 'No key given (HTML)', contentType: 'text/html', schema: z.string() },
    401: { description: 'Unknown key (HTML)', contentType: 'text/html', schema: z.string() },
    403: { description: 'Revoked key (HTML)', contentType: 'text/html', schema: z.string() },
  },
});

export const sdkRoutes: RouteDef[] = [
  ...originRoutes,
  ...sdkApiRoutes,
  preferencesRoute,
];
