// Issue 27 (extensions.md section 9): no input causes a 5xx. A property-based test (fast-check) drives every
// route of the OpenAPI document the service generates with path parameters, query strings and bodies made from
// the route's own schemas, mixed with hostile values (U+0000, unpaired surrogates, invalid UTF-8, huge numbers,
// wrong types, very long strings), as an Owner on session routes and with the project's publishable key on SDK
// routes, and asserts that no answer is a 5xx. A failure prints the route, the request and the seed; replay it
// with FC_SEED=<seed> (and FC_RUNS=<n> for a longer search).
//
// Why a schema-to-arbitrary function of our own: zod-fast-check targets zod 3 and fast-check 3 (we have 4 and 4),
// and json-schema-fast-check draws from its own random source (no fast-check shrinking or seeds).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../rest/openapi.js';
import { allRoutes } from '../rest/routes/index.js';
import { PASSWORD, team } from './helpers/fixtures.js';
import { HOSTILE_REQUEST_HEADER } from './helpers/openapi-conformance.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { publishVersion } from './helpers/versions.js';

type Schema = Record<string, any>;
const document = buildOpenApi(allRoutes(new Date()), 'test') as { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, Schema> } };
const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));

const SEED = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31));
// A few runs per route keep both databases within a minute; a failure's seed replays it exactly.
const RUNS = Number(process.env.FC_RUNS ?? 6);

// --- Hostile values ---

/** Text the database cannot hold (most often: the 5xx this test was written for), or that strains a parser. */
const hostileText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\udfff\ud800') },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(5000), '', ' ', '{}', "'; --", '../..', '%00', '\u202e', '🙂', '0', '-1') },
);
/** Values of every other JSON type: wrong types and numbers no column holds. */
const hostileValue = fc.oneof(
  { weight: 2, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, -(2 ** 63), 0.5, -1, 0, true, false, null, [], {}, [null], { a: '\u0000' }) },
);
/** Path segments and query values as sent on the wire: encoded NUL and invalid UTF-8 most often. */
const hostileUrlText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('%00', 'a%00b', '%ED%A0%80', '%FF', '%C0%80') },
  { weight: 1, arbitrary: fc.constantFrom('%2F', '..', 'x'.repeat(3000), '-1', '1e308', '99999999999999999999', '%20', 'null', '') },
);

const encode = (text: string) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '\ufffd'));

// --- JSON Schema (draft 2020-12, as zod renders it) → fast-check arbitrary, each part sometimes hostile ---

function arbitraryOf(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const exact = exactArbitraryOf(schema, depth);
  return fc.oneof({ weight: 5, arbitrary: exact }, { weight: 1, arbitrary: hostileValue });
}

function exactArbitraryOf(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  if (depth > 6) return fc.constant(null);
  if (schema.$ref) return arbitraryOf(document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]!, depth + 1);
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((one: Schema) => arbitraryOf(one, depth + 1)));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type: string) => exactArbitraryOf({ ...schema, type }, depth)));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: Math.max(schema.minimum ?? -1000, -(2 ** 31)), max: Math.min(schema.maximum ?? 1000, 2 ** 31) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'string':
      return stringOf(schema);
    case 'array':
      return fc.array(schema.items ? arbitraryOf(schema.items, depth + 1) : fc.jsonValue({ maxDepth: 1 }), {
        minLength: Math.min(schema.minItems ?? 0, 3),
        maxLength: Math.min(schema.maxItems ?? 3, 3),
      });
    case 'object': {
      const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
      if (!properties.length && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        return fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), hostileText), arbitraryOf(schema.additionalProperties, depth + 1), { maxKeys: 3 });
      }
      const shape = Object.fromEntries(properties.map(([name, property]) => [name, arbitraryOf(property, depth + 1)]));
      // Required keys are usually there (so the request gets past the first check), sometimes not.
      const required = ((schema.required ?? []) as string[]).filter((name) => name in shape);
      return fc.oneof({ weight: 3, arbitrary: fc.record(shape, { requiredKeys: required }) }, { weight: 1, arbitrary: fc.record(shape, { requiredKeys: [] }) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((date) => date.toISOString());
  if (schema.format === 'uri') return fc.webUrl();
  if (schema.format === 'email') return fc.emailAddress();
  // As often hostile as not: a body has few string fields and each route only a few runs.
  return fc.oneof(fc.string({ minLength: Math.min(schema.minLength ?? 0, 40), maxLength: Math.min(schema.maxLength ?? 40, 40) }), hostileText);
}

/** A query value or path segment as sent: made from the schema, encoded, or hostile as it is. */
const urlText = (schema: Schema | undefined, real?: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: real === undefined ? 0 : 3, arbitrary: fc.constant(encode(real ?? '')) },
    { weight: 2, arbitrary: (schema ? exactArbitraryOf(schema, 0) : fc.string({ maxLength: 40 })).map((value) => encode(String(value))) },
    { weight: 2, arbitrary: hostileUrlText },
    { weight: 1, arbitrary: hostileText.map(encode) },
  );

// --- The server and the real ids the path parameters mostly take ---

let server: TestServer;
let ids: Record<string, string>;
let ownerLogin: { email: string; password: string };

beforeAll(async () => {
  server = await startTestServer();
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  const spareKey = await createKey(server, t.owner.token, t.project.id, 'spare');
  const consent = await server.request('GET', `/api/platform/projects/${t.project.id}/consent`, { token: t.owner.token });
  const notifications = await server.request('GET', '/api/platform/notifications', { token: t.owner.token });
  await server.request('POST', '/api/sdk/v1/consent', {
    token: key.secret,
    body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: true }, installationId: 'installation-1' },
  });
  ids = {
    orgId: t.org.id,
    projectId: t.project.id,
    versionId: version.id,
    // DELETE api-keys/:keyId revokes the spare key, never the one the SDK routes use.
    keyId: spareKey.id,
    categoryId: consent.body.configuration?.categories?.[0]?.id ?? 'none',
    purposeId: consent.body.configuration?.purposes?.[0]?.id ?? 'none',
    notificationId: notifications.body.notifications?.[0]?.id ?? 'none',
    provider: 'mock',
    sessionId: 'cs_mock_unknown',
    path: 'index.html',
    key: key.secret,
  };
  ownerLogin = { email: t.owner.email, password: PASSWORD };
});
afterAll(() => server?.close());

/** The real value of a path parameter (`id` is a category, purpose or notification by its path). */
function realParam(path: string, name: string): string | undefined {
  if (name !== 'id') return ids[name];
  if (path.includes('/categories/')) return ids.categoryId;
  if (path.includes('/purposes/')) return ids.purposeId;
  return ids.notificationId;
}

interface Drawn {
  url: string;
  body: unknown;
}

function requestOf(method: string, path: string, op: any): fc.Arbitrary<Drawn> {
  const parameters = (op.parameters ?? []) as { name: string; in: 'path' | 'query'; schema?: Schema }[];
  const pathParts = Object.fromEntries(parameters.filter((p) => p.in === 'path').map((p) => [p.name, urlText(undefined, realParam(path, p.name))]));
  const queryParts = Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name, urlText(p.schema)]));
  const bodySchema = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
  return fc.record({
    params: fc.record(pathParts),
    query: fc.record(queryParts, { requiredKeys: [] }),
    // A route without a documented body may still be sent one (a POST); GET and DELETE are sent none.
    body: bodySchema ? arbitraryOf(bodySchema) : method === 'GET' || method === 'DELETE' ? fc.constant(undefined) : fc.option(hostileValue, { nil: undefined }),
  }).map(({ params, query, body }) => {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] as string);
    const search = Object.entries(query).map(([name, value]) => `${name}=${value}`).join('&');
    return { url: search ? `${filled}?${search}` : filled, body };
  });
}

describe('every documented route, driven from its schema: no 5xx', () => {
  it('the document has the whole route table', () => {
    expect(operations.length).toBeGreaterThan(50);
  });

  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))('%s', async (_, { method, path, op }) => {
    const security = JSON.stringify(op.security ?? []);
    // A session of its own per route: logout and password changes end only that one.
    const token = security.includes('session')
      ? (await server.request('POST', '/api/platform/auth/login', { body: ownerLogin })).body.token
      : security.includes('publishableKey')
        ? ids.key
        : undefined;
    // Without a real session every route would answer 401 and "no 5xx" would prove nothing.
    if (security.includes('session') || security.includes('publishableKey')) expect(token, 'a session or key for the route').toEqual(expect.any(String));
    // Malformed on purpose (a body where none is documented, …): the conformance check skips the request side
    // and checks every answer against the document.
    const headers = { 'X-Consent-Installation': 'installation-1', [HOSTILE_REQUEST_HEADER]: '1' };
    try {
      await fc.assert(
        fc.asyncProperty(requestOf(method, path, op), async ({ url, body }) => {
          const res = await server.request(method, url, { token, headers, ...(body === undefined ? {} : { body }) });
          if (res.status >= 500) throw new Error(`${method} ${url} answered ${res.status}: ${res.text.slice(0, 500)}`);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: false },
      );
    } catch (error) {
      console.error(`${method} ${path}: a 5xx with FC_SEED=${SEED} FC_RUNS=${RUNS}`);
      throw error;
    }
  });
});

describe('bodies are validated as the document says before GraphQL coerces them', () => {
  const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]!) : schema);
  /** Every documented body field that is a list: GraphQL would take one value there as a list of one. */
  const listFields = operations.flatMap(({ method, path, op }) => {
    const schema = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
    const properties = Object.entries((schema && resolve(schema).properties) ?? {}) as [string, Schema][];
    return properties.filter(([, property]) => resolve(property).type === 'array').map(([field, property]) => ({ method, path, op, field, item: resolve(property).items as Schema | undefined }));
  });

  it('POST /scans with urls as one string is 400 validation_failed at urls, not a scan of one page', async () => {
    const token = (await server.request('POST', '/api/platform/auth/login', { body: ownerLogin })).body.token;
    const res = await server.request('POST', `/api/platform/projects/${ids.projectId}/scans`, { token, body: { urls: 'https://example.com/' } });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ error: 'Validation failed', code: 'validation_failed', details: [{ path: ['urls'], message: expect.stringMatching(/expected array/) }] });
    const scans = await server.request('GET', `/api/platform/projects/${ids.projectId}/scans`, { token });
    expect(scans.body.scans).toEqual([]);
  });

  it('one value where any route documents a list is refused 400 at that field, on every such route', async () => {
    expect(listFields.length).toBeGreaterThan(4);
    const token = (await server.request('POST', '/api/platform/auth/login', { body: ownerLogin })).body.token;
    for (const { method, path, op, field, item } of listFields) {
      // One well-formed item, sent as itself instead of a list of it.
      const one = item && resolve(item).type === 'object' ? { name: 'One', key: 'one', purposeKey: 'one', categoryId: 'one' } : 'https://example.com/';
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encode(realParam(path, name) ?? 'none'));
      const sdk = JSON.stringify(op.security ?? []).includes('publishableKey');
      const res = await server.request(method, url, {
        token: sdk ? ids.key : token,
        headers: { 'X-Consent-Installation': 'installation-1', [HOSTILE_REQUEST_HEADER]: '1' },
        body: { [field]: one },
      });
      expect(res.status, `${method} ${url} ${field}: ${res.text}`).toBe(400);
      if (sdk) expect(res.body).toEqual({ error: expect.stringContaining(field), code: 'invalid_body' });
      else expect(res.body.details, `${method} ${url}`).toContainEqual({ path: [field], message: expect.stringMatching(/expected array/) });
    }
  });
});
