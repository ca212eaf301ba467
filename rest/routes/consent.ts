import { z } from 'zod';
import { NOTICE_FIELDS } from '../../src/consent/config.js';
import { experienceObject } from '../../src/consent/experience.js';
import { LIMITS, PURPOSE_KEY } from '../../src/consent/validation.js';
import { route } from '../route.js';
import { ErrorBody, pick, sessionErrors, timestamp, validationError } from '../schemas.js';

const BASE = '/api/platform/projects/:projectId/consent';

export const Category = z.object({ id: z.string(), name: z.string(), sortOrder: z.number().int() }).meta({ id: 'ConsentCategory' });
export const Purpose = z
  .object({
    id: z.string(),
    key: z.string(),
    name: z.string(),
    description: z.string(),
    required: z.boolean(),
    categoryId: z.string(),
    sortOrder: z.number().int(),
  })
  .meta({ id: 'ConsentPurpose' });
export const Notice = z
  .object(Object.fromEntries(NOTICE_FIELDS.map((field) => [field, z.string()])) as Record<(typeof NOTICE_FIELDS)[number], z.ZodString>)
  .meta({ id: 'ConsentNotice', description: 'Unset fields are empty strings' });
export const Version = z
  .object({ id: z.string(), number: z.number().int(), publishedAt: timestamp, contentHash: z.string(), consentHash: z.string() })
  .meta({ id: 'ConsentVersion' });
const Configuration = z
  .object({
    draft: z.object({ categories: z.array(Category), purposes: z.array(Purpose), notice: Notice }),
    latestVersion: Version.nullable(),
    hasUnpublishedChanges: z.boolean(),
  })
  .meta({ id: 'ConsentConfiguration' });

// Request bodies as documented (the service validates them with the same limits, src/consent/validation.ts).
const sortOrder = z.number().int().min(-LIMITS.sortOrder).max(LIMITS.sortOrder);
const CategoryBody = z.object({ name: z.string().min(1).max(LIMITS.categoryName), sortOrder: sortOrder.optional().describe('default 0') });
const PurposeBody = z.object({
  key: z.string().regex(PURPOSE_KEY).describe('unique within the project'),
  name: z.string().min(1).max(LIMITS.purposeName),
  description: z.string().max(LIMITS.purposeDescription).optional().describe('default ""'),
  required: z.boolean().optional().describe('default false'),
  categoryId: z.string(),
  sortOrder: sortOrder.optional().describe('default 0'),
});
const NoticeBody = z
  .object({
    title: z.string().max(LIMITS.noticeTitle).optional(),
    description: z.string().max(LIMITS.noticeDescription).optional(),
    acceptLabel: z.string().max(LIMITS.noticeLabel).optional(),
    rejectLabel: z.string().max(LIMITS.noticeLabel).optional(),
    manageLabel: z.string().max(LIMITS.noticeLabel).optional(),
    companyName: z.string().max(LIMITS.companyName).optional(),
    logoUrl: z.string().max(LIMITS.logoUrl).optional().describe('https URL or empty'),
    primaryColor: z.string().optional().describe('#rrggbb or empty'),
  })
  .describe('A field left out becomes the empty string');
const DraftBody = z.object({
  categories: z.array(CategoryBody.extend({ id: z.string().optional(), ref: z.string().optional() })),
  purposes: z.array(PurposeBody.extend({ id: z.string().optional(), categoryId: z.string().describe('category id or ref') })),
  notice: NoticeBody,
});

const CATEGORY_KEYS = ['name', 'sortOrder'] as const;
const PURPOSE_KEYS = ['key', 'name', 'description', 'required', 'categoryId', 'sortOrder'] as const;

/** Keeps the known fields of each item (unknown ones are ignored, as at the top level); non-objects go through to be refused. */
const pickEach = (items: unknown, keys: readonly string[]) =>
  Array.isArray(items) ? items.map((item) => (isObject(item) ? pick(item, keys) : item)) : items;
const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const Experience = experienceObject.meta({
  id: 'ConsentExperience',
  description: 'Translations per locale and the settings the SDK v2 uses (docs/consent.md, "Experience")',
});
const EXPERIENCE_BODY_LIMIT = 1024 * 1024;

const notFoundOr = (what: string) => ({ 404: { description: `Not a member, or no such ${what}`, schema: ErrorBody } });

export const consentRoutes = [
  route({
    method: 'GET',
    path: BASE,
    summary: 'The draft, the latest version and whether publishing would change anything (Viewer or above)',
    auth: 'session',
    operation: 'ConsentConfiguration',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: data.consentConfiguration }),
    responses: { 200: { description: 'Configuration', schema: Configuration }, ...sessionErrors },
  }),
  route({
    method: 'PUT',
    path: BASE,
    summary:
      'Replace the whole draft in one transaction (Admin or above): rows with an id are kept, rows without are created, ' +
      "rows left out are deleted; a purpose's categoryId is a kept category id or a ref of the request",
    auth: 'session',
    operation: 'ReplaceConsentDraft',
    requestBody: DraftBody,
    variables: ({ params, body }) => {
      const draft = (body ?? {}) as Record<string, unknown>;
      return {
        projectId: params.projectId,
        input: {
          ...pick(draft, ['categories', 'purposes', 'notice']),
          ...(draft.categories !== undefined && { categories: pickEach(draft.categories, ['id', 'ref', ...CATEGORY_KEYS]) }),
          ...(draft.purposes !== undefined && { purposes: pickEach(draft.purposes, ['id', ...PURPOSE_KEYS]) }),
          ...(isObject(draft.notice) && { notice: pick(draft.notice, NOTICE_FIELDS) }),
        },
      };
    },
    respond: (data) => ({ status: 200, body: data.replaceConsentDraft }),
    responses: { 200: { description: 'The new configuration', schema: Configuration }, ...validationError, ...sessionErrors },
  }),
  route({
    method: 'POST',
    path: `${BASE}/categories`,
    summary: 'Add a category (Admin or above)',
    auth: 'session',
    operation: 'CreateConsentCategory',
    requestBody: CategoryBody,
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, CATEGORY_KEYS) }),
    respond: (data) => ({ status: 201, body: data.createConsentCategory }),
    responses: { 201: { description: 'Created', schema: z.object({ category: Category }) }, ...validationError, ...sessionErrors },
  }),
  route({
    method: 'PATCH',
    path: `${BASE}/categories/:id`,
    summary: 'Change a category (Admin or above)',
    auth: 'session',
    operation: 'UpdateConsentCategory',
    requestBody: CategoryBody.partial(),
    variables: ({ params, body }) => ({ projectId: params.projectId, id: params.id, input: pick(body, CATEGORY_KEYS) }),
    respond: (data) => ({ status: 200, body: data.updateConsentCategory }),
    responses: {
      200: { description: 'Changed', schema: z.object({ category: Category }) },
      ...validationError,
      ...sessionErrors,
      ...notFoundOr('category'),
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/categories/:id`,
    summary: 'Delete a category (Admin or above); 409 while purposes use it',
    auth: 'session',
    operation: 'DeleteConsentCategory',
    variables: ({ params }) => ({ projectId: params.projectId, id: params.id }),
    respond: () => ({ status: 204 }),
    responses: {
      204: { description: 'Deleted' },
      ...sessionErrors,
      ...notFoundOr('category'),
      409: { description: 'Purposes still use the category', schema: ErrorBody },
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/purposes`,
    summary: 'Add a purpose (Admin or above); a duplicate key is 409',
    auth: 'session',
    operation: 'CreateConsentPurpose',
    requestBody: PurposeBody,
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, PURPOSE_KEYS) }),
    respond: (data) => ({ status: 201, body: data.createConsentPurpose }),
    responses: {
      201: { description: 'Created', schema: z.object({ purpose: Purpose }) },
      ...validationError,
      ...sessionErrors,
      409: { description: 'A purpose with this key exists', schema: ErrorBody },
    },
  }),
  route({
    method: 'PATCH',
    path: `${BASE}/purposes/:id`,
    summary: 'Change a purpose (Admin or above); a duplicate key is 409',
    auth: 'session',
    operation: 'UpdateConsentPurpose',
    requestBody: PurposeBody.partial(),
    variables: ({ params, body }) => ({ projectId: params.projectId, id: params.id, input: pick(body, PURPOSE_KEYS) }),
    respond: (data) => ({ status: 200, body: data.updateConsentPurpose }),
    responses: {
      200: { description: 'Changed', schema: z.object({ purpose: Purpose }) },
      ...validationError,
      ...sessionErrors,
      ...notFoundOr('purpose'),
      409: { description: 'A purpose with this key exists', schema: ErrorBody },
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/purposes/:id`,
    summary: 'Delete a purpose (Admin or above)',
    auth: 'session',
    operation: 'DeleteConsentPurpose',
    variables: ({ params }) => ({ projectId: params.projectId, id: params.id }),
    respond: () => ({ status: 204 }),
    responses: { 204: { description: 'Deleted' }, ...sessionErrors, ...notFoundOr('purpose') },
  }),
  route({
    method: 'PUT',
    path: `${BASE}/notice`,
    summary: 'Replace the notice (Admin or above); a field left out becomes the empty string',
    auth: 'session',
    operation: 'UpdateConsentNotice',
    requestBody: NoticeBody,
    variables: ({ params, body }) => ({ projectId: params.projectId, input: pick(body, NOTICE_FIELDS) }),
    respond: (data) => ({ status: 200, body: data.updateConsentNotice }),
    responses: { 200: { description: 'The notice', schema: z.object({ notice: Notice }) }, ...validationError, ...sessionErrors },
  }),
  route({
    method: 'GET',
    path: `${BASE}/experience`,
    summary: 'The draft experience: translations and settings published with the next version (Viewer or above); defaults until set',
    auth: 'session',
    operation: 'ConsentExperience',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: { experience: data.consentExperience } }),
    responses: { 200: { description: 'The experience', schema: z.object({ experience: Experience }) }, ...sessionErrors },
  }),
  route({
    method: 'PUT',
    path: `${BASE}/experience`,
    summary:
      'Replace the whole draft experience (Admin or above); a field left out takes its default (`jurisdictions` and `gpp` stay ' +
      'absent: the default rules apply, docs/jurisdictions.md). Locales are canonical BCP 47 tags ' +
      '(at most 50); purpose keys and category ids must exist in the draft (checked again at publish).',
    auth: 'session',
    operation: 'UpdateConsentExperience',
    requestBody: Experience.partial(),
    // Up to 50 locales of a 200-purpose draft do not fit in the operator default.
    bodyLimit: EXPERIENCE_BODY_LIMIT,
    variables: ({ params, body }) => ({ projectId: params.projectId, input: body ?? {} }),
    respond: (data) => ({ status: 200, body: { experience: data.updateConsentExperience } }),
    responses: {
      200: { description: 'The stored experience, defaults filled in', schema: z.object({ experience: Experience }) },
      ...validationError,
      ...sessionErrors,
      413: { description: 'Body over 1 MiB', schema: ErrorBody },
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/publish`,
    summary:
      'Publish the draft as the next immutable numbered version (Admin or above); needs a purpose and a notice title. ' +
      'Members are notified (consent.version_published).',
    auth: 'session',
    operation: 'PublishConsent',
    respond: (data) => ({ status: 201, body: data.publishConsent }),
    variables: ({ params }) => ({ projectId: params.projectId }),
    responses: {
      201: { description: 'Published', schema: z.object({ version: Version }) },
      400: { description: 'No purpose, no notice title, or the experience names a purpose key or category id the draft no longer has (validation_failed)', schema: ErrorBody },
      ...sessionErrors,
    },
  }),
  route({
    method: 'GET',
    path: `${BASE}/versions`,
    summary: 'Published versions, newest first (Viewer or above)',
    auth: 'session',
    operation: 'ConsentVersions',
    variables: ({ params }) => ({ projectId: params.projectId }),
    respond: (data) => ({ status: 200, body: { versions: data.consentVersions } }),
    responses: { 200: { description: 'Versions', schema: z.object({ versions: z.array(Version) }) }, ...sessionErrors },
  }),
];
