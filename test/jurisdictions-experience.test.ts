import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentPath, evidencePath } from './helpers/consent.js';
import { team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { consentHashOf, sampleDraft, type VersionConfig } from './helpers/versions.js';

// The experience's `jurisdictions` rules and `gpp` settings (extensions.md section 6) over real HTTP:
// validated with paths, stored with the draft, published into the version, shown in evidence.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const experiencePath = (projectId: string) => consentPath(projectId, '/experience');
const sha256 = (value: unknown) => createHash('sha256').update(canonicalize(value)!).digest('hex');

const RULES = [
  { id: 'california', regions: ['US-CA'], mode: 'opt-out' },
  { id: 'us', regions: ['US'], mode: 'notice' },
  { id: 'europe', regions: ['EEA', 'UK', 'CH'], mode: 'opt-in' },
  { id: 'elsewhere', regions: ['*'], mode: 'none' },
];

async function draftedTeam() {
  const t = await team(server);
  const saved = await server.request('PUT', consentPath(t.project.id), { token: t.admin.token, body: sampleDraft() });
  expect(saved.status, saved.text).toBe(200);
  return t;
}

const rule = (overrides: Record<string, unknown>) => ({ id: 'r', regions: ['DE'], mode: 'opt-in', ...overrides });

describe('experience.jurisdictions and experience.gpp', () => {
  it.each([
    ['an unknown region code', { jurisdictions: [rule({ regions: ['DE', 'ZZ'] })] }, ['jurisdictions', 0, 'regions', 1]],
    ['a lower-case region code', { jurisdictions: [rule({ regions: ['de'] })] }, ['jurisdictions', 0, 'regions', 0]],
    ['a subdivision outside the US', { jurisdictions: [rule({ regions: ['DE-BY'] })] }, ['jurisdictions', 0, 'regions', 0]],
    ['a US subdivision that does not exist', { jurisdictions: [rule({ regions: ['US-XX'] })] }, ['jurisdictions', 0, 'regions', 0]],
    ['a rule after a * rule', { jurisdictions: [rule({ id: 'all', regions: ['DE', '*'] }), rule({ id: 'late' })] }, ['jurisdictions', 1]],
    ['an unknown mode', { jurisdictions: [rule({ mode: 'opt-maybe' })] }, ['jurisdictions', 0, 'mode']],
    ['a duplicate id', { jurisdictions: [rule({ id: 'same' }), rule({ id: 'same', regions: ['FR'] })] }, ['jurisdictions', 1, 'id']],
    ['an id with capitals', { jurisdictions: [rule({ id: 'Europe' })] }, ['jurisdictions', 0, 'id']],
    ['an id over 40 characters', { jurisdictions: [rule({ id: 'x'.repeat(41) })] }, ['jurisdictions', 0, 'id']],
    ['a rule without regions', { jurisdictions: [rule({ regions: [] })] }, ['jurisdictions', 0, 'regions']],
    ['over 100 regions', { jurisdictions: [rule({ regions: Array(101).fill('DE') })] }, ['jurisdictions', 0, 'regions']],
    ['over 50 rules', { jurisdictions: Array.from({ length: 51 }, (_, i) => rule({ id: `r${i}` })) }, ['jurisdictions']],
    ['an unknown rule field', { jurisdictions: [rule({ priority: 1 })] }, ['jurisdictions', 0]],
    ['rules that are not a list', { jurisdictions: { id: 'r' } }, ['jurisdictions']],
    ['a region that is not a string', { jurisdictions: [rule({ regions: [49] })] }, ['jurisdictions', 0, 'regions', 0]],
    ['an unknown MSPA mode', { gpp: { mspaMode: 'sometimes' } }, ['gpp', 'mspaMode']],
    ['a non-boolean covered transaction', { gpp: { mspaCoveredTransaction: 'yes' } }, ['gpp', 'mspaCoveredTransaction']],
    ['an unknown gpp field', { gpp: { states: ['usca'] } }, ['gpp']],
    ['an unknown GPP sections value (section 15: national or state)', { gpp: { sections: 'county' } }, ['gpp', 'sections']],
  ])('refuses %s with 400 validation_failed naming the path, on REST and /graphql, storing nothing', async (_name, body, path) => {
    const t = await draftedTeam();
    const p = t.project.id;
    const stored = { jurisdictions: [rule({ id: 'kept' })] };
    expect((await server.request('PUT', experiencePath(p), { token: t.admin.token, body: stored })).status).toBe(200);
    const before = (await server.request('GET', experiencePath(p), { token: t.admin.token })).body.experience;

    const response = await server.request('PUT', experiencePath(p), { token: t.admin.token, body });
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect(response.body.details.map((d: { path: unknown }) => d.path)).toContainEqual(path);
    const graphql = await server.request('POST', '/graphql', {
      token: t.admin.token,
      body: { query: 'mutation($p: ID!, $input: JSON!) { updateConsentExperience(projectId: $p, input: $input) }', variables: { p, input: body } },
    });
    expect(graphql.body.errors[0].extensions.code).toBe('validation_failed');
    expect(graphql.body.errors[0].extensions.details.map((d: { path: unknown }) => d.path)).toContainEqual(path);
    expect((await server.request('GET', experiencePath(p), { token: t.admin.token })).body.experience).toEqual(before);
  });

  it('stores what was PUT: absent stays absent (contract-era experiences unchanged), gpp gets its defaults, UK and * are accepted', async () => {
    const t = await draftedTeam();
    const p = t.project.id;
    const plain = await server.request('PUT', experiencePath(p), { token: t.admin.token, body: {} });
    expect(plain.body.experience).not.toHaveProperty('jurisdictions');
    expect(plain.body.experience).not.toHaveProperty('gpp');
    const set = await server.request('PUT', experiencePath(p), { token: t.admin.token, body: { jurisdictions: RULES, gpp: { mspaCoveredTransaction: true } } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.experience.jurisdictions).toEqual(RULES);
    expect(set.body.experience.gpp).toEqual({ mspaCoveredTransaction: true, mspaMode: 'none' });
    // gpp.sections (section 15): absent stays absent (national), given it is kept.
    const state = await server.request('PUT', experiencePath(p), { token: t.admin.token, body: { jurisdictions: RULES, gpp: { mspaCoveredTransaction: true, sections: 'state' } } });
    expect(state.body.experience.gpp).toEqual({ mspaCoveredTransaction: true, mspaMode: 'none', sections: 'state' });
    await server.request('PUT', experiencePath(p), { token: t.admin.token, body: { jurisdictions: RULES, gpp: { mspaCoveredTransaction: true } } });
    const read = await server.request('GET', experiencePath(p), { token: t.viewer.token });
    expect(read.body.experience.jurisdictions).toEqual(RULES);
    // GraphQL types them, with the default rules standing in for none.
    const query = 'query($p: ID!) { consentConfiguration(projectId: $p) { jurisdictions { id regions mode } jurisdictionsAreDefault } }';
    const typed = await server.request('POST', '/graphql', { token: t.viewer.token, body: { query, variables: { p } } });
    expect(typed.body.data.consentConfiguration).toEqual({ jurisdictions: RULES, jurisdictionsAreDefault: false });
    // An empty list is kept as such (the default rules apply to it).
    const empty = await server.request('PUT', experiencePath(p), { token: t.admin.token, body: { jurisdictions: [] } });
    expect(empty.body.experience.jurisdictions).toEqual([]);
    const defaults = await server.request('POST', '/graphql', { token: t.viewer.token, body: { query, variables: { p } } });
    expect(defaults.body.data.consentConfiguration.jurisdictionsAreDefault).toBe(true);
    expect(defaults.body.data.consentConfiguration.jurisdictions.map((r: { id: string }) => r.id)).toEqual(['eea-uk-ch', 'us-state-privacy', 'default']);
  });

  it('is part of hasUnpublishedChanges, published into the version without touching consentHash, and shown in evidence', async () => {
    const t = await draftedTeam();
    const p = t.project.id;
    const publish = async () => {
      const published = await server.request('POST', consentPath(p, '/publish'), { token: t.admin.token });
      expect(published.status, published.text).toBe(201);
      const [row] = await server.services.db.query<{ config: VersionConfig; experience: unknown }>(
        'SELECT config, experience FROM consent_versions WHERE id = $1',
        [published.body.version.id],
      );
      return { ...published.body.version, ...row! } as { id: string; consentHash: string; config: VersionConfig; experience: Record<string, unknown> };
    };
    const unpublished = async () => (await server.request('GET', consentPath(p), { token: t.viewer.token })).body.hasUnpublishedChanges;

    await server.request('PUT', experiencePath(p), { token: t.admin.token, body: {} });
    const before = await publish();
    expect(await unpublished()).toBe(false);

    await server.request('PUT', experiencePath(p), { token: t.admin.token, body: { jurisdictions: RULES, gpp: { mspaMode: 'service-provider' } } });
    expect(await unpublished()).toBe(true);
    const version = await publish();
    expect(await unpublished()).toBe(false);
    // Settings, not the consent surface: the hash is decisions.md's, as before the rules.
    expect(version.consentHash).toBe(before.consentHash);
    expect(version.consentHash).toBe(consentHashOf(version.config));
    expect(version.experience.jurisdictions).toEqual(RULES);

    // Changing only the rules is an unpublished change; the snapshot keeps the published ones.
    await server.request('PUT', experiencePath(p), {
      token: t.admin.token,
      body: { jurisdictions: [RULES[0], RULES[2]], gpp: { mspaMode: 'service-provider' } },
    });
    expect(await unpublished()).toBe(true);

    const evidence = (await server.request('GET', evidencePath(p, `/${version.id}`), { token: t.viewer.token })).body.evidence;
    expect(evidence.experience.jurisdictions).toEqual(RULES);
    expect(evidence.experience.gpp).toEqual({ mspaCoveredTransaction: false, mspaMode: 'service-provider' });
    const { packageHash, ...otherHashes } = evidence.hashes;
    expect(sha256({ ...evidence, hashes: otherHashes })).toBe(packageHash);
    const { jurisdictions: _rules, ...withoutRules } = evidence.experience;
    expect(sha256({ ...evidence, experience: withoutRules, hashes: otherHashes })).not.toBe(packageHash);

    const html = await server.request('GET', evidencePath(p, `/${version.id}?format=html`), { token: t.viewer.token });
    expect(html.text).toContain('Jurisdiction rules (first match wins)');
    expect(html.text).toContain('<td class="mono">california</td><td class="mono text">US-CA</td><td>opt-out</td>');
    expect(html.text).toContain('covered transaction: no, mode: service-provider');
    expect(html.text).not.toContain('MISMATCH');
    const csv = await server.request('GET', evidencePath(p, `/${version.id}?format=csv`), { token: t.viewer.token });
    expect(csv.text).toContain('experience.jurisdictions.california.regions,US-CA\nexperience.jurisdictions.california.mode,opt-out\n');
    expect(csv.text).toContain('experience.jurisdictions.europe.regions,EEA UK CH');
    expect(csv.text).toContain('experience.gpp.mspaMode,service-provider');

    // The version published before the rules: its evidence says nothing of them, as before.
    const older = await server.request('GET', evidencePath(p, `/${before.id}?format=csv`), { token: t.viewer.token });
    expect(older.text).toContain('experience.theme.colorScheme');
    expect(older.text).not.toContain('jurisdictions');
    expect(older.text).not.toContain('experience.gpp');
    const olderHtml = await server.request('GET', evidencePath(p, `/${before.id}?format=html`), { token: t.viewer.token });
    expect(olderHtml.text).not.toContain('Jurisdiction rules');
    const olderJson = (await server.request('GET', evidencePath(p, `/${before.id}`), { token: t.viewer.token })).body.evidence;
    expect(olderJson.experience).not.toHaveProperty('jurisdictions');
  });
});
