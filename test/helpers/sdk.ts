import { team } from './fixtures.js';
import type { TestServer } from './server.js';
import { publishVersion } from './versions.js';

/** Creates a publishable key as the project's owner and returns its id and secret. */
export async function createKey(server: TestServer, ownerToken: string, projectId: string, name?: string): Promise<{ id: string; secret: string }> {
  const created = await server.request('POST', `/api/platform/projects/${projectId}/api-keys`, { token: ownerToken, body: name ? { name } : {} });
  if (created.status !== 201) throw new Error(`key create failed: ${created.status} ${created.text}`);
  return { id: created.body.apiKey.id, secret: created.body.secret };
}

/** A team whose project has a published version and a key, with a receipt body and a poster for SDK consent. */
export async function sdkTeam(server: TestServer) {
  const t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  const body = (installationId: string) => ({
    versionId: version.id,
    consentHash: version.consentHash,
    choices: { analytics: true },
    installationId,
    sdkVersion: '1.0.0',
  });
  const post = (installationId: string) => server.request('POST', '/api/sdk/v1/consent', { token: key.secret, body: body(installationId) });
  return { ...t, version, key, body, post };
}
