import { createHash } from 'node:crypto';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Declarations, Vendor, VendorList } from '@iabtechlabtcf/core';
import { z } from 'zod';
import type { Db } from '../db/prisma.js';

// The IAB's Global Vendor List (v3 format: "Consent string and vendor list formats" v2.3, "The Global Vendor List"),
// its translations (purposes-<lang>.json) and Google's Additional Consent providers list: checked, then kept in the
// database, every GVL version (docs/tcf.md). Types are @iabtechlabtcf/core's; zod checks what we rely on.

const ids = z.array(z.number().int().positive());
const mapOf = <T extends z.ZodType>(item: T) =>
  z.record(z.string().regex(/^\d+$/, 'ids are numbers'), item).superRefine((map, ctx) => {
    for (const [key, value] of Object.entries(map)) {
      if ((value as { id: number }).id !== Number(key)) ctx.addIssue({ code: 'custom', path: [key, 'id'], message: `id differs from its key ${key}` });
    }
  });
const described = z.looseObject({ id: z.number().int().positive(), name: z.string(), description: z.string() });
const declarations = {
  purposes: mapOf(described),
  specialPurposes: mapOf(described),
  features: mapOf(described),
  specialFeatures: mapOf(described),
  stacks: mapOf(described.extend({ purposes: ids, specialFeatures: ids })),
  dataCategories: mapOf(described).optional(),
};

const vendorSchema = z.looseObject({
  id: z.number().int().positive(),
  name: z.string(),
  purposes: ids.default([]),
  legIntPurposes: ids.default([]),
  flexiblePurposes: ids.default([]),
  specialPurposes: ids.default([]),
  features: ids.default([]),
  specialFeatures: ids.default([]),
  deletedDate: z.string().optional(),
});

// TCF v2.4 (Policies 5.0.b): the IAB's standard texts, in the list's language; `features` introduces the features.
// @iabtechlabtcf/core 1.5.21's GVL drops the field, so it is read and kept from the file as published.
const standardTexts = z.looseObject({ features: z.string().optional() }).optional();

const vendorListSchema = z.looseObject({
  gvlSpecificationVersion: z.literal(3, 'Only the GVL v3 format (gvlSpecificationVersion 3) is read'),
  vendorListVersion: z.number().int().positive(),
  tcfPolicyVersion: z.number().int().positive(),
  lastUpdated: z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'Must be a date'),
  ...declarations,
  standardTexts,
  vendors: mapOf(vendorSchema),
});

const LANGUAGE = /^[a-z]{2}(-[a-z]{2,4})?$/i;
// The IAB's files may carry no `language`: it is then the one in the file's name (purposes-<lang>.json).
const translationSchema = z.looseObject({
  language: z.string().regex(LANGUAGE, 'Must be a language code').optional(),
  vendorListVersion: z.number().int().positive(),
  ...declarations,
  standardTexts,
});

export interface StandardTexts {
  features?: string;
}
export type StoredVendorList = {
  version: number;
  tcfPolicyVersion: number;
  content: VendorList & { vendors: Record<string, Vendor>; standardTexts?: StandardTexts };
};
export type Translation = Declarations & { language: string; vendorListVersion: number; standardTexts?: StandardTexts };
export interface AcProvider {
  id: number;
  name: string;
  policyUrl: string;
  domains: string[];
}

export class TcfFileError extends Error {}

const problems = (error: z.ZodError) => error.issues.slice(0, 3).map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');

/** What kind of TCF file a text is, checked: a vendor list, a translation file, or the AC providers CSV. */
export type TcfFile =
  | { kind: 'vendor-list'; list: VendorList }
  | { kind: 'translation'; translation: Translation }
  | { kind: 'ac-providers'; providers: AcProvider[] };

/** The language a translation file's name says (`purposes-fr.json`, `purposes-pt-br.json`), lower case; null when none. */
export function languageOfFileName(name: string): string | null {
  const match = /(?:^|[/\\])purposes-([a-z]{2}(?:-[a-z]{2,4})?)\.json$/i.exec(name);
  return match ? match[1]!.toLowerCase() : null;
}

/**
 * A fetched or imported file, checked. `name` is its URL or path: a translation file without a `language` field
 * takes the language of its name, and one whose field disagrees with its name is refused.
 */
export function parseTcfFile(text: string, name = ''): TcfFile {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{')) return { kind: 'ac-providers', providers: parseAcProviders(text) };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TcfFileError(`Not JSON: ${(error as Error).message}`);
  }
  if (typeof json === 'object' && json !== null && 'vendors' in json) {
    const parsed = vendorListSchema.safeParse(json);
    if (!parsed.success) throw new TcfFileError(`Not a GVL v3 vendor list: ${problems(parsed.error)}`);
    return { kind: 'vendor-list', list: parsed.data as unknown as VendorList };
  }
  const parsed = translationSchema.safeParse(json);
  if (!parsed.success) throw new TcfFileError(`Not a GVL v3 translation (purposes-<lang>.json): ${problems(parsed.error)}`);
  const named = languageOfFileName(name);
  const field = parsed.data.language?.toLowerCase();
  if (field && named && field !== named) throw new TcfFileError(`Its language field says ${field} but its name says ${named}`);
  const language = field ?? named;
  if (!language) throw new TcfFileError('A translation file without a language field must be named purposes-<lang>.json');
  return { kind: 'translation', translation: { ...(parsed.data as unknown as Translation), language } };
}

const AC_HEADER = ['provider_id', 'provider_name', 'policy_url', 'domains'];

/** Google's list: `provider_id,provider_name,policy_url,domains` with a header line (csv-parse handles the quoting). */
export function parseAcProviders(text: string): AcProvider[] {
  const expected = AC_HEADER.join(',');
  let rows: Record<string, string>[];
  try {
    rows = parseCsv(text, {
      // The header Google publishes, exactly (quoted or not: csv-parse reads both); a file that does not start with
      // it is some other file (an HTML error page, another CSV), refused rather than read as providers.
      columns: (header: string[]) => {
        if (header.join(',') !== expected) throw new TcfFileError(`Not the Additional Consent providers list: its first line must be ${expected}, not ${header.join(',').slice(0, 120)}`);
        return header;
      },
      skip_empty_lines: true,
      trim: true,
      bom: true,
    });
  } catch (error) {
    if (error instanceof TcfFileError) throw error;
    throw new TcfFileError(`Not the Additional Consent providers list (${expected}): ${(error as Error).message}`);
  }
  if (!rows.length) throw new TcfFileError(`Not the Additional Consent providers list: no provider after the line ${expected}`);
  return rows.map((row, i) => {
    const id = Number(row.provider_id);
    if (!Number.isInteger(id) || id < 1) throw new TcfFileError(`Line ${i + 2}: provider_id is not a positive integer`);
    const domains = (row.domains ?? '').split(/[,\s]+/).filter(Boolean);
    return { id, name: row.provider_name ?? '', policyUrl: row.policy_url ?? '', domains };
  });
}

/** Where files are stored: the service's database or the admin tool's connection (plain SQL, so both can). */
export interface TcfSql {
  query(sql: string, params?: unknown[]): Promise<unknown[]>;
}

/** Stores a checked file; a vendor list version already held is kept as it was (the IAB never changes one). */
export async function storeTcfFile(sql: TcfSql, file: TcfFile): Promise<string> {
  if (file.kind === 'vendor-list') {
    const { list } = file;
    await sql.query(
      `INSERT INTO tcf_vendor_lists (version, tcf_policy_version, last_updated, content) VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (version) DO NOTHING`,
      [list.vendorListVersion, list.tcfPolicyVersion, new Date(list.lastUpdated).toISOString(), JSON.stringify(list)],
    );
    return `vendor list version ${list.vendorListVersion}`;
  }
  if (file.kind === 'translation') {
    const { translation } = file;
    await sql.query(
      `INSERT INTO tcf_translations (language, vendor_list_version, content) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (language, vendor_list_version) DO NOTHING`,
      [translation.language, translation.vendorListVersion, JSON.stringify(translation)],
    );
    return `${translation.language} texts of vendor list version ${translation.vendorListVersion}`;
  }
  const providers = JSON.stringify(file.providers);
  const sha256 = createHash('sha256').update(providers).digest('hex');
  await sql.query(
    `INSERT INTO tcf_ac_provider_lists (sha256, providers) VALUES ($1, $2::jsonb) ON CONFLICT (sha256) DO UPDATE SET seen_at = now()`,
    [sha256, providers],
  );
  return `Additional Consent providers list (${file.providers.length} providers)`;
}

/** The newest GVL held (what the next publish pins), or a given version; null when none. */
export async function readVendorList(db: Db, version?: number): Promise<StoredVendorList | null> {
  const row = version === undefined
    ? await db.tcfVendorList.findFirst({ orderBy: { version: 'desc' } })
    : await db.tcfVendorList.findUnique({ where: { version } });
  return row && { version: row.version, tcfPolicyVersion: row.tcfPolicyVersion, content: row.content as unknown as StoredVendorList['content'] };
}

/** The newest translation file held for a language (texts rarely change between versions); null when none. */
export async function readTranslation(db: Db, language: string): Promise<Translation | null> {
  const row = await db.tcfTranslation.findFirst({ where: { language }, orderBy: { vendorListVersion: 'desc' } });
  return row && (row.content as unknown as Translation);
}

/** The live (most recently seen) AC providers list; null when none was ever held. */
export async function readAcProviders(db: Db): Promise<AcProvider[] | null> {
  const row = await db.tcfAcProviderList.findFirst({ orderBy: { seenAt: 'desc' } });
  return row && (row.providers as unknown as AcProvider[]);
}
