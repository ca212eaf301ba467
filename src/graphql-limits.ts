import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import {
  getNamedType,
  GraphQLError,
  isInputObjectType,
  isNonNullType,
  TokenKind,
  typeFromAST,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ParseOptions,
  type Source,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { Parser } from 'graphql/language/parser.js';
import type { Plugin } from 'graphql-yoga';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import type { Config } from './config.js';
import type { LimitRule } from './rate-limit/index.js';
import type { Services } from './services.js';

/**
 * What one GraphQL operation may ask for (docs/security.md, "GraphQL and /graphql"). Fixed, not
 * configurable: every REST operation is checked against them at start-up, so lowering one could
 * only break a route.
 */
export const GRAPHQL_LIMITS = {
  depth: 8,
  aliases: 30,
  tokens: 5000,
  cost: 5000,
  /** What a paged list without `limit`/`first` counts as: the largest page a service hands out. */
  pageSize: 200,
  /** A field that hashes a password (login, register, changePassword): one per operation. */
  passwordCost: 3000,
  /** Operations refused by these limits per client address and minute; then every /graphql request waits for a 429. */
  refusedPerMinute: 30,
} as const;

/** The /graphql rate limits per client address, checked before the body is read (src/app.ts). */
export function graphqlRateRules(config: Config): { requests: LimitRule; refused: LimitRule } {
  return {
    requests: { name: 'graphql', points: config.rateLimits.graphqlPerMinute, durationSeconds: 60 },
    refused: { name: 'graphql-refused', points: GRAPHQL_LIMITS.refusedPerMinute, durationSeconds: 60 },
  };
}

/** Counts every operation refused by the limits against its address's budget of refusals. */
export function refusalPenaltyPlugin(services: Services): Plugin<object, { ip: string }> {
  const { refused } = graphqlRateRules(services.config);
  return {
    onResultProcess({ result, serverContext }) {
      const results = Array.isArray(result) ? result : [result];
      const hit = results.some((one) => 'errors' in one && one.errors?.some((error) => error.extensions?.code === QUERY_TOO_COMPLEX));
      if (hit) return services.rateLimits.penalise(refused, serverContext.ip);
    },
  };
}

export const QUERY_TOO_COMPLEX = 'query_too_complex';

/** Every refusal is an ordinary GraphQL error with a code, whichever limit it hit. */
function tooComplex(message: string): GraphQLError {
  return new GraphQLError(message.replace(/^Syntax Error: /, ''), { extensions: { code: QUERY_TOO_COMPLEX } });
}

/** graphql-armor reports through these callbacks: the error is re-raised with our code. */
const armorCallbacks = () => ({
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(tooComplex(error.message))],
});

/** Depth and alias limits as validation rules (they do not depend on variables, so yoga may cache them). */
export function limitRules(): ValidationRule[] {
  return [
    maxDepthRule({ n: GRAPHQL_LIMITS.depth, flattenFragments: true, ...armorCallbacks() }),
    maxAliasesRule({ n: GRAPHQL_LIMITS.aliases, ...armorCallbacks() }),
  ];
}

/** Braces, brackets and parentheses open at once: far above any real query, far below a stack overflow. */
const MAX_NESTING = 64;
const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * graphql-js's parser with its own `maxTokens`, and a nesting count on the same tokens: the parser
 * recurses once per level, so a 3,000-deep selection would overflow the stack long before its
 * 5,001st token. graphql-armor's max-tokens does the token count by wrapping the lexer in a Proxy,
 * which made a refused 5,000-token flood cost 10x the CPU of this (bench/README.md, "Abuse").
 */
class LimitedParser extends Parser {
  private nesting = 0;

  constructor(source: string | Source, options?: ParseOptions) {
    super(source, { ...options, maxTokens: GRAPHQL_LIMITS.tokens });
  }

  override advanceLexer(): void {
    super.advanceLexer();
    const kind = this._lexer.token.kind;
    if (OPENING.has(kind)) {
      if (++this.nesting > MAX_NESTING) throw tooComplex(`Nesting limit of ${MAX_NESTING} exceeded.`);
    } else if (CLOSING.has(kind)) {
      this.nesting--;
    }
  }
}

/** yoga's parse function for /graphql: the token and nesting limits while parsing. */
export function parseWithLimits(source: string | Source, options?: ParseOptions): DocumentNode {
  try {
    return new LimitedParser(source, options).parseDocument();
  } catch (error) {
    // graphql-js says "Syntax Error: Document contains more that 5000 tokens. Parsing aborted."
    if (error instanceof GraphQLError && /contains more that \d+ tokens/.test(error.message)) {
      throw tooComplex(`Token limit of ${GRAPHQL_LIMITS.tokens} exceeded.`);
    }
    throw error;
  }
}

/**
 * A field costs 1 plus its children; a paged field (`limit` or `first` argument) costs its children
 * once per row it may return, so `receipts(limit: 200)` costs 200 receipts, and a field taking a list of
 * `ids` (`nodes`) once per id. A field can declare a
 * higher own cost in its extensions (`cost`): password hashing does.
 */
const estimator: ComplexityEstimator = ({ field, args, childComplexity }) => {
  const own = typeof field.extensions?.cost === 'number' ? field.extensions.cost : 1;
  // `nodes(ids:)` reads one object per id: 30 aliases of 100 ids must cost what 30 pages of 100 rows cost.
  if (Array.isArray(args.ids)) return own + Math.max(1, args.ids.length) * childComplexity;
  const paged = field.args.some((arg) => arg.name === 'limit' || arg.name === 'first');
  if (!paged) return own + childComplexity;
  const rows = (args.limit ?? args.first ?? GRAPHQL_LIMITS.pageSize) as number;
  return own + Math.max(1, rows) * childComplexity;
};

/** The operation's cost with these variables, or the GraphQL error that refuses it. */
export function costRefusal(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName?: string | null,
): GraphQLError | null {
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      variables: variables ?? {},
      ...(operationName && { operationName }),
      estimators: [estimator],
    });
  } catch (error) {
    // Variables the operation refuses: the same error execution would give.
    if (error instanceof GraphQLError) return error;
    throw error;
  }
  if (cost <= GRAPHQL_LIMITS.cost) return null;
  return tooComplex(
    `Query cost ${cost} exceeds the limit of ${GRAPHQL_LIMITS.cost} (a list costs its limit/first argument times its fields; one password check per request)`,
  );
}

/** The cost limit for /graphql: checked before execution, with the request's variables. */
export function costLimitPlugin(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refused = costRefusal(args.schema, args.document, args.variableValues ?? undefined, args.operationName);
      if (refused) setResultAndStopExecution({ errors: [refused] });
    },
  };
}

/**
 * Start-up check for a prepared (REST) operation: the same depth, alias and cost limits, with the
 * worst variables a route can send (a paged list at its largest page).
 */
export function checkPreparedOperation(schema: GraphQLSchema, document: DocumentNode, name: string): void {
  const errors = [...validate(schema, document, limitRules())];
  const definition = document.definitions.find((d) => d.kind === 'OperationDefinition' && d.name?.value === name);
  if (!errors.length && definition?.kind === 'OperationDefinition') {
    const placeholders: Record<string, unknown> = {};
    for (const variable of definition.variableDefinitions ?? []) {
      const type = typeFromAST(schema, variable.type as never);
      if (!type || !isNonNullType(type)) continue;
      const named = getNamedType(type);
      placeholders[variable.variable.name.value] = isInputObjectType(named) || named.name === 'JSON' ? {} : named.name === 'Int' ? 1 : 'x';
    }
    const refused = costRefusal(schema, document, placeholders, name);
    if (refused) errors.push(refused);
  }
  if (errors.length) throw new Error(`operation ${name} exceeds the GraphQL limits: ${errors.map((e) => e.message).join('; ')}`);
}
