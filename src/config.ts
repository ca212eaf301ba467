import { createPrivateKey, createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ARTIFACT_CAPS } from './scanner/artifacts.js';
import { findChromium } from './scanner/chromium.js';
import { z } from 'zod';
import type { TrustProxy } from './http/client-address.js';

// An HTTP field name (RFC 9110 token), kept in lower case as node:http gives them.
const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'Must be an HTTP header name')
  .transform((name) => name.toLowerCase());

// Every variable of decisions.md "Configuration", parsed once at start-up.
const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: z.string().url().optional(),
  // A PostgreSQL streaming standby for lists, exports and stats (docs/scaling.md, "Read replicas").
  DATABASE_REPLICA_URL: z.string().url().optional(),
  DATABASE_REPLICA_MAX_LAG_MS: z.coerce.number().int().positive().default(10_000),
  DATA_DIR: z.string().default('./data'),
  // Any value is reported by /api/health; only `production` changes behaviour.
  NODE_ENV: z.string().default('development'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  REDIS_URL: z.string().optional(),
  BILLING_PROVIDER: z.enum(['mock', 'stripe']).default('mock'),
  BILLING_WEBHOOK_SECRET: z.string().optional(),
  STRIPE_SECRET_KEY: z.string().optional(),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().positive().default(5000),
  GIT_COMMIT: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  GRAPHQL_INTROSPECTION: z.enum(['true', 'false']).optional(),
  // Origins whose pages may call /graphql from a browser (CORS); none by default: same origin only.
  GRAPHQL_CORS_ORIGINS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const origins = (value ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
      return origins.map((entry) => {
        const url = URL.canParse(entry) ? new URL(entry) : null;
        // As a browser sends it: http(s)://host[:port], no path, no wildcard.
        if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username || entry.includes('*')) {
          ctx.addIssue({ code: 'custom', message: `${entry} is not an origin (scheme://host[:port])` });
        }
        return url?.origin ?? entry;
      });
    }),
  // Rate limits (decisions.md "Auth" defaults).
  RATE_LIMIT_REGISTER_PER_HOUR: z.coerce.number().int().positive().default(10),
  RATE_LIMIT_LOGIN_PER_IP: z.coerce.number().int().positive().default(20),
  // Failed logins: per (e-mail, client address), and a wider ceiling per e-mail over all addresses
  // so a flood from one address never locks the owner out from another (docs/security.md).
  RATE_LIMIT_LOGIN_FAILED_PER_EMAIL_AND_ADDRESS: z.coerce.number().int().positive().default(5),
  RATE_LIMIT_LOGIN_FAILED_PER_EMAIL: z.coerce.number().int().positive().default(50),
  // SDK limits count per publishable key and client address: one client exhausts only its own allowance.
  RATE_LIMIT_SDK_CONFIG_PER_MINUTE: z.coerce.number().int().positive().default(600),
  RATE_LIMIT_SDK_CONSENT_PER_MINUTE: z.coerce.number().int().positive().default(120),
  // Every /graphql request, per client address: a flood of refused queries still costs parsing.
  RATE_LIMIT_GRAPHQL_PER_MINUTE: z.coerce.number().int().positive().default(600),
  // Database unavailable (extensions.md section 1): the longest wait for a connection, and the receipts that may wait.
  DATABASE_WAIT_MS: z.coerce.number().int().positive().default(2000),
  RECEIPT_QUEUE_LIMIT: z.coerce.number().int().positive().default(2000),
  RATE_LIMIT_SDK_CONSENT_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().positive().default(600),
  // addMember calls per organization per hour: each one says whether an e-mail has an account (extensions.md section 9).
  RATE_LIMIT_MEMBER_ADDITIONS_PER_HOUR: z.coerce.number().int().positive().default(20),
  RATE_LIMIT_ORGANIZATIONS_PER_HOUR: z.coerce.number().int().positive().default(20),
  // scrypt cost as log2(N): 17 is OWASP's N=2^17; tests lower it for speed.
  PASSWORD_HASH_LOG_N: z.coerce.number().int().min(10).max(20).default(17),
  SESSION_PURGE_INTERVAL_MS: z.coerce.number().int().positive().default(3_600_000),
  // Prometheus /metrics (docs/operations.md): its own listener on HOST, and/or the public port behind a bearer token.
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_TOKEN: z.string().min(16, 'Must be at least 16 characters').optional(),
  // Where the visitor is, as a CDN or proxy resolved it (docs/jurisdictions.md): header names, case-insensitive.
  GEO_COUNTRY_HEADER: headerName.optional(),
  GEO_REGION_HEADER: headerName.optional(),
  // The site scanner (docs/scanner.md): scans run at once per instance (0: this instance only queues them),
  // scans per organization per 24 h, bytes one page visit may receive, the browser (else chromium on PATH).
  SCANNER_CONCURRENCY: z.coerce.number().int().min(0).max(16).default(1),
  SCANNER_DAILY_SCANS_PER_ORG: z.coerce.number().int().positive().default(50),
  SCANNER_MAX_PAGE_BYTES: z.coerce.number().int().positive().default(20 * 1024 * 1024),
  // How long a visit keeps watching cookie and storage writes after the network went idle, on each load it
  // judges (tags that write late: docs/scanner.md "Dwell window").
  SCANNER_DWELL_MS: z.coerce.number().int().min(0).max(20_000).default(3000),
  // A scan's wall-clock budget per run: past it the scan is failed and not tried again (a page that holds the
  // browser); the biggest report a scan may store.
  SCANNER_SCAN_BUDGET_MS: z.coerce.number().int().min(1000).default(30 * 60_000),
  SCANNER_MAX_REPORT_BYTES: z.coerce.number().int().min(100_000).default(5 * 1024 * 1024),
  // What a scan's screenshots and HAR files may take together (docs/scanner.md "Artifacts"); 0 keeps none.
  SCANNER_MAX_ARTIFACT_BYTES: z.coerce.number().int().min(0).default(ARTIFACT_CAPS.scanBytes),
  // How long a worker's claim on a scan holds without its heartbeat (renewed every third of it): a worker that
  // dies hands its scan on this long after its last renewal (docs/scanner.md "Queue and workers").
  SCANNER_LEASE_SECONDS: z.coerce.number().int().min(3).max(3600).default(90),
  CHROMIUM_PATH: z.string().optional(),
  // The receipts ledger (docs/ledger.md): the Ed25519 key that signs checkpoints (PKCS#8 PEM, inline or in a file;
  // required in production), older public keys still published after a rotation, and how often receipts are sealed.
  LEDGER_SIGNING_KEY: z.string().optional(),
  LEDGER_SIGNING_KEY_FILE: z.string().optional(),
  LEDGER_PUBLIC_KEYS_FILE: z.string().optional(),
  LEDGER_SEAL_INTERVAL_MS: z.coerce.number().int().min(100).max(50_000).default(5000),
  // Trust X-Forwarded-For only when proxies we control set it: `true` (one proxy) or their number.
  // IAB TCF (docs/tcf.md): the base of the IAB's GVL v3 files, Google's AC providers list, the shortest refresh.
  TCF_GVL_URL: z.string().url().default('https://vendor-list.consensu.org/v3/'),
  TCF_AC_PROVIDERS_URL: z.string().url().default('https://storage.googleapis.com/tcfac/additional-consent-providers.csv'),
  TCF_GVL_MIN_REFRESH_S: z.coerce.number().int().min(1).default(300),
  TRUST_PROXY: z
    .string()
    .regex(/^(true|false|\d{1,2})$/, 'Must be true, false or the number of proxies in front of the service')
    .default('false'),
});

export type Config = ReturnType<typeof loadConfig>;

const packageVersion: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version;

export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = envSchema.safeParse(cleaned);
  if (!result.success) {
    // One readable line per bad variable instead of a zod dump at start-up.
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  const parsed = result.data;
  const production = parsed.NODE_ENV === 'production';
  if (parsed.DATABASE_REPLICA_URL && !parsed.DATABASE_URL) {
    // A standby of what? The embedded database has no replicas.
    throw new Error('Invalid configuration: DATABASE_REPLICA_URL needs DATABASE_URL (a replica of the embedded database does not exist)');
  }
  if (production && parsed.BILLING_PROVIDER === 'mock') {
    // The mock provider's checkout page grants any plan to anyone: never in production.
    throw new Error('BILLING_PROVIDER=mock is not allowed in production (NODE_ENV=production): set BILLING_PROVIDER=stripe');
  }
  const ledgerSigningKey = readLedgerSigningKey(parsed.LEDGER_SIGNING_KEY, parsed.LEDGER_SIGNING_KEY_FILE);
  if (production && !ledgerSigningKey) {
    // Checkpoints signed by a key nobody kept prove nothing: production never makes one up.
    throw new Error(
      'LEDGER_SIGNING_KEY or LEDGER_SIGNING_KEY_FILE is required in production (NODE_ENV=production): the Ed25519 private key ' +
        '(PKCS#8 PEM) that signs receipt ledger checkpoints; make one with `openssl genpkey -algorithm ed25519 -out ledger-key.pem` (docs/ledger.md)',
    );
  }
  return {
    port: parsed.PORT,
    host: parsed.HOST,
    databaseUrl: parsed.DATABASE_URL,
    databaseReplicaUrl: parsed.DATABASE_REPLICA_URL,
    databaseReplicaMaxLagMs: parsed.DATABASE_REPLICA_MAX_LAG_MS,
    dataDir: parsed.DATA_DIR,
    nodeEnv: parsed.NODE_ENV,
    production,
    publicBaseUrl: (parsed.PUBLIC_BASE_URL ?? `http://${parsed.HOST}:${parsed.PORT}`).replace(/\/$/, ''),
    /** PUBLIC_BASE_URL was given (the OpenAPI document's `servers` names it; otherwise its own origin). */
    publicBaseUrlSet: parsed.PUBLIC_BASE_URL !== undefined,
    redisUrl: parsed.REDIS_URL,
    billingProvider: parsed.BILLING_PROVIDER,
    // Generated per start in development, as decisions.md says.
    billingWebhookSecret: parsed.BILLING_WEBHOOK_SECRET ?? randomBytes(32).toString('hex'),
    stripeSecretKey: parsed.STRIPE_SECRET_KEY,
    webhookRetryBaseMs: parsed.WEBHOOK_RETRY_BASE_MS,
    gitCommit: parsed.GIT_COMMIT ?? null,
    logLevel: parsed.LOG_LEVEL,
    introspection: parsed.GRAPHQL_INTROSPECTION ? parsed.GRAPHQL_INTROSPECTION === 'true' : !production,
    graphqlCorsOrigins: parsed.GRAPHQL_CORS_ORIGINS,
    // Hops from the right of X-Forwarded-For (src/http/client-address.ts); false = the socket address.
    trustProxy: (parsed.TRUST_PROXY === 'true' ? 1 : parsed.TRUST_PROXY === 'false' ? false : Number(parsed.TRUST_PROXY)) as TrustProxy,
    databaseWaitMs: parsed.DATABASE_WAIT_MS,
    receiptQueueLimit: parsed.RECEIPT_QUEUE_LIMIT,
    version: packageVersion,
    passwordHashLogN: parsed.PASSWORD_HASH_LOG_N,
    sessionPurgeIntervalMs: parsed.SESSION_PURGE_INTERVAL_MS,
    metricsPort: parsed.METRICS_PORT,
    metricsToken: parsed.METRICS_TOKEN,
    // Without a country header there is no location; the region header alone means nothing.
    geo: { countryHeader: parsed.GEO_COUNTRY_HEADER, regionHeader: parsed.GEO_COUNTRY_HEADER ? parsed.GEO_REGION_HEADER : undefined },
    scanner: {
      concurrency: parsed.SCANNER_CONCURRENCY,
      dailyScansPerOrg: parsed.SCANNER_DAILY_SCANS_PER_ORG,
      maxPageBytes: parsed.SCANNER_MAX_PAGE_BYTES,
      dwellMs: parsed.SCANNER_DWELL_MS,
      visitTimeoutMs: 30_000,
      scanBudgetMs: parsed.SCANNER_SCAN_BUDGET_MS,
      maxReportBytes: parsed.SCANNER_MAX_REPORT_BYTES,
      // Bytes per screenshot and per HAR file (constants), and per scan for all of them.
      artifacts: { ...ARTIFACT_CAPS, scanBytes: parsed.SCANNER_MAX_ARTIFACT_BYTES },
      leaseMs: parsed.SCANNER_LEASE_SECONDS * 1000,
      // Found once at start-up; undefined: POST /scans answers 503 scanner_unavailable.
      chromiumPath: findChromium({ ...env, CHROMIUM_PATH: parsed.CHROMIUM_PATH }),
    },
    ledger: {
      /** Undefined outside production when none is configured: src/ledger/keys.ts makes one in DATA_DIR. */
      signingKey: ledgerSigningKey,
      /** Retired public keys that stay published (rotation). */
      publicKeys: parsed.LEDGER_PUBLIC_KEYS_FILE ? readPublicKeys(parsed.LEDGER_PUBLIC_KEYS_FILE) : [],
      sealIntervalMs: parsed.LEDGER_SEAL_INTERVAL_MS,
    },
    tcf: {
      // Always ends in '/': the file names are resolved against it.
      gvlUrl: parsed.TCF_GVL_URL.replace(/\/?$/, '/'),
      acProvidersUrl: parsed.TCF_AC_PROVIDERS_URL,
      minRefreshSeconds: parsed.TCF_GVL_MIN_REFRESH_S,
    },
    rateLimits: {
      registerPerHour: parsed.RATE_LIMIT_REGISTER_PER_HOUR,
      loginPerIp: parsed.RATE_LIMIT_LOGIN_PER_IP,
      loginFailedPerEmailAndAddress: parsed.RATE_LIMIT_LOGIN_FAILED_PER_EMAIL_AND_ADDRESS,
      loginFailedPerEmail: parsed.RATE_LIMIT_LOGIN_FAILED_PER_EMAIL,
      sdkConfigPerMinute: parsed.RATE_LIMIT_SDK_CONFIG_PER_MINUTE,
      sdkConsentPerMinute: parsed.RATE_LIMIT_SDK_CONSENT_PER_MINUTE,
      graphqlPerMinute: parsed.RATE_LIMIT_GRAPHQL_PER_MINUTE,
      sdkConsentPerAddressPerMinute: parsed.RATE_LIMIT_SDK_CONSENT_PER_ADDRESS_PER_MINUTE,
      memberAdditionsPerHour: parsed.RATE_LIMIT_MEMBER_ADDITIONS_PER_HOUR,
      organizationsPerHour: parsed.RATE_LIMIT_ORGANIZATIONS_PER_HOUR,
    },
  };
}

/** The ledger's signing key from LEDGER_SIGNING_KEY (PEM; `\n` may stand for newlines) or the file it names. */
function readLedgerSigningKey(inline: string | undefined, file: string | undefined): KeyObject | undefined {
  if (inline && file) throw new Error('Invalid configuration: set LEDGER_SIGNING_KEY or LEDGER_SIGNING_KEY_FILE, not both');
  if (!inline && !file) return undefined;
  const name = inline ? 'LEDGER_SIGNING_KEY' : 'LEDGER_SIGNING_KEY_FILE';
  let pem: string;
  try {
    pem = inline ? inline.replace(/\\n/g, '\n') : readFileSync(file!, 'utf8');
  } catch (error) {
    throw new Error(`Invalid configuration: ${name}: cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`an ${key.asymmetricKeyType} key`);
    return key;
  } catch (error) {
    throw new Error(`Invalid configuration: ${name}: not an Ed25519 private key in PEM (${(error as Error).message})`);
  }
}

/** LEDGER_PUBLIC_KEYS_FILE: a JWK set (`{ keys: [...] }`, e.g. an older /.well-known/consent-ledger-keys.json) or PEM public keys. */
function readPublicKeys(file: string): KeyObject[] {
  try {
    const text = readFileSync(file, 'utf8');
    const keys = text.trimStart().startsWith('{')
      ? (JSON.parse(text) as { keys: import('node:crypto').JsonWebKey[] }).keys.map((jwk) => createPublicKey({ key: jwk, format: 'jwk' }))
      : (text.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? []).map((pem) => createPublicKey(pem));
    if (!keys.length || keys.some((key) => key.asymmetricKeyType !== 'ed25519')) throw new Error('expected Ed25519 public keys');
    return keys;
  } catch (error) {
    throw new Error(`Invalid configuration: LEDGER_PUBLIC_KEYS_FILE: ${(error as Error).message}`);
  }
}
