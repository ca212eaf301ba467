import { uuidv7 } from 'uuidv7';
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

export interface ConsentUpdatedEvent {
  eventId: string;
  createdAt: Date;
  data: ConsentUpdatedData;
}

/**
 * Writes `consent.updated` events into the durable outbox, in the receipts' own
 * transaction (the receipt writer's group commit): one statement for the whole
 * batch, and events of projects without an enabled webhook are skipped by the
 * same join. The delivery worker (src/webhooks/worker.ts) sends them.
 */
export async function enqueueConsentUpdatedBatch(tx: Tx, events: ConsentUpdatedEvent[]): Promise<void> {
  if (!events.length) return;
  const rows = events.map(({ eventId, createdAt, data }) => ({
    id: eventId,
    project_id: data.projectId,
    created_at: createdAt.toISOString(),
    payload: { id: eventId, type: 'consent.updated', createdAt: createdAt.toISOString(), data },
  }));
  await tx.$executeRaw`
    INSERT INTO webhook_events (id, project_id, type, payload, created_at, next_attempt_at)
    SELECT e.id, e.project_id, 'consent.updated', e.payload, e.created_at, e.created_at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS e(id text, project_id text, payload jsonb, created_at timestamptz)
    JOIN webhooks AS w ON w.project_id = e.project_id AND w.enabled`;
}

/**
 * One event for a project's webhook, queued only where the project has an enabled one: the statement and its
 * parameters, for a Prisma transaction (`$queryRawUnsafe`) or a plain one (`query`) alike. It returns the queued
 * row's id, so the caller wakes the delivery worker only when something was queued.
 */
export function projectWebhookEvent(projectId: string, type: string, data: unknown, createdAt: Date): { sql: string; params: unknown[] } {
  const id = uuidv7();
  const at = createdAt.toISOString();
  return {
    sql: `INSERT INTO webhook_events (id, project_id, type, payload, created_at, next_attempt_at)
          SELECT $1, project_id, $2, $3::jsonb, $4::timestamptz, $4::timestamptz FROM webhooks WHERE project_id = $5 AND enabled RETURNING id`,
    params: [id, type, JSON.stringify({ id, type, createdAt: at, data }), at, projectId],
  };
}
