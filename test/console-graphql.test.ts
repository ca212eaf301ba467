// What the console reads that no other client needed (issue 15): the session user's role in an
// organization (Organization.myRole, so a Viewer is shown nothing that would be 403), the draft's
// consentHash (whether publishing asks visitors again) and the SDK v2 answer the draft would give (the live
// preview). Real HTTP, both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { consentHashOf, publishVersion, sampleDraft } from './helpers/versions.js';

let server: TestServer;
let t: Awaited<ReturnType<typeof team>>;
beforeAll(async () => {
  server = await startTestServer();
  t = await team(server, { planId: 'growth' });
});
afterAll(() => server?.close());

async function graphql(token: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await server.request('POST', '/graphql', { token, body: { query, variables } });
  expect(res.status).toBe(200);
  return res.body as { data: any; errors?: { message: string; extensions: { code: string } }[] };
}

describe('Organization.myRole', () => {
  it('is each member’s own role, wherever the organization is reached', async () => {
    const query = `query($id: ID!) { organization(id: $id) { myRole } me { organizations { id myRole } projects { organization { myRole } } } }`;
    for (const [who, role] of [
      [t.owner, 'OWNER'],
      [t.admin, 'ADMIN'],
      [t.viewer, 'VIEWER'],
    ] as const) {
      const { data, errors } = await graphql(who.token, query, { id: t.org.id });
      expect(errors).toBeUndefined();
      expect(data.organization.myRole).toBe(role);
      expect(data.me.organizations).toEqual([{ id: t.org.id, myRole: role }]);
      expect(data.me.projects.map((p: { organization: { myRole: string } }) => p.organization.myRole)).toEqual([role]);
    }
  });

  it('an outsider still gets not_found for the organization', async () => {
    const { data, errors } = await graphql(t.outsider.token, `query($id: ID!) { organization(id: $id) { myRole } }`, { id: t.org.id });
    expect(data).toBeNull();
    expect(errors![0]!.extensions.code).toBe('not_found');
  });
});

const CONFIGURATION = `query($projectId: ID!) { consentConfiguration(projectId: $projectId) { draftConsentHash hasUnpublishedChanges latestVersion { number consentHash } } }`;
const PREVIEW = `query($projectId: ID!, $locale: String) { consentPreview(projectId: $projectId, locale: $locale) }`;

describe('ConsentConfiguration.draftConsentHash and consentPreview', () => {
  it('the draft hash is the hash publishing gives; it changes with what visitors agree to, not with branding', async () => {
    const first = await publishVersion(server, t.admin, t.project.id);
    let { data } = await graphql(t.viewer.token, CONFIGURATION, { projectId: t.project.id });
    expect(data.consentConfiguration).toEqual({ draftConsentHash: first.consentHash, hasUnpublishedChanges: false, latestVersion: { number: 1, consentHash: first.consentHash } });
    expect(first.consentHash).toBe(consentHashOf(first.config));

    // Branding only: same hash, so publishing would not ask again.
    const branded = sampleDraft({ primaryColor: '#aa0000', acceptLabel: 'OK' });
    expect((await server.request('PUT', `/api/platform/projects/${t.project.id}/consent`, { token: t.admin.token, body: branded })).status).toBe(200);
    ({ data } = await graphql(t.viewer.token, CONFIGURATION, { projectId: t.project.id }));
    expect(data.consentConfiguration).toMatchObject({ draftConsentHash: first.consentHash, hasUnpublishedChanges: true });

    // A new title: a new hash, the one the next version then carries.
    const retitled = sampleDraft({ title: 'Your choices' });
    expect((await server.request('PUT', `/api/platform/projects/${t.project.id}/consent`, { token: t.admin.token, body: retitled })).status).toBe(200);
    ({ data } = await graphql(t.viewer.token, CONFIGURATION, { projectId: t.project.id }));
    const draftHash = data.consentConfiguration.draftConsentHash;
    expect(draftHash).not.toBe(first.consentHash);
    const second = await publishVersion(server, t.admin, t.project.id, retitled);
    expect(second.consentHash).toBe(draftHash);
  });

  it('consentPreview is the v2 config answer of the draft in a locale, with the translation and UI strings', async () => {
    const base = `/api/platform/projects/${t.project.id}`;
    const saved = await server.request('PUT', `${base}/consent`, { token: t.admin.token, body: sampleDraft({ title: 'Draft title' }) });
    expect(saved.status).toBe(200);
    const experience = { defaultLocale: 'en', translations: { de: { notice: { title: 'Entwurf' }, purposes: { analytics: { name: 'Statistik' } } } }, googleConsentMode: { enabled: true, signals: { analytics_storage: ['analytics'] } } };
    expect((await server.request('PUT', `${base}/consent/experience`, { token: t.admin.token, body: experience })).status).toBe(200);
    const latest = (await graphql(t.viewer.token, CONFIGURATION, { projectId: t.project.id })).data.consentConfiguration;

    const english = (await graphql(t.viewer.token, PREVIEW, { projectId: t.project.id })).data.consentPreview;
    expect(english).toMatchObject({ projectId: t.project.id, locale: 'en', locales: ['en', 'de'], dir: 'ltr', version: { id: 'draft', number: latest.latestVersion.number + 1, consentHash: latest.draftConsentHash } });
    expect(english.config.notice.title).toBe('Draft title');
    expect(english.ui.acceptAll).toBe('Accept all');
    expect(english.experience.googleConsentMode).toMatchObject({ enabled: true, signals: { analytics_storage: ['analytics'] } });
    expect(english.experience).not.toHaveProperty('translations');

    const german = (await graphql(t.viewer.token, PREVIEW, { projectId: t.project.id, locale: 'de-CH' })).data.consentPreview;
    expect(german.locale).toBe('de');
    expect(german.config.notice.title).toBe('Entwurf');
    expect(german.config.notice.acceptLabel).toBe(''); // untranslated labels: the SDK shows its own words
    expect(german.config.purposes.find((p: { key: string }) => p.key === 'analytics').name).toBe('Statistik');
    expect(german.ui.acceptAll).toBe('Alle akzeptieren');
    // Nothing was published by previewing.
    const versions = await server.request('GET', `${base}/consent/versions`, { token: t.viewer.token });
    expect(versions.body.versions[0].number).toBe(latest.latestVersion.number);
  });

  it('before any publish: version 1, and the draft hash of an empty draft', async () => {
    const project = (await server.request('POST', `/api/platform/orgs/${t.org.id}/projects`, { token: t.owner.token, body: { name: 'Empty' } })).body.project;
    const { data } = await graphql(t.viewer.token, `${CONFIGURATION.slice(0, -1)} consentPreview(projectId: $projectId) }`, { projectId: project.id });
    expect(data.consentConfiguration.latestVersion).toBeNull();
    expect(data.consentPreview.version.number).toBe(1);
    expect(data.consentPreview.config.purposes).toEqual([]);
    expect(data.consentConfiguration.draftConsentHash).toBe(consentHashOf({ purposes: [], categories: [], notice: { ...sampleDraft().notice, title: '', description: '' } }));
  });

  it('an outsider gets not_found, and nothing but a member can preview', async () => {
    for (const query of [CONFIGURATION, PREVIEW]) {
      const { data, errors } = await graphql(t.outsider.token, query, { projectId: t.project.id });
      expect(data).toBeNull();
      expect(errors![0]!.extensions.code).toBe('not_found');
    }
  });
});
