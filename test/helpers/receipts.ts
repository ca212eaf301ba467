// A receipt as the receipt writer takes it (src/sdk/receipt-writer.ts), for tests and benchmarks that write
// through the writer itself rather than the consent route. No vitest here: benchmarks import it too.
import { receiptId } from '../../src/receipts/ids.js';
import type { NewReceipt } from '../../src/sdk/receipt-writer.js';

type Required = Pick<NewReceipt, 'projectId' | 'versionId' | 'versionNumber' | 'consentHash' | 'installationId' | 'apiKeyId'>;

/** Every field the SDK may leave out empty, unless given; the id made from `createdAt` as the service makes it. */
export function writerReceipt(fields: Required & Partial<NewReceipt>): NewReceipt {
  const createdAt = fields.createdAt ?? new Date();
  return {
    id: receiptId(createdAt),
    choices: {},
    sdkVersion: null,
    locale: null,
    gpc: null,
    jurisdiction: null,
    action: null,
    gpp: null,
    tcString: null,
    addtlConsent: null,
    source: null,
    idempotency: null,
    subjectHash: null,
    decision: 'customised',
    ...fields,
    createdAt,
  };
}
