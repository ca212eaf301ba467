import { notFound } from '../errors.js';
import { receiptWindows } from '../receipts/ids.js';
import type { Services } from '../services.js';
import { decodeTcfReceipt, type DecodedTcf } from './tc-string.js';

/**
 * GET /receipts/:receiptId/tcf: a receipt's TC string and AC string decoded by the IAB's library, for support and
 * audits. 404 for a receipt the project does not have, or one recorded without a TC string.
 */
export async function receiptTcf(services: Services, projectId: string, receiptId: string): Promise<DecodedTcf> {
  if (!/^[0-9A-Za-z-]{1,64}$/.test(receiptId)) throw notFound('Receipt');
  // Bounded by the time the id carries (src/receipts/ids.ts): one partition of the receipts' key.
  const [window] = await receiptWindows(services.db, [receiptId]);
  const [row] = window
    ? await services.db.query<{ tc_string: string | null; addtl_consent: string | null }>(
        'SELECT tc_string, addtl_consent FROM receipts WHERE project_id = $1 AND created_at BETWEEN $2 AND $3 AND id = $4',
        [projectId, window.from, window.to, receiptId],
      )
    : [];
  if (!row) throw notFound('Receipt');
  if (row.tc_string === null) throw notFound('TC string of the receipt');
  return decodeTcfReceipt(row.tc_string, row.addtl_consent);
}
