// The one rule about owners, shared by the GraphQL members service and the admin tool:
// an organization always keeps an OWNER, also when two changes race.

/** Parameterised SQL inside the caller's transaction. */
export interface TxSql {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}

export type OwnerCheck = { ok: true } | { ok: false; reason: 'last_owner' };

/**
 * Locks the organization row (FOR UPDATE), then says whether `userId` may stop being an OWNER
 * (demoted or removed). Every membership change takes the same lock first, so two changes of one
 * organization run one after the other and the second sees the first's result: without the lock,
 * two owners demoting each other at once would both see "another owner remains" (READ COMMITTED).
 * Returns false when the organization does not exist.
 */
export async function lockOrganization(sql: TxSql, organizationId: string): Promise<boolean> {
  const rows = await sql.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
  return rows.length > 0;
}

/** Call after lockOrganization in the same transaction. */
export async function mayStopBeingOwner(sql: TxSql, organizationId: string, userId: string): Promise<OwnerCheck> {
  const owners = await sql.query<{ user_id: string }>(
    `SELECT user_id FROM memberships WHERE organization_id = $1 AND role = 'OWNER'`,
    [organizationId],
  );
  const others = owners.filter((owner) => owner.user_id !== userId);
  return others.length === 0 && owners.length > 0 ? { ok: false, reason: 'last_owner' } : { ok: true };
}
