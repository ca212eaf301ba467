// The cookie declaration (GET /api/sdk/v2/cookie-declaration, docs/scanner.md "Cookie declaration"): the
// table an operator puts on their privacy page, built from the live version's purposes (names and descriptions
// in the visitor's locale, the experience's `cookies` lists) and the latest finished scan's inventory
// (src/scanner/inventory.ts). Public like the SDK config: the publishable key, its origin checks and allowance.
import type { Services } from '../services.js';
import { isMapped } from './findings.js';
import { describeLifetime, type InventoryItem } from './inventory.js';
import { loadCatalogue, type Catalogue } from './catalogue.js';
import { sdkConfigV2, type LocaleRequest } from '../sdk/config-v2.js';
import type { SdkCallerInfo } from '../sdk/config.js';

export interface DeclaredItem {
  /** The cookie name or storage key; a listed prefix keeps its `*` when the scan saw no name under it. */
  name: string;
  kind: 'cookie' | 'storage';
  category: InventoryItem['category'];
  vendor: string | null;
  description: string | null;
  party: InventoryItem['party'] | null;
  /** "session", "2 years", "persistent" (localStorage); empty when the scan did not see it. */
  lifetime: string;
  /** Cookie domains or storage areas. */
  where: string[];
  /** The latest scan saw it (else it is only listed in the version's `cookies`). */
  seen: boolean;
}

export interface CookieDeclaration {
  projectId: string;
  version: { id: string; number: number };
  locale: string;
  dir: 'ltr' | 'rtl';
  scan: { id: string; finishedAt: string; reportHash: string | null } | null;
  purposes: { key: string; name: string; description: string; required: boolean; items: DeclaredItem[] }[];
  /** Seen by the scan but listed under no purpose: the operator has yet to assign them. */
  unassigned: DeclaredItem[];
  /** Whether the answer's locale came from Accept-Language (the route then varies by it). */
  variesByLanguage: boolean;
}

interface LatestScan {
  id: string;
  finishedAt: Date;
  reportHash: string | null;
  inventory: InventoryItem[] | null;
}

/** The newest finished scan's inventory, read alone out of the stored report (reports before the inventory have none). */
async function latestInventory(services: Services, projectId: string): Promise<LatestScan | null> {
  const [scan] = await services.db.prisma.$queryRaw<LatestScan[]>`
    SELECT id, finished_at AS "finishedAt", report_hash AS "reportHash", report->'inventory' AS inventory
    FROM scans WHERE project_id = ${projectId} AND status = 'done'
    ORDER BY created_at DESC, id DESC LIMIT 1`;
  return scan ?? null;
}

const catalogues = new WeakMap<Services, Catalogue>();
const catalogueOf = (services: Services) => {
  let catalogue = catalogues.get(services);
  if (!catalogue) catalogues.set(services, (catalogue = loadCatalogue(services.config.publicBaseUrl)));
  return catalogue;
};

export async function cookieDeclaration(services: Services, caller: SdkCallerInfo, request: LocaleRequest): Promise<CookieDeclaration> {
  // The config's own checks (key, origin, allowance, a published version) and its locale choice.
  const config = await sdkConfigV2(services, caller, request);
  const scan = await latestInventory(services, config.projectId);
  const { localized } = config;
  const listed = localized.experience.cookies;
  const inventory = (scan?.inventory ?? []).filter((item): item is InventoryItem & { kind: 'cookie' | 'storage' } => item.kind !== 'host');
  const declared = (item: (typeof inventory)[number]): DeclaredItem => ({
    name: item.name,
    kind: item.kind,
    category: item.category,
    vendor: item.vendor,
    description: item.description,
    party: item.party,
    lifetime: describeLifetime(item.lifetime),
    where: item.where,
    seen: true,
  });
  const assigned = new Set<string>();
  const purposes = [...localized.config.purposes]
    .sort((a, b) => a.sortOrder - b.sortOrder)
    .map((purpose) => {
      const patterns = listed[purpose.key] ?? [];
      const seen = inventory.filter((item) => isMapped(item.name, patterns));
      for (const item of seen) assigned.add(`${item.kind} ${item.name}`);
      // A listed name or prefix the scan did not see is still declared: the operator says it is used.
      const unseen = patterns
        .filter((pattern) => !seen.some((item) => isMapped(item.name, [pattern])))
        .map((pattern): DeclaredItem => {
          const known = catalogueOf(services).name(pattern.endsWith('*') ? pattern.slice(0, -1) : pattern);
          return { name: pattern, kind: 'cookie', category: known.category, vendor: known.vendor, description: known.description, party: null, lifetime: '', where: [], seen: false };
        });
      return { key: purpose.key, name: purpose.name, description: purpose.description, required: purpose.required, items: [...seen.map(declared), ...unseen] };
    });
  return {
    projectId: config.projectId,
    version: { id: config.version.id, number: config.version.number },
    locale: localized.locale,
    dir: localized.dir,
    scan: scan && { id: scan.id, finishedAt: new Date(scan.finishedAt).toISOString(), reportHash: scan.reportHash },
    purposes,
    unassigned: inventory.filter((item) => !assigned.has(`${item.kind} ${item.name}`)).map(declared),
    variesByLanguage: config.variesByLanguage,
  };
}
