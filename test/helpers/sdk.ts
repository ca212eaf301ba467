import type { TestServer } from './server.js';

/** Creates a publishable key as the project's owner and returns its id and secret. */
export async function createKey(server: TestServer, ownerToken: string, projectId: string, name?: string): Promise<{ id: string; secret: string }> {
  const created = await server.request('POST', `/api/platform/projects/${projectId}/api-keys`, { token: ownerToken, body: name ? { name } : {} });
  if (created.status !== 201) throw new Error(`key create failed: ${created.status} ${created.text}`);
  return { id: created.body.apiKey.id, secret: created.body.secret };
}
