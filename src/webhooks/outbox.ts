import { uuidv7 } from 'uuidv7';
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
