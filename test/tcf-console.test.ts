// The operator GraphQL the console's IAB TCF screen reads (docs/tcf.md, "Console"): the newest vendor list held,
// its vendors searched, filtered and paged, Google's ATPs, the vendor-list answer for the preview, and the draft's
// publish blockers (consent.tcfIssues), over real HTTP with the fixture GVL served on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentPath, putDraft } from './helpers/consent.js';
import { team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { gvlFixture, startGvlServer, type GvlServer } from './helpers/tcf-gvl-server.js';

let server: TestServer;
let gvl: GvlServer;
let p: Awaited<ReturnType<typeof team>>;
beforeAll(async () => {
  gvl = await startGvlServer({ version: 1 });
  server = await startTestServer({ tcf: { gvlUrl: gvl.gvlUrl, acProvidersUrl: gvl.acProvidersUrl, minRefreshSeconds: 300 } });
  p = await team(server);
  await putDraft(server, p.owner, p.project.id);
});
afterAll(async () => {
  await server?.close();
  await gvl?.close();
});

const graphql = async (token: string | undefined, query: string, variables: Record<string, unknown> = {}) => {
  const res = await server.request('POST', '/graphql', { token, body: { query, variables: { projectId: p.project.id, ...variables } } });
  return res.body as { data?: any; errors?: { message: string; extensions: { code: string; details?: unknown } }[] };
};
const VENDORS = `query ($projectId: ID!, $first: Int, $after: String, $search: String, $purpose: Int, $specialFeature: Int, $legitimateInterest: Boolean, $ids: [Int!]) {
  tcfVendorList(projectId: $projectId) {
    version
    vendors(first: $first, after: $after, search: $search, purpose: $purpose, specialFeature: $specialFeature, legitimateInterest: $legitimateInterest, ids: $ids) {
      totalCount pageInfo { hasNextPage endCursor } edges { node { id name purposes legIntPurposes specialFeatures } }
    }
  }
}`;
const vendorIds = async (variables: Record<string, unknown>) => {
  const res = await graphql(p.viewer.token, VENDORS, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.tcfVendorList.vendors.edges.map((e: { node: { id: number } }) => e.node.id);
};
const ISSUES = `query ($projectId: ID!) { consentConfiguration(projectId: $projectId) { tcfIssues { path message } } }`;
const putTcf = (tcf: unknown) =>
  server.request('PUT', consentPath(p.project.id, '/experience'), { token: p.owner.token, body: { translations: { fr: {} }, tcf } });

describe('tcfVendorList and consent.tcfIssues', () => {
  it('is null while no list is held; tcfIssues says what publishing would refuse', async () => {
    expect((await graphql(p.viewer.token, '{ tcfVendorList(projectId: "x") { version } }')).errors?.[0]?.extensions.code).toBe('not_found');
    const none = await graphql(p.viewer.token, `query ($projectId: ID!) { tcfVendorList(projectId: $projectId) { version } }`);
    expect(none).toEqual({ data: { tcfVendorList: null } });
    expect((await graphql(p.viewer.token, ISSUES)).data.consentConfiguration.tcfIssues).toEqual([]); // no tcf: nothing
    // Saving TCF turned on fetches the lists; without a CMP id the save is refused, so save it off first.
    expect((await putTcf({ enabled: false })).status).toBe(200);
    expect((await graphql(p.viewer.token, ISSUES)).data.consentConfiguration.tcfIssues).toEqual([]);
  });

  it('answers 404 to a non-member and unauthorized without a session', async () => {
    const outsider = await graphql(p.outsider.token, VENDORS);
    expect(outsider.errors?.[0]?.extensions.code).toBe('not_found');
    expect(outsider.data?.tcfVendorList ?? null).toBeNull();
    expect((await graphql(undefined, VENDORS)).errors?.[0]?.extensions.code).toBe('unauthorized');
  });

  it('lists the held list’s vendors (not the deleted one), searched, filtered and paged', async () => {
    const saved = await putTcf({ enabled: true, cmpId: 300, vendors: [1] });
    expect(saved.status, saved.text).toBe(200);
    const head = await graphql(p.viewer.token, `query ($projectId: ID!) { tcfVendorList(projectId: $projectId) {
      version tcfPolicyVersion purposes { id name } specialFeatures { id name } googleAtpListHeld standardTexts { features } } }`);
    expect(head.data.tcfVendorList).toMatchObject({ version: 1, tcfPolicyVersion: 5, googleAtpListHeld: true });
    // TCF v2.4: the list's standard text for features, kept from the file as published (the IAB's library drops it).
    expect(head.data.tcfVendorList.standardTexts).toEqual({ features: gvlFixture(1).standardTexts.features });
    expect(head.data.tcfVendorList.purposes.map((x: { id: number }) => x.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(head.data.tcfVendorList.specialFeatures.map((x: { id: number }) => x.id)).toEqual([1, 2]);

    expect(await vendorIds({})).toEqual([1, 2, 3]); // 9 was deleted from the list
    expect(await vendorIds({ search: 'MEASURE' })).toEqual([2]);
    expect(await vendorIds({ search: '3' })).toEqual([3]);
    expect(await vendorIds({ purpose: 7 })).toEqual([1]); // declared on legitimate interest
    expect(await vendorIds({ purpose: 8 })).toEqual([2]);
    expect(await vendorIds({ specialFeature: 1 })).toEqual([1]);
    expect(await vendorIds({ legitimateInterest: true })).toEqual([1]);
    expect(await vendorIds({ legitimateInterest: false })).toEqual([2, 3]);
    expect(await vendorIds({ purpose: 1, legitimateInterest: false })).toEqual([1, 2]);
    expect(await vendorIds({ ids: [3, 9, 2] })).toEqual([2, 3]);

    const first = await graphql(p.viewer.token, VENDORS, { first: 2 });
    const page = first.data.tcfVendorList.vendors;
    expect(page.totalCount).toBe(3);
    expect(page.edges.map((e: { node: { id: number } }) => e.node.id)).toEqual([1, 2]);
    expect(page.pageInfo.hasNextPage).toBe(true);
    expect(await vendorIds({ first: 2, after: page.pageInfo.endCursor })).toEqual([3]);

    const bad = await graphql(p.viewer.token, VENDORS, { first: 0, after: 'nonsense' });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'validation_failed', details: [{ path: ['first'] }, { path: ['after'] }] });
  });

  it('lists Google’s ATPs searched, and answers what tcf.js would read for given vendors and ATPs', async () => {
    const atps = await graphql(p.viewer.token, `query ($projectId: ID!, $search: String) { tcfVendorList(projectId: $projectId) {
      googleAtps(search: $search) { totalCount edges { node { id name policyUrl domains } } } } }`, { search: 'audience' });
    expect(atps.data.tcfVendorList.googleAtps).toEqual({
      totalCount: 1,
      edges: [{ node: { id: 89, name: 'Fixture Audience, Inc.', policyUrl: 'https://atp89.example/privacy', domains: ['atp89.example', 'cdn.atp89.example'] } }],
    });
    const preview = await graphql(p.viewer.token, `query ($projectId: ID!) { tcfVendorList(projectId: $projectId) {
      sdkAnswer(vendors: [2, 1], googleAtps: [89], language: "fr-CA") } }`);
    const answer = preview.data.tcfVendorList.sdkAnswer;
    expect(answer).toMatchObject({ vendorListVersion: 1, language: 'fr', googleAtps: [{ id: 89 }] });
    expect(Object.keys(answer.vendors)).toEqual(['1', '2']);
    expect(answer.vendors['1'].name).toBe('Fixture Ads SA');
    const english = await graphql(p.viewer.token, `query ($projectId: ID!) { tcfVendorList(projectId: $projectId) { purposes { id name } } }`);
    expect(answer.purposes['1'].name).not.toBe(english.data.tcfVendorList.purposes[0].name); // the French text
  });

  it('tcfIssues are the publish check’s: a missing CMP id, purposes unknown to the list', async () => {
    // Saved TCF turned off, a CMP id is not required; turned on through the database, as an older draft could be.
    await server.services.db.query(
      `UPDATE consent_experiences SET settings = jsonb_set(settings, '{tcf}', '{"enabled": true, "cmpId": null, "vendors": [1], "googleAtps": [], "specialFeatures": [], "restrictions": [], "publisher": null, "purposeMap": {"ads": [1]}, "cmpVersion": 1, "publisherCountryCode": "AA"}')
       WHERE project_id = $1`,
      [p.project.id],
    );
    const issues = (await graphql(p.viewer.token, ISSUES)).data.consentConfiguration.tcfIssues;
    expect(issues).toEqual([{ path: ['tcf', 'cmpId'], message: expect.stringMatching(/Required when TCF is enabled/) }]);
    const publish = await server.request('POST', consentPath(p.project.id, '/publish'), { token: p.owner.token });
    expect(publish.status).toBe(400);
    // The same check and words; publish's paths start at the configuration (experience.tcf.cmpId).
    expect(publish.body.details).toContainEqual({ path: ['experience', 'tcf', 'cmpId'], message: issues[0].message });
    expect((await putTcf({ enabled: true, cmpId: 300, vendors: [1], purposeMap: { ads: [1] } })).status).toBe(200);
    expect((await graphql(p.viewer.token, ISSUES)).data.consentConfiguration.tcfIssues).toEqual([]);
  });
});
