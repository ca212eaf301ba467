import type { Prisma } from '../generated/prisma/client.js';

type Tx = Prisma.TransactionClient;

export interface ConsentUpdatedData {
  projectId: string;
  receiptId: string;
  versionId: string;
  versionNumber: number;
  consentHash: string;
  choices: Record<string, boolean>;
  installationId: string;
}

/**
 * Writes a `consent.updated` event into the durable outbox, in the receipt's
 * own transaction, when the project has an enabled webhook. One statement: the
 * webhook check and the insert travel together, so the consent POST pays one
 * round trip. The delivery worker (src/webhooks) sends it.
 */
export async function enqueueConsentUpdated(tx: Tx, eventId: string, createdAt: Date, data: ConsentUpdatedData): Promise<void> {
  const payload = { id: eventId, type: 'consent.updated', createdAt: createdAt.toISOString(), data };
  await tx.$executeRaw`
    INSERT INTO webhook_events (id, project_id, type, payload, created_at, next_attempt_at)
    SELECT ${eventId}, ${data.projectId}, 'consent.updated', ${JSON.stringify(payload)}::jsonb, ${createdAt}, ${createdAt}
    FROM webhooks WHERE project_id = ${data.projectId} AND enabled`;
}
