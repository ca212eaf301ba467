import type { Services } from '../services.js';

/** The subject an installation is signed in as, or null. */
export async function subjectOf(services: Services, projectId: string, installationId: string): Promise<string | null> {
  const [link] = await services.db.query<{ subject_hash: string }>(
    `SELECT subject_hash FROM subject_links WHERE project_id = $1 AND installation_id = $2`,
    [projectId, installationId],
    { name: 'subject-of-installation' },
  );
  return link?.subject_hash ?? null;
}
