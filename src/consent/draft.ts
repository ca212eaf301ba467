import { audited, changesOf, recordAudit } from '../audit/record.js';
import { uuidv7 } from 'uuidv7';
import { isUniqueViolation } from '../db/errors.js';
import { readTogether, type Db } from '../db/prisma.js';
import { conflict, notFound, validationFailed, type ValidationIssue } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { EMPTY_NOTICE, NOTICE_FIELDS, type CategoryView, type NoticeView, type PurposeView } from './config.js';
import {
  categoryInput,
  categoryPatch,
  draftInput,
  LIMITS,
  noticeInput,
  purposeInput,
  purposePatch,
} from './validation.js';

export interface Draft {
  categories: CategoryView[];
  purposes: PurposeView[];
  notice: NoticeView;
}

const CATEGORY_FIELDS = { id: true, name: true, sortOrder: true } as const;
const PURPOSE_FIELDS = { id: true, key: true, name: true, description: true, required: true, categoryId: true, sortOrder: true } as const;
// Draft lists: sortOrder, then creation (ids are UUIDv7, so they break ties in creation order).
const DRAFT_ORDER = [{ sortOrder: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] as const;

/** The project's draft: every category and purpose, and the notice (empty strings when unset). */
export async function readDraft(db: Db, projectId: string): Promise<Draft> {
  const [categories, purposes, notice] = await readTogether(db, [
    () => db.category.findMany({ where: { projectId }, select: CATEGORY_FIELDS, orderBy: [...DRAFT_ORDER] }),
    () => db.purpose.findMany({ where: { projectId }, select: PURPOSE_FIELDS, orderBy: [...DRAFT_ORDER] }),
    () => db.notice.findUnique({ where: { projectId } }),
  ]);
  return { categories, purposes, notice: noticeView(notice) };
}

/** The drafts of many projects in three statements (the operator graph batches projects). */
export async function readDrafts(db: Db, projectIds: readonly string[]): Promise<Map<string, Draft>> {
  const where = { projectId: { in: [...projectIds] } };
  const [categories, purposes, notices] = await readTogether(db, [
    () => db.category.findMany({ where, select: { ...CATEGORY_FIELDS, projectId: true }, orderBy: [...DRAFT_ORDER] }),
    () => db.purpose.findMany({ where, select: { ...PURPOSE_FIELDS, projectId: true }, orderBy: [...DRAFT_ORDER] }),
    () => db.notice.findMany({ where }),
  ]);
  const drafts = new Map<string, Draft>(projectIds.map((id) => [id, { categories: [], purposes: [], notice: noticeView(null) }]));
  for (const { projectId, ...category } of categories) drafts.get(projectId)?.categories.push(category);
  for (const { projectId, ...purpose } of purposes) drafts.get(projectId)?.purposes.push(purpose);
  for (const notice of notices) drafts.get(notice.projectId)!.notice = noticeView(notice);
  return drafts;
}

/**
 * Every draft change runs in a transaction holding the project row lock, the
 * same lock publish takes: a publish never sees half of a change, and counts
 * and key checks cannot race.
 */
export function withProjectLock<T>(services: Services, projectId: string, work: (tx: Prisma.TransactionClient) => Promise<T>) {
  return services.db.prisma.$transaction(
    async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM projects WHERE id = ${projectId} FOR UPDATE`;
      if (!locked.length) throw notFound('Project');
      return work(tx);
    },
    // Parallel writers queue on the row lock; give them room to wait their turn.
    { maxWait: 10_000, timeout: 30_000 },
  );
}

export async function createCategory(services: Services, projectId: string, input: unknown): Promise<CategoryView> {
  const data = parseInput(categoryInput, input);
  return withProjectLock(services, projectId, async (tx) => {
    if ((await tx.category.count({ where: { projectId } })) >= LIMITS.categories) {
      throw validationFailed([{ path: [], message: `A project can have at most ${LIMITS.categories} categories` }]);
    }
    const category = await tx.category.create({
      data: { id: uuidv7(), projectId, ...data, createdAt: services.now() },
      select: CATEGORY_FIELDS,
    });
    return audited(tx, category, (c) => ({ action: 'consent.category_created', projectId, target: { type: 'category', id: c.id }, changes: changesOf(null, c, ['name', 'sortOrder']) }));
  });
}

export async function updateCategory(services: Services, projectId: string, id: string, input: unknown): Promise<CategoryView> {
  const data = parseInput(categoryPatch, input);
  return withProjectLock(services, projectId, async (tx) => {
    await findCategory(tx, projectId, id);
    const before = await tx.category.findUniqueOrThrow({ where: { id }, select: CATEGORY_FIELDS });
    return audited(tx, await tx.category.update({ where: { id }, data, select: CATEGORY_FIELDS }), (after) => ({ action: 'consent.category_updated', projectId, target: { type: 'category', id }, changes: changesOf(before, after, ['name', 'sortOrder']) }));
  });
}

/** Refused with 409 while purposes still belong to the category. */
export async function deleteCategory(services: Services, projectId: string, id: string): Promise<{ id: string }> {
  return withProjectLock(services, projectId, async (tx) => {
    await findCategory(tx, projectId, id);
    const used = await tx.purpose.count({ where: { categoryId: id } });
    if (used) throw conflict(`The category is used by ${used} purpose${used === 1 ? '' : 's'}; move or delete them first`);
    await tx.category.delete({ where: { id } });
    return audited(tx, { id }, () => ({ action: 'consent.category_deleted', projectId, target: { type: 'category', id } }));
  });
}

export async function createPurpose(services: Services, projectId: string, input: unknown): Promise<PurposeView> {
  const data = parseInput(purposeInput, input);
  return withProjectLock(services, projectId, async (tx) => {
    await requireCategory(tx, projectId, data.categoryId);
    if ((await tx.purpose.count({ where: { projectId } })) >= LIMITS.purposes) {
      throw validationFailed([{ path: [], message: `A project can have at most ${LIMITS.purposes} purposes` }]);
    }
    await requireFreeKey(tx, projectId, data.key);
    const purpose = await uniqueKey(data.key, () =>
      tx.purpose.create({ data: { id: uuidv7(), projectId, ...data, createdAt: services.now() }, select: PURPOSE_FIELDS }),
    );
    return audited(tx, purpose, (p) => ({ action: 'consent.purpose_created', projectId, target: { type: 'purpose', id: p.id }, changes: changesOf(null, p, ['key', 'name', 'description', 'required', 'categoryId', 'sortOrder']) }));
  });
}

export async function updatePurpose(services: Services, projectId: string, id: string, input: unknown): Promise<PurposeView> {
  const data = parseInput(purposePatch, input);
  return withProjectLock(services, projectId, async (tx) => {
    const purpose = await tx.purpose.findFirst({ where: { id, projectId }, select: PURPOSE_FIELDS });
    if (!purpose) throw notFound('Purpose');
    if (data.categoryId !== undefined) await requireCategory(tx, projectId, data.categoryId);
    if (data.key !== undefined && data.key !== purpose.key) await requireFreeKey(tx, projectId, data.key);
    const after = await uniqueKey(data.key ?? purpose.key, () => tx.purpose.update({ where: { id }, data, select: PURPOSE_FIELDS }));
    return audited(tx, after, () => ({ action: 'consent.purpose_updated', projectId, target: { type: 'purpose', id }, changes: changesOf(purpose, after, ['key', 'name', 'description', 'required', 'categoryId', 'sortOrder']) }));
  });
}

export async function deletePurpose(services: Services, projectId: string, id: string): Promise<{ id: string }> {
  return withProjectLock(services, projectId, async (tx) => {
    const { count } = await tx.purpose.deleteMany({ where: { id, projectId } });
    if (!count) throw notFound('Purpose');
    return audited(tx, { id }, () => ({ action: 'consent.purpose_deleted', projectId, target: { type: 'purpose', id } }));
  });
}

/** PUT semantics: the eight fields replace the notice; a field left out becomes empty. */
export async function putNotice(services: Services, projectId: string, input: unknown): Promise<NoticeView> {
  const data = parseInput(noticeInput, input);
  return withProjectLock(services, projectId, async (tx) => {
    const before = await tx.notice.findUnique({ where: { projectId } });
    const after = await tx.notice.upsert({ where: { projectId }, create: { projectId, ...data }, update: data });
    return audited(tx, noticeView(after), () => ({ action: 'consent.notice_updated', projectId, target: { type: 'notice', id: projectId }, changes: changesOf(before && noticeView(before), noticeView(after), NOTICE_FIELDS) }));
  });
}

/**
 * PUT /consent: replaces the whole draft in one transaction. Rows named by id
 * are kept and updated, rows without id are created, rows left out are
 * deleted. A purpose's categoryId is a `ref` of this request or the id of a
 * category kept by it. Any inconsistency is a 400 that changes nothing.
 */
export async function replaceDraft(services: Services, projectId: string, input: unknown): Promise<void> {
  const data = parseInput(draftInput, input);
  await withProjectLock(services, projectId, async (tx) => {
    const current = await readDraft(tx, projectId);
    const issues: ValidationIssue[] = [];

    const existingCategories = new Map(current.categories.map((category) => [category.id, category]));
    const categoryIds = data.categories.map((category) => category.id ?? uuidv7());
    const keptCategoryIds = new Set<string>();
    const refs = new Map<string, string>();
    data.categories.forEach((category, i) => {
      if (category.id) {
        if (!existingCategories.has(category.id)) issues.push({ path: ['categories', i, 'id'], message: 'Unknown category id' });
        else if (keptCategoryIds.has(category.id)) issues.push({ path: ['categories', i, 'id'], message: 'Duplicate category id' });
        keptCategoryIds.add(category.id);
      }
      if (category.ref) {
        if (refs.has(category.ref)) issues.push({ path: ['categories', i, 'ref'], message: 'Duplicate ref' });
        refs.set(category.ref, categoryIds[i]!);
      }
    });

    const existingPurposes = new Map(current.purposes.map((purpose) => [purpose.id, purpose]));
    const keptPurposeIds = new Set<string>();
    const keys = new Set<string>();
    const resolvedCategory: string[] = [];
    data.purposes.forEach((purpose, i) => {
      if (purpose.id) {
        if (!existingPurposes.has(purpose.id)) issues.push({ path: ['purposes', i, 'id'], message: 'Unknown purpose id' });
        else if (keptPurposeIds.has(purpose.id)) issues.push({ path: ['purposes', i, 'id'], message: 'Duplicate purpose id' });
        keptPurposeIds.add(purpose.id);
      }
      if (keys.has(purpose.key)) issues.push({ path: ['purposes', i, 'key'], message: `Duplicate key ${purpose.key}` });
      keys.add(purpose.key);
      const categoryId = refs.get(purpose.categoryId) ?? (keptCategoryIds.has(purpose.categoryId) ? purpose.categoryId : undefined);
      if (!categoryId) {
        issues.push({ path: ['purposes', i, 'categoryId'], message: 'Unknown category: not a ref or a category id of this request' });
      }
      resolvedCategory.push(categoryId ?? '');
    });
    if (issues.length) throw validationFailed(issues);

    const now = services.now();
    // Purposes left out go first: they may hold keys and categories reused below.
    await tx.purpose.deleteMany({ where: { projectId, id: { notIn: [...keptPurposeIds] } } });

    const newCategories: Prisma.CategoryCreateManyInput[] = [];
    for (const [i, category] of data.categories.entries()) {
      const row = { name: category.name, sortOrder: category.sortOrder };
      const existing = category.id ? existingCategories.get(category.id) : undefined;
      if (!existing) newCategories.push({ id: categoryIds[i]!, projectId, ...row, createdAt: now });
      else if (existing.name !== row.name || existing.sortOrder !== row.sortOrder) {
        await tx.category.update({ where: { id: existing.id }, data: row });
      }
    }
    if (newCategories.length) await tx.category.createMany({ data: newCategories });

    const rows = data.purposes.map((purpose, i) => ({
      id: purpose.id ?? undefined,
      fields: {
        key: purpose.key,
        name: purpose.name,
        description: purpose.description,
        required: purpose.required,
        categoryId: resolvedCategory[i]!,
        sortOrder: purpose.sortOrder,
      },
    }));
    // Kept purposes whose key changes step aside first, so swapping keys never trips the unique index.
    const renamed = rows.filter((row) => row.id && existingPurposes.get(row.id)!.key !== row.fields.key);
    for (const row of renamed) await tx.purpose.update({ where: { id: row.id }, data: { key: `~${row.id}` } });
    const newPurposes: Prisma.PurposeCreateManyInput[] = [];
    for (const row of rows) {
      const existing = row.id ? existingPurposes.get(row.id) : undefined;
      if (!existing) newPurposes.push({ id: uuidv7(), projectId, ...row.fields, createdAt: now });
      else if (renamed.includes(row) || changed(existing, row.fields)) await tx.purpose.update({ where: { id: existing.id }, data: row.fields });
    }
    if (newPurposes.length) await tx.purpose.createMany({ data: newPurposes });

    await tx.category.deleteMany({ where: { projectId, id: { notIn: categoryIds } } });
    await tx.notice.upsert({ where: { projectId }, create: { projectId, ...data.notice }, update: data.notice });
    await recordAudit(tx, { action: 'consent.draft_replaced', projectId, target: { type: 'draft', id: projectId }, changes: changesOf(current, await readDraft(tx, projectId), ['categories', 'purposes', 'notice']) });
  });
}

function noticeView(notice: Partial<NoticeView> | null): NoticeView {
  return Object.fromEntries(NOTICE_FIELDS.map((field) => [field, notice?.[field] ?? EMPTY_NOTICE[field]])) as unknown as NoticeView;
}

function changed(existing: PurposeView, fields: Omit<PurposeView, 'id'>): boolean {
  return (Object.keys(fields) as (keyof typeof fields)[]).some((field) => existing[field] !== fields[field]);
}

async function findCategory(tx: Prisma.TransactionClient, projectId: string, id: string) {
  const category = await tx.category.findFirst({ where: { id, projectId }, select: { id: true } });
  if (!category) throw notFound('Category');
  return category;
}

/** A purpose naming a category of another project (or none) is bad input, not a missing resource. */
async function requireCategory(tx: Prisma.TransactionClient, projectId: string, categoryId: string) {
  const category = await tx.category.findFirst({ where: { id: categoryId, projectId }, select: { id: true } });
  if (!category) throw validationFailed([{ path: ['categoryId'], message: 'Unknown category' }]);
}

async function requireFreeKey(tx: Prisma.TransactionClient, projectId: string, key: string) {
  if (await tx.purpose.findFirst({ where: { projectId, key }, select: { id: true } })) throw duplicateKey(key);
}

/** The unique index is the final arbiter of purpose keys. */
async function uniqueKey<T>(key: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateKey(key);
    throw error;
  }
}

const duplicateKey = (key: string) => conflict(`A purpose with key ${key} already exists in this project`);
