import type { Db } from '../db/prisma.js';
import type { ValidationIssue } from '../errors.js';
import type { Services } from '../services.js';
import { refreshTcfFiles } from './refresh.js';
import { tcfReferenceIssues, type TcfSettings } from './settings.js';
import { readAcProviders, readVendorList, type StoredVendorList } from './vendor-list.js';

/**
 * When a project turns TCF on and the service holds no vendor list yet, it fetches the files now (before the
 * checks below need them) rather than at the worker's next round. Outside any transaction: it makes HTTP requests.
 */
export async function fetchListsIfMissing(services: Services, tcf: TcfSettings | undefined, locales: string[]): Promise<void> {
  if (!tcf?.enabled) return;
  if (await readVendorList(services.db.prisma)) return;
  try {
    await refreshTcfFiles(services, { enablingLocales: locales });
  } catch (error) {
    services.logger.warn({ err: error }, 'fetching the TCF files on enabling failed');
  }
}

/**
 * The draft's TCF settings checked against its purposes and the newest vendor list (the one a publish pins).
 * Saving TCF turned on without any vendor list held is allowed (the console's checklist says so); publishing is not.
 */
export async function tcfDraftIssues(
  db: Db,
  tcf: TcfSettings | undefined,
  purposeKeys: ReadonlySet<string>,
  publishing = false,
): Promise<{ issues: ValidationIssue[]; vendorList: StoredVendorList | null }> {
  if (!tcf) return { issues: [], vendorList: null };
  const [vendorList, providers] = [await readVendorList(db), await readAcProviders(db)];
  const acProviderIds = providers && new Set(providers.map((provider) => provider.id));
  const issues = tcfReferenceIssues(tcf, purposeKeys, { vendorList, acProviderIds });
  if (publishing && tcf.enabled && !vendorList) {
    issues.push({ path: ['tcf'], message: 'No Global Vendor List is held yet: TCF_GVL_URL could not be fetched; import one with `npm run admin -- tcf import` (docs/tcf.md)' });
  }
  return { issues, vendorList };
}
