import { z } from 'zod';

/**
 * Input limits of the draft (documented in docs/consent.md). Text is stored
 * exactly as sent (no trimming), so hashes recomputed from the sent values match.
 */
export const LIMITS = {
  categories: 100,
  /** The SDK accepts at most 200 `choices`, one per purpose. */
  purposes: 200,
  categoryName: 100,
  purposeName: 200,
  purposeDescription: 2000,
  noticeTitle: 200,
  noticeDescription: 5000,
  noticeLabel: 60,
  companyName: 200,
  logoUrl: 2048,
  /** sortOrder is an integer within ±SORT_ORDER_MAX. */
  sortOrder: 1_000_000,
} as const;

export const PURPOSE_KEY = /^[a-z][a-z0-9_]{0,63}$/;

const text = (max: number) => z.string().max(max, `At most ${max} characters`);
const name = (max: number) => text(max).regex(/\S/, 'Required');
const sortOrder = z
  .number()
  .int('Must be an integer')
  .min(-LIMITS.sortOrder, `At least -${LIMITS.sortOrder}`)
  .max(LIMITS.sortOrder, `At most ${LIMITS.sortOrder}`);
const id = z.string().min(1, 'Required').max(100);

const logoUrl = text(LIMITS.logoUrl).refine((value) => value === '' || isHttpsUrl(value), 'Must be an https URL or empty');
const primaryColor = z.string().regex(/^(#[0-9a-fA-F]{6})?$/, 'Must be a #rrggbb colour or empty');

// PUT semantics: a notice field left out becomes the empty string.
export const noticeInput = z.object({
  title: text(LIMITS.noticeTitle).default(''),
  description: text(LIMITS.noticeDescription).default(''),
  acceptLabel: text(LIMITS.noticeLabel).default(''),
  rejectLabel: text(LIMITS.noticeLabel).default(''),
  manageLabel: text(LIMITS.noticeLabel).default(''),
  companyName: text(LIMITS.companyName).default(''),
  logoUrl: logoUrl.default(''),
  primaryColor: primaryColor.default(''),
});

export const categoryInput = z.object({
  name: name(LIMITS.categoryName),
  sortOrder: sortOrder.default(0),
});
export const categoryPatch = z.object({
  name: name(LIMITS.categoryName).optional(),
  sortOrder: sortOrder.optional(),
});

const purposeFields = {
  key: z.string().regex(PURPOSE_KEY, 'Must match ^[a-z][a-z0-9_]{0,63}$'),
  name: name(LIMITS.purposeName),
  description: text(LIMITS.purposeDescription).default(''),
  required: z.boolean().default(false),
  categoryId: id,
  sortOrder: sortOrder.default(0),
};
export const purposeInput = z.object(purposeFields);
export const purposePatch = z.object({
  key: purposeFields.key.optional(),
  name: purposeFields.name.optional(),
  description: text(LIMITS.purposeDescription).optional(),
  required: z.boolean().optional(),
  categoryId: id.optional(),
  sortOrder: sortOrder.optional(),
});

/** PUT /consent: the whole draft; ids name existing rows, refs link new categories to purposes. */
export const draftInput = z.object({
  categories: z
    .array(categoryInput.extend({ id: id.nullish(), ref: id.nullish() }))
    .max(LIMITS.categories, `At most ${LIMITS.categories} categories`),
  purposes: z
    .array(purposeInput.extend({ id: id.nullish() }))
    .max(LIMITS.purposes, `At most ${LIMITS.purposes} purposes`),
  notice: noticeInput,
});

export type NoticeInput = z.output<typeof noticeInput>;
export type DraftInput = z.output<typeof draftInput>;

export function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && !!url.hostname;
  } catch {
    return false;
  }
}
