// Every answer a test receives from a test server is checked against the OpenAPI document (this module wraps the
// global fetch when it is first imported: test/helpers/server.ts imports it, so every test file that starts a
// server has it, in both vitest projects): the operation (method + path template), the status, the media
// type, a JSON body against its schema (JSON Schema 2020-12, ajv), and for an answer the service accepted (2xx),
// the request's JSON body, query and headers against what the operation documents. An undocumented answer
// makes `fetch` reject, so the test that received it fails with the route, status and the document's complaint.
// The document is built in-process from the route table, the same function the server serves, once per worker;
// each validator is compiled once, on first use.
// A test that sends malformed requests on purpose (test/routes-property.test.ts) marks them with
// HOSTILE_REQUEST_HEADER: the check strips the header before the request leaves and skips the request-side checks
// for it (a service may accept and ignore a stray body), but still checks the ANSWER against the document.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

const STATE = Symbol.for('consent-service.openapi-conformance');
interface State {
  /** Origins of the test servers (startTestServer registers them): other addresses (webhook receivers) are not ours. */
  origins: Set<string>;
  checker?: Promise<Checker>;
}
const state: State = ((globalThis as Record<symbol, State>)[STATE] ??= { origins: new Set() });

/** Answers from this origin are checked against the document (until `forgetServer`). */
export function checkAnswersOf(url: string): void {
  state.origins.add(new URL(url).origin);
}
export function forgetServer(url: string): void {
  state.origins.delete(new URL(url).origin);
}

/** Marks a deliberately malformed request: stripped before sending; its answer is checked, the request is not. */
export const HOSTILE_REQUEST_HEADER = 'x-test-hostile-request';

type Json = Record<string, any>;
/** What the test sent: its body is read from `init` and never consumed here. */
interface SentRequest {
  url: string;
  method: string;
  headers: Headers;
}
interface PathMatcher {
  template: string;
  regex: RegExp;
  names: string[];
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
const mediaTypeOf = (header: string | null) => (header ?? '').split(';')[0]!.trim().toLowerCase();
// A range in the document (text/*, */*) covers a family of media types.
const covers = (documented: string, actual: string) => {
  const type = mediaTypeOf(documented);
  return type === actual || type === '*/*' || (type.endsWith('/*') && actual.startsWith(type.slice(0, -1)));
};
// Not in the document on purpose: /graphql is described by its own schema (schema/schema.graphql); /metrics is for
// the scraper only and never hinted at (the ordinary 404 without its token, docs/operations.md).
const NOT_DOCUMENTED_HERE = new Set(['/graphql', '/metrics']);
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');

class Checker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  // Query strings and headers arrive as text: `limit=5` is an integer to the schema.
  private readonly coercing = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, coerceTypes: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly matchers: PathMatcher[];

  constructor(private readonly doc: Json) {
    this.ajv.addSchema(doc, 'openapi.json');
    this.coercing.addSchema(doc, 'openapi.json');
    // Fixed paths before templated ones, one-segment parameters before the multi-segment ones (the router's order).
    this.matchers = Object.keys(doc.paths)
      .map((template) => {
        const names: string[] = [];
        const multi = new Set(
          Object.values(doc.paths[template] as Json)
            .flatMap((op: Json) => op.parameters ?? [])
            .filter((p: Json) => p.in === 'path' && p['x-multi-segment'])
            .map((p: Json) => p.name as string),
        );
        const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, name: string) => {
          names.push(name);
          return multi.has(name) ? '(.+)' : '([^/]+)';
        });
        return { template, regex: new RegExp(`^${source}$`), names, rank: names.length + multi.size * 100 };
      })
      .sort((a, b) => a.rank - b.rank);
  }

  private validator(ajv: Ajv2020, ...parts: string[]): ValidateFunction {
    const ref = `openapi.json#/${pointer(...parts)}`;
    const key = `${ajv === this.ajv ? 'strict' : 'coercing'} ${ref}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = ajv.compile({ $ref: ref });
      this.validators.set(key, validate);
    }
    return validate;
  }

  match(method: string, pathname: string): { operation?: Json; template?: string; params: Record<string, string> } {
    const path = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
    for (const matcher of this.matchers) {
      const found = matcher.regex.exec(path);
      if (!found) continue;
      const params = Object.fromEntries(matcher.names.map((name, i) => [name, found[i + 1]!]));
      return { operation: this.doc.paths[matcher.template][method.toLowerCase()], template: matcher.template, params };
    }
    return { params: {} };
  }

  /** The problems of one exchange, or [] when the document describes it. */
  async problems(request: SentRequest, requestBody: string | undefined, response: Response, hostile = false): Promise<string[]> {
    const url = new URL(request.url);
    if (NOT_DOCUMENTED_HERE.has(url.pathname)) return [];
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const { operation, template } = this.match(method, url.pathname);
    // Addresses and methods no route has: the router's generic 404 and 405 (the description says so).
    if (!template) return response.status === 404 ? [] : [`no path of the document matches ${url.pathname}`];
    if (!operation) return response.status === 405 || response.status === 404 ? [] : [`the document has no ${method} operation on ${template}`];
    const op = operation;
    const status = String(response.status);
    const documented = op.responses[status] ?? op.responses[`${status[0]}XX`] ?? op.responses.default;
    if (!documented) return [`status ${status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`];

    const problems: string[] = [];
    const type = mediaTypeOf(response.headers.get('content-type'));
    const bodyless = request.method === 'HEAD' || response.status === 204 || response.status === 304 || response.headers.get('content-length') === '0';
    if (!bodyless && type) {
      const types = Object.keys(documented.content ?? {});
      const documentedType = types.find((t) => mediaTypeOf(t) === type) ?? types.find((t) => covers(t, type));
      if (!documentedType) {
        problems.push(`media type ${type} is not documented for ${status} (documented: ${types.join(', ') || 'no body'})`);
      } else if (isJson(type)) {
        const text = await response.clone().text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          problems.push(`the ${type} body is not JSON: ${text.slice(0, 200)}`);
        }
        const validate = this.validator(this.ajv, 'paths', template!, method.toLowerCase(), 'responses', status, 'content', documentedType, 'schema');
        if (body !== undefined && !validate(body)) problems.push(`the body does not match the ${status} schema: ${this.ajv.errorsText(validate.errors)}; body: ${text.slice(0, 500)}`);
      }
    }
    // A request the service accepted must be one the document allows: a generated client can send it.
    // (Not for a request marked hostile: it is malformed on purpose; only its answer must be documented.)
    if (response.ok && !hostile) problems.push(...this.requestProblems(request, requestBody, url, method, template!, op));
    return problems;
  }

  private requestProblems(request: SentRequest, body: string | undefined, url: URL, method: string, template: string, op: Json): string[] {
    const problems: string[] = [];
    const at = ['paths', template, method.toLowerCase()];
    (op.parameters ?? []).forEach((parameter: Json, index: number) => {
      if (parameter.in !== 'query' && parameter.in !== 'header') return;
      const value = parameter.in === 'query' ? url.searchParams.get(parameter.name) : request.headers.get(parameter.name);
      if (value === null) {
        if (parameter.required) problems.push(`the request has no ${parameter.in} parameter ${parameter.name}, which the document requires`);
        return;
      }
      const validate = this.validator(this.coercing, ...at, 'parameters', String(index), 'schema');
      if (!validate(value)) problems.push(`${parameter.in} parameter ${parameter.name}=${value} does not match: ${this.coercing.errorsText(validate.errors)}`);
    });
    const requestType = mediaTypeOf(request.headers.get('content-type'));
    if (body === undefined || body === '') {
      if (op.requestBody?.required) problems.push('the request has no body, which the document requires');
      return problems;
    }
    if (!op.requestBody) return [...problems, 'the request has a body, which the document does not describe'];
    const types = Object.keys(op.requestBody.content);
    const documentedType = types.find((t) => mediaTypeOf(t) === requestType) ?? types.find((t) => covers(t, requestType));
    if (!documentedType) return [...problems, `request media type ${requestType || '(none)'} is not documented (documented: ${types.join(', ')})`];
    if (isJson(requestType)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return [...problems, 'the request body is not JSON'];
      }
      const validate = this.validator(this.ajv, ...at, 'requestBody', 'content', documentedType, 'schema');
      if (!validate(parsed)) problems.push(`the request body does not match its schema: ${this.ajv.errorsText(validate.errors)}; body: ${body.slice(0, 500)}`);
    }
    return problems;
  }
}

async function checker(): Promise<Checker> {
  return (state.checker ??= (async () => {
    const [{ buildOpenApi, openApiRoute }, { allRoutes }, { loadConfig }] = await Promise.all([
      import('../../rest/openapi.js'),
      import('../../rest/routes/index.js'),
      import('../../src/config.js'),
    ]);
    const routes = [...allRoutes(new Date()), openApiRoute(() => '')];
    return new Checker(buildOpenApi(routes, { version: loadConfig().version }) as Json);
  })());
}

/** Wraps global fetch once per worker (importing this module does it: test/helpers/server.ts imports it); a no-op for addresses that are not test servers. */
export function installConformanceCheck(): void {
  const original = globalThis.fetch as typeof fetch & { [STATE]?: true };
  if (original[STATE]) return;
  const checked = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request: SentRequest =
      input instanceof Request
        ? { url: input.url, method: (init?.method ?? input.method).toUpperCase(), headers: new Headers(init?.headers ?? input.headers) }
        : { url: String(input), method: (init?.method ?? 'GET').toUpperCase(), headers: new Headers(init?.headers) };
    const hostile = request.headers.has(HOSTILE_REQUEST_HEADER);
    if (hostile) {
      request.headers.delete(HOSTILE_REQUEST_HEADER);
      init = { ...init, headers: request.headers }; // init's headers replace a Request's own
    }
    if (!state.origins.has(new URL(request.url).origin) || request.method === 'OPTIONS') return original(input, init);
    const sent = init?.body ?? undefined;
    // A Request carries its own body (openapi-fetch sends one): read a copy of it.
    const body =
      typeof sent === 'string'
        ? sent
        : sent instanceof URLSearchParams
          ? sent.toString()
          : sent === undefined && input instanceof Request && input.body
            ? await input.clone().text()
            : undefined;
    if (body !== undefined && sent instanceof URLSearchParams && !request.headers.has('content-type')) {
      request.headers.set('content-type', 'application/x-www-form-urlencoded');
    }
    const response = await original(input, init);
    const problems = await (await checker()).problems(request, body, response, hostile);
    if (problems.length) {
      await response.body?.cancel().catch(() => {});
      const { template } = (await checker()).match(request.method === 'HEAD' ? 'GET' : request.method, new URL(request.url).pathname);
      const url = new URL(request.url);
      throw new Error(
        `OpenAPI conformance: ${request.method} ${url.pathname}${url.search} (${template ? `documented path ${template}` : 'no documented path'}) ` +
          `answered ${response.status} ${response.headers.get('content-type') ?? '(no content type)'}, which the document does not describe:\n- ` +
          problems.join('\n- ') +
          '\n(rest/openapi.ts builds the document from the route table; test/helpers/openapi-conformance.ts checks every answer)',
      );
    }
    return response;
  };
  (checked as typeof checked & { [STATE]?: true })[STATE] = true;
  globalThis.fetch = checked as typeof fetch;
}


/** What the check finds wrong with one exchange ([] when the document describes it): for the check's own tests. */
export async function conformanceProblems(request: { url: string; method: string; headers?: HeadersInit }, body: string | undefined, response: Response): Promise<string[]> {
  return (await checker()).problems({ ...request, headers: new Headers(request.headers) }, body, response);
}

installConformanceCheck();
