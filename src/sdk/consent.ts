import { z } from 'zod';
import type { Services } from '../services.js';
import { canonicalLocale, EXPERIENCE_LIMITS } from '../consent/experience.js';
import { authenticateSdk } from './access.js';
import { sdkCache } from './cache.js';
import { consentHashMismatch, invalidBody, invalidVersion, parseSdkBody } from './errors.js';
import { decisionOf } from '../stats/rollup.js';
import { receiptId } from '../receipts/ids.js';
import { sourceOf } from '../receipts/service.js';
import { receiptWriter } from './receipt-writer.js';
import { checkTcfReceipt, tcfReceiptInput } from '../tcf/tc-string.js';
import { IdempotencyKeyTaken, idempotencyConflict, idempotencyKeyOf, requestHashOf, takenRecently, type Idempotency, type TakenKey } from './idempotency.js';
import { subjectOf } from '../subjects/subject-of.js';

export const MAX_CHOICES = 200;
export const INSTALLATION_ID = /^[A-Za-z0-9_-]{8,64}$/;
/** What the visitor did, as the SDK reports it (issue 16); counted in consent analytics. */
export const RECEIPT_ACTIONS = ['accept_all', 'reject_all', 'custom', 'opt_out', 'gpc'] as const;
export type ReceiptAction = (typeof RECEIPT_ACTIONS)[number];
/** A location code: a country (`DE`), a subdivision (`US-CA`) or a group code such as `US`. */
export const JURISDICTION_CODE = /^[A-Z]{2}(-[A-Z0-9]{1,3})?$/;
export const MAX_GPP_LENGTH = 2048;

/** Issue 45: which SDK sent a receipt, and on what (extensions.md section 13). */
export const SOURCE_SDKS = ['browser', 'core', 'react-native'] as const;
export const SOURCE_PLATFORMS = ['web', 'ios', 'android', 'other'] as const;
export type SourcePlatform = (typeof SOURCE_PLATFORMS)[number];
/** Where a receipt came from, as its SDK says: bounded text of a few safe characters, nothing else accepted. */
export const receiptSource = z
  .object({
    sdk: z.enum(SOURCE_SDKS, { message: `sdk must be one of ${SOURCE_SDKS.join(', ')}` }),
    sdkVersion: z
      .string()
      .regex(/^[A-Za-z0-9.+-]{1,32}$/, 'sdkVersion must be 1 to 32 of [A-Za-z0-9.+-] (a version such as 1.4.0-beta.2)')
      .describe('The SDK package version, e.g. 1.4.0'),
    platform: z.enum(SOURCE_PLATFORMS, { message: `platform must be one of ${SOURCE_PLATFORMS.join(', ')}` }),
    appId: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,128}$/, 'appId must be 1 to 128 of [A-Za-z0-9._-] (a bundle id or package name)')
      .optional()
      .describe('The app’s bundle id or package name, e.g. com.example.shop'),
    appVersion: z
      .string()
      .regex(/^[A-Za-z0-9._+() -]{1,64}$/, 'appVersion must be 1 to 64 of [A-Za-z0-9._+() -]')
      .optional()
      .describe('The app’s version as it shows it, e.g. 2.3.1 (456)'),
  })
  .strict()
  .describe('Where the receipt came from (issue 45): the SDK, its version, the platform and, in apps, the app');
export type ReceiptSource = z.output<typeof receiptSource>;

/** Exactly these fields: anything else (an IP, an e-mail, a user id) is refused, never stored. */
export const consentBody = z
  .object({
    versionId: z.string().min(1).max(64),
    consentHash: z.string().min(1).max(128),
    choices: z
      .record(z.string(), z.boolean())
      .refine((choices) => Object.keys(choices).length <= MAX_CHOICES, `At most ${MAX_CHOICES} choices`),
    installationId: z.string().regex(INSTALLATION_ID, 'installationId must be 8 to 64 of [A-Za-z0-9_-]'),
    timestamp: z.iso.datetime({ offset: true }).optional(),
    sdkVersion: z.string().max(64).optional(),
    // extensions.md section 3: the language the visitor saw (stored in canonical case) and Global Privacy Control.
    locale: z
      .string()
      .max(EXPERIENCE_LIMITS.localeTag)
      .refine((tag) => canonicalLocale(tag) !== undefined, 'locale must be a BCP 47 language tag')
      .transform((tag) => canonicalLocale(tag)!)
      .optional(),
    gpc: z.boolean().optional(),
    // Issue 16: the location code the SDK acted on, what the visitor did, and the GPP string it produced.
    jurisdiction: z
      .string()
      .regex(JURISDICTION_CODE, 'jurisdiction must be a location code such as DE or US-CA')
      .optional()
      .describe('The location code the SDK acted on: a country (DE), a subdivision (US-CA) or US'),
    action: z
      .enum(RECEIPT_ACTIONS, { message: `action must be one of ${RECEIPT_ACTIONS.join(', ')}` })
      .optional()
      .describe('What the visitor did'),
    gpp: z
      .string()
      .max(MAX_GPP_LENGTH, `gpp must be at most ${MAX_GPP_LENGTH} characters`)
      .regex(/^[A-Za-z0-9_~.-]*$/, 'gpp must be a GPP string (characters A-Z a-z 0-9 _ ~ . -)')
      .optional()
      .describe(`The GPP string the SDK produced (at most ${MAX_GPP_LENGTH} of [A-Za-z0-9_~.-])`),
    // Issue 39: the IAB TCF banner's TC string and Google AC string, checked against the version (docs/tcf.md).
    tcf: tcfReceiptInput.optional(),
    source: receiptSource.optional(),
  })
  .strict();

export interface ConsentAck {
  ok: true;
  id: string;
  createdAt: Date;
}

/**
 * Records one append-only receipt. The receipt, its `consent.updated` outbox
 * event and (for a project's first receipt) the go-live notification commit
 * together (src/sdk/receipt-writer.ts) before the caller hears 201. The client's
 * `timestamp` is checked but not stored: `createdAt` is the server's.
 */
export async function recordConsent(
  services: Services,
  caller: { token: string | undefined; origin: string | undefined; address: string },
  input: unknown,
  idempotencyKeyHeader: string | null = null,
): Promise<ConsentAck> {
  const { keyId, project } = await authenticateSdk(services, caller.token, caller.origin);
  const idempotencyKey = idempotencyKeyOf(idempotencyKeyHeader);
  const body = parseSdkBody(consentBody, input); // the REST layer has parsed the same body with it
  const limits = services.config.rateLimits;
  // Per key and client address first: rotating installation ids gets one client no further than
  // its own allowance, and never into a real visitor's (docs/security.md).
  await services.rateLimits.consume(
    { name: 'sdk-consent-address', points: limits.sdkConsentPerAddressPerMinute, durationSeconds: 60 },
    `${keyId}|${caller.address}`,
  );
  await services.rateLimits.consume(
    { name: 'sdk-consent', points: limits.sdkConsentPerMinute, durationSeconds: 60 },
    `${project.projectId}:${body.installationId}`,
  );

  const cache = sdkCache(services);
  const version = await cache.version(body.versionId);
  if (!version || version.projectId !== project.projectId) throw invalidVersion();
  if (body.consentHash !== version.consentHash) throw consentHashMismatch();
  const unknown = Object.keys(body.choices).find((key) => !version.purposes.has(key));
  if (unknown !== undefined) throw invalidBody(`choices: unknown purpose key "${unknown}"`);
  if (body.tcf) checkTcfReceipt(body.tcf, version.tcf);

  // Every purpose of the version is recorded: required ones granted, optional ones as sent (default not granted).
  const choices: Record<string, boolean> = {};
  for (const [key, required] of version.purposes) choices[key] = required || body.choices[key] === true;

  // Made while signed in (docs/subjects.md): the receipt is the person's. One primary-key probe, only in projects
  // that have a subject secret.
  const subjectHash = project.subjects ? await subjectOf(services, project.projectId, body.installationId) : null;
  const receipt = {
    projectId: project.projectId,
    versionId: version.id,
    versionNumber: version.number,
    consentHash: version.consentHash,
    choices,
    installationId: body.installationId,
    sdkVersion: body.sdkVersion ?? null,
    locale: body.locale ?? null,
    gpc: body.gpc ?? null,
    jurisdiction: body.jurisdiction ?? null,
    action: body.action ?? null,
    gpp: body.gpp ?? null,
    tcString: body.tcf?.tcString ?? null,
    addtlConsent: body.tcf?.addtlConsent ?? null,
    // In the documented key order whatever order the SDK sent (the leaf hashes it canonically either way).
    source: sourceOf(body.source),
    subjectHash,
    decision: decisionOf(choices, version.purposes),
    apiKeyId: keyId,
  };
  const write = async (idempotency: Idempotency | null): Promise<ConsentAck> => {
    const createdAt = services.now();
    // The id carries createdAt's millisecond: lookups by id find the receipt's partition from it (src/receipts/ids.ts).
    const id = receiptId(createdAt);
    await receiptWriter(services).write({ ...receipt, id, createdAt, idempotency });
    return { ok: true, id, createdAt };
  };
  if (idempotencyKey === null) return write(null);

  // With a key: the first request's answer for every repeat within 24 hours (docs/sdk-api.md, "Idempotency-Key").
  // The writer takes the key in the receipt's own statement (never twice in one); a key taken already (here or by
  // another instance) comes back as IdempotencyKeyTaken, answered with the receipt that took it.
  // A key this instance saw taken is answered without the writer (src/sdk/idempotency.ts, takenRecently).
  const requestHash = requestHashOf(body);
  const answer = (taken: TakenKey): ConsentAck => {
    if (taken.requestHash !== requestHash) throw idempotencyConflict();
    return { ok: true, id: taken.receiptId, createdAt: taken.createdAt };
  };
  const known = takenRecently(services, project.projectId, idempotencyKey);
  if (known) return answer(known);
  try {
    return await write({ key: idempotencyKey, requestHash });
  } catch (error) {
    if (!(error instanceof IdempotencyKeyTaken)) throw error;
    return answer(error.taken);
  }
}

