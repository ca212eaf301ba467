// IAB TCF v2.3, service side (extensions.md section 11, docs/tcf.md): the experience's `tcf` settings, the vendor
// lists fetched from a loopback copy of the IAB's host (test/fixtures/tcf), the SDK's vendor-list route, and
// receipts carrying TC strings made and read by the IAB's own library.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GVL, Segment, TCModel, TCString } from '@iabtechlabtcf/core';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { refreshTcfFiles, shownUrl } from '../src/tcf/refresh.js';
import { parseAcProviders, parseTcfFile } from '../src/tcf/vendor-list.js';
import { consentPath, evidencePath, publish, putDraft } from './helpers/consent.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { migratedDataDir } from './helpers/service-process.js';
import { gvlFixture, readTcfFixture, startGvlServer, TCF_FIXTURE_DIR, type GvlServer } from './helpers/tcf-gvl-server.js';

// The compiled admin tool `npm run admin` runs (the suite's global setup builds dist/).
const CLI = join(fileURLToPath(new URL('..', import.meta.url)), 'dist', 'src', 'admin', 'cli.js');

let server: TestServer;
let gvl: GvlServer;
beforeAll(async () => {
  gvl = await startGvlServer({ version: 1 });
  server = await startTestServer({ tcf: { gvlUrl: gvl.gvlUrl, acProvidersUrl: gvl.acProvidersUrl, minRefreshSeconds: 300 } });
});
afterAll(async () => {
  await server?.close();
  await gvl?.close();
});

const CMP_ID = 300;
const sha256 = (value: unknown) => createHash('sha256').update(canonicalize(value)!).digest('hex');

const tcfSettings = {
  enabled: true,
  cmpId: CMP_ID,
  cmpVersion: 2,
  publisherCountryCode: 'FR',
  vendors: [1, 2],
  googleAtps: [89],
  specialFeatures: [1],
  // Vendor 1 declares purpose 7 on legitimate interest, flexible: consent may be required of it.
  restrictions: [{ purposeId: 7, vendorIds: [1], type: 'requireConsent' }],
  publisher: { purposes: [1, 7], legitimateInterests: [] },
  purposeMap: { ads: [1, 2, 3, 4], analytics: [1, 8, 9] },
};

/** A TC string as a TCF CMP makes it, with the IAB's encoder. */
function tcString(options: { gvlVersion?: 1 | 2; cmpId?: number; legInt?: number[]; disclosed?: number[]; segments?: Segment[] } = {}) {
  const model = new TCModel(new GVL(gvlFixture(options.gvlVersion ?? 1)));
  model.cmpId = options.cmpId ?? CMP_ID;
  model.cmpVersion = 2;
  model.isServiceSpecific = true;
  model.publisherCountryCode = 'FR';
  model.consentLanguage = 'FR';
  model.purposeConsents.set([1, 2, 3, 4]);
  model.specialFeatureOptins.set(1);
  model.vendorConsents.set([1]);
  model.vendorLegitimateInterests.set(options.legInt ?? []);
  model.vendorsDisclosed.set(options.disclosed ?? [1, 2]);
  model.publisherConsents.set(1);
  return TCString.encode(model, options.segments ? { segments: options.segments } : undefined);
}

async function tcfProject() {
  const t = await team(server);
  await putDraft(server, t.owner, t.project.id);
  const put = (tcf: unknown) =>
    server.request('PUT', consentPath(t.project.id, '/experience'), { token: t.owner.token, body: { translations: { fr: {} }, tcf } });
  return { ...t, put };
}

describe('the tcf settings of the experience', () => {
  let p: Awaited<ReturnType<typeof tcfProject>>;
  beforeAll(async () => {
    p = await tcfProject();
  });

  it('fetches the vendor lists when a project first enables TCF, and saves the settings as given', async () => {
    expect(gvl.requests).toEqual([]);
    const saved = await p.put(tcfSettings);
    // When the files were not fetched, the fetch state says why (an error, or a lease/next fetch not yet due).
    const fetchState = () => server.services.db.query('SELECT resource, next_fetch_at, lease_until, last_error FROM tcf_fetch_state ORDER BY resource');
    expect(saved.status, `${saved.text}\nfetch state: ${JSON.stringify(await fetchState())}\nGVL server saw: ${JSON.stringify(gvl.requests)}`).toBe(200);
    expect(saved.body.experience.tcf).toEqual(tcfSettings);
    // The vendor list, Google's AC list and the texts of the project's other language: nothing else.
    expect([...gvl.requests].sort()).toEqual(['/ac/additional-consent-providers.csv', '/v3/purposes-fr.json', '/v3/vendor-list.json']);
    const held = await server.services.db.query<{ version: number }>('SELECT version FROM tcf_vendor_lists');
    expect(held).toEqual([{ version: 1 }]);
    const read = await server.request('GET', consentPath(p.project.id, '/experience'), { token: p.viewer.token });
    expect(read.body.experience.tcf).toEqual(tcfSettings);
  });

  it('refuses 400 validation_failed what the vendor lists or the draft do not hold, and a missing CMP id', async () => {
    const cases: [Record<string, unknown>, (string | number)[], RegExp][] = [
      [{ vendors: [1, 77] }, ['tcf', 'vendors', 1], /not in the Global Vendor List version 1/],
      [{ vendors: [4] }, ['tcf', 'vendors', 0], /not in the Global Vendor List version 1/], // only in version 2
      [{ vendors: [9] }, ['tcf', 'vendors', 0], /deleted/],
      [{ cmpId: null }, ['tcf', 'cmpId'], /Required when TCF is enabled/],
      [{ publisherCountryCode: 'XY' }, ['tcf', 'publisherCountryCode'], /country code/],
      [{ publisherCountryCode: 'fr' }, ['tcf', 'publisherCountryCode'], /country code/],
      [{ googleAtps: [5] }, ['tcf', 'googleAtps', 0], /Additional Consent providers list/],
      [{ purposeMap: { newsletter: [1] } }, ['tcf', 'purposeMap', 'newsletter'], /Unknown purpose key/],
      [{ restrictions: [{ purposeId: 2, vendorIds: [3], type: 'requireConsent' }] }, ['tcf', 'restrictions', 0, 'vendorIds', 0], /not one of tcf.vendors/],
      [{ restrictions: [{ purposeId: 2, vendorIds: [1], type: 'maybe' }] }, ['tcf', 'restrictions', 0, 'type'], /notAllowed/],
      // Restrictions the IAB's library would leave out of the string (TCF v2.4, section 15): refused with the reason.
      [{ restrictions: [{ purposeId: 2, vendorIds: [1], type: 'requireConsent' }] }, ['tcf', 'restrictions', 0, 'vendorIds', 0], /^Vendor 1 already declares purpose 2 under consent: the TC string could not carry/],
      [{ restrictions: [{ purposeId: 7, vendorIds: [1], type: 'requireLegitimateInterest' }] }, ['tcf', 'restrictions', 0, 'vendorIds', 0], /^Vendor 1 already declares purpose 7 under legitimate interest/],
      [{ restrictions: [{ purposeId: 8, vendorIds: [2], type: 'requireLegitimateInterest' }] }, ['tcf', 'restrictions', 0, 'vendorIds', 0], /^Vendor 2 does not declare purpose 8 as flexible/],
      [{ restrictions: [{ purposeId: 5, vendorIds: [1, 2], type: 'notAllowed' }] }, ['tcf', 'restrictions', 0, 'vendorIds', 0], /^Vendor 1 does not declare purpose 5, so there is nothing to forbid/],
    ];
    for (const [change, path, message] of cases) {
      const res = await p.put({ ...tcfSettings, ...change });
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.details).toContainEqual({ path, message: expect.stringMatching(message) });
    }
    // The same refusal through /graphql, with the reason; nothing stored.
    const dropped = { ...tcfSettings, restrictions: [{ purposeId: 2, vendorIds: [1], type: 'requireConsent' }] };
    const graphql = await server.request('POST', '/graphql', {
      token: p.owner.token,
      body: { query: 'mutation($p: ID!, $input: JSON!) { updateConsentExperience(projectId: $p, input: $input) }', variables: { p: p.project.id, input: { translations: { fr: {} }, tcf: dropped } } },
    });
    expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'validation_failed', details: [{ path: ['tcf', 'restrictions', 0, 'vendorIds', 0], message: expect.stringMatching(/already declares purpose 2 under consent/) }] });
    const kept = await server.request('GET', consentPath(p.project.id, '/experience'), { token: p.viewer.token });
    expect(kept.body.experience.tcf.restrictions).toEqual(tcfSettings.restrictions);
    // cmpId is never defaulted: left out, it is null, and enabled TCF refuses that.
    const { cmpId: _cmpId, ...withoutCmp } = tcfSettings;
    const res = await p.put(withoutCmp);
    expect(res.body.details).toContainEqual({ path: ['tcf', 'cmpId'], message: expect.stringMatching(/Required/) });
  });

  it('publishing pins the vendor list version; contentHash and the evidence package cover the settings and it', async () => {
    expect((await p.put(tcfSettings)).status).toBe(200);
    const version = await publish(server, p.owner, p.project.id);
    const read = await server.request('GET', evidencePath(p.project.id, `/${version.id}`), { token: p.owner.token });
    expect(read.status, read.text).toBe(200);
    const pinned = { ...tcfSettings, vendorListVersion: 1 };
    const { evidence } = read.body;
    expect(evidence.experience.tcf).toEqual(pinned);
    expect(version.contentHash).toBe(sha256({ number: version.number, config: evidence.config, tcf: pinned }));
    expect(evidence.hashes.contentHash).toBe(version.contentHash);
    // The SDK v2 config carries the published settings for the TCF banner.
    const key = await createKey(server, p.owner.token, p.project.id);
    const config = await server.request('GET', '/api/sdk/v2/config', { token: key.secret });
    expect(config.body.experience.tcf).toEqual(pinned);
    const csv = await server.request('GET', evidencePath(p.project.id, `/${version.id}?format=csv`), { token: p.owner.token });
    expect(csv.text).toContain('experience.tcf');
    // The draft is not "changed" by the pin.
    const summary = await server.request('GET', consentPath(p.project.id), { token: p.owner.token });
    expect(summary.body.hasUnpublishedChanges).toBe(false);
  });

  it('leaves a project without tcf exactly as before: contentHash is sha256({number, config})', async () => {
    const t = await team(server);
    await putDraft(server, t.owner, t.project.id);
    const version = await publish(server, t.owner, t.project.id);
    const read = await server.request('GET', evidencePath(t.project.id, `/${version.id}`), { token: t.owner.token });
    expect(version.contentHash).toBe(sha256({ number: version.number, config: read.body.evidence.config }));
  });
});

describe('the vendor lists', () => {
  it('a file never fetched is due at once, however fast the claim follows its new row (now() rounds up to the millisecond)', async () => {
    // Twenty times from no fetch state: on PostgreSQL the claim came within the row's millisecond often enough that
    // a default of now(), rounded up, left a file not yet due at least once in a few rounds (and enabling TCF 400).
    for (let round = 0; round < 20; round++) {
      await server.services.db.query('DELETE FROM tcf_fetch_state');
      gvl.requests.length = 0;
      await refreshTcfFiles(server.services, { enablingLocales: ['en'] });
      expect(gvl.requests, `round ${round}`).toEqual(expect.arrayContaining(['/ac/additional-consent-providers.csv', '/v3/vendor-list.json']));
    }
  });

  it('refresh on their max-age only, one fetch at a time, and keep every version', async () => {
    // Another project enables TCF: the lists are held and not due (max-age one week), so nothing is fetched.
    const before = gvl.requests.length;
    gvl.publish(2);
    await Promise.all([refreshTcfFiles(server.services), refreshTcfFiles(server.services)]);
    expect(gvl.requests.length).toBe(before);
    // A week later (the due times moved back): two instances at once fetch each file once.
    await server.services.db.query(`UPDATE tcf_fetch_state SET next_fetch_at = now() - interval '1 second'`);
    await Promise.all([refreshTcfFiles(server.services), refreshTcfFiles(server.services)]);
    expect(gvl.requests.slice(before).sort()).toEqual(['/ac/additional-consent-providers.csv', '/v3/purposes-fr.json', '/v3/vendor-list.json']);
    const held = await server.services.db.query<{ version: number }>('SELECT version FROM tcf_vendor_lists ORDER BY version');
    expect(held).toEqual([{ version: 1 }, { version: 2 }]);
    // The next due time is the max-age the host gave, not the minimum.
    const [state] = await server.services.db.query<{ days: number }>(
      `SELECT round(extract(epoch FROM next_fetch_at - now()) / 86400) AS days FROM tcf_fetch_state WHERE resource = 'vendor-list'`,
    );
    expect(Number(state!.days)).toBe(7);
  });
});

describe('files as the IAB and Google publish them (TCF v2.4, section 15)', () => {
  it('a translation file takes its language from its name when it has no language field, and is refused when they disagree', () => {
    const fr = readTcfFixture('purposes-fr.json');
    expect(JSON.parse(fr).language).toBeUndefined();
    const read = parseTcfFile(fr, 'https://vendor-list.consensu.org/v3/purposes-fr.json');
    expect(read).toMatchObject({ kind: 'translation', translation: { language: 'fr', vendorListVersion: 2, standardTexts: { features: expect.stringMatching(/^Texte de test/) } } });
    expect(() => parseTcfFile(JSON.stringify({ ...JSON.parse(fr), language: 'de' }), '/tmp/purposes-fr.json')).toThrow('Its language field says de but its name says fr');
    expect(() => parseTcfFile(fr, '/tmp/texts.json')).toThrow(/without a language field must be named purposes-<lang>\.json/);
    expect(parseTcfFile(JSON.stringify({ ...JSON.parse(fr), language: 'FR' }), '/tmp/texts.json')).toMatchObject({ translation: { language: 'fr' } });
  });

  it('reads Google’s AC providers list by its header, quoted or not, and refuses any other file', () => {
    const quoted = '"provider_id","provider_name","policy_url","domains"\n"39","Fixture Retargeting","https://atp39.example/privacy","atp39.example"\n';
    const plain = 'provider_id,provider_name,policy_url,domains\n39,Fixture Retargeting,https://atp39.example/privacy,atp39.example\n';
    for (const text of [quoted, plain]) expect(parseAcProviders(text)).toEqual([{ id: 39, name: 'Fixture Retargeting', policyUrl: 'https://atp39.example/privacy', domains: ['atp39.example'] }]);
    expect(() => parseAcProviders('id,name\n39,Somebody\n')).toThrow('Not the Additional Consent providers list: its first line must be provider_id,provider_name,policy_url,domains, not id,name');
    expect(() => parseAcProviders('<!doctype html><title>Not found</title>')).toThrow(/^Not the Additional Consent providers list/);
    expect(() => parseAcProviders('provider_id,provider_name,policy_url,domains\n')).toThrow(/no provider after the line/);
  });

  it('names a file by its URL without credentials or query (the message reaches every project’s members)', () => {
    expect(shownUrl('https://user:secret@mirror.example/v3/vendor-list.json?token=abc')).toBe('https://mirror.example/v3/vendor-list.json');
  });

  it('a file that is not the AC list is refused at fetching, with a message naming its URL in the log and the console’s checklist', async () => {
    const t = await team(server);
    await putDraft(server, t.owner, t.project.id);
    const problems = async () =>
      (await server.request('POST', '/graphql', { token: t.owner.token, body: { query: `query($id: ID!) { consentConfiguration(projectId: $id) { tcfFileProblems } }`, variables: { id: t.project.id } } })).body.data
        .consentConfiguration.tcfFileProblems;
    await server.services.db.query(`UPDATE tcf_fetch_state SET last_error = NULL`);
    expect(await problems()).toEqual([]);
    gvl.serveAcList('id,name\n39,Somebody\n');
    try {
      await server.services.db.query(`UPDATE tcf_fetch_state SET next_fetch_at = now() - interval '1 second' WHERE resource = 'ac-providers'`);
      const warn = vi.spyOn(server.services.logger, 'warn');
      await refreshTcfFiles(server.services, { enablingLocales: ['en'] });
      const message = `${gvl.acProvidersUrl}: Not the Additional Consent providers list: its first line must be provider_id,provider_name,policy_url,domains, not id,name`;
      expect(await problems()).toEqual([message]);
      expect(warn.mock.calls.map((call) => call[1])).toContainEqual(expect.stringContaining(message));
      warn.mockRestore();
      // The list held before stays the live one: a wrong file replaces nothing.
      const [held] = await server.services.db.query<{ providers: { id: number }[] }>('SELECT providers FROM tcf_ac_provider_lists ORDER BY seen_at DESC LIMIT 1');
      expect(held!.providers.map((provider) => provider.id)).toEqual([39, 89, 1301]);
    } finally {
      gvl.serveAcList(null);
      await server.services.db.query(`UPDATE tcf_fetch_state SET next_fetch_at = now() - interval '1 second' WHERE resource = 'ac-providers'`);
      await refreshTcfFiles(server.services, { enablingLocales: ['en'] });
    }
    expect(await problems()).toEqual([]);
  });
});

describe('GET /api/sdk/v2/tcf/vendor-list and receipts with TC strings', () => {
  let p: Awaited<ReturnType<typeof tcfProject>>;
  let version: Awaited<ReturnType<typeof publish>>;
  let key: { id: string; secret: string };
  beforeAll(async () => {
    p = await tcfProject();
    // Version 1 is pinned: publish before the list moves on (the refresh test may have fetched version 2).
    await server.services.db.query('DELETE FROM tcf_vendor_lists WHERE version = 2');
    expect((await p.put(tcfSettings)).status).toBe(200);
    version = await publish(server, p.owner, p.project.id);
    key = await createKey(server, p.owner.token, p.project.id);
  });

  const vendorList = (query = '', headers: Record<string, string> = {}) =>
    server.request('GET', `/api/sdk/v2/tcf/vendor-list${query}`, { token: key.secret, headers });

  it('answers the live version’s vendors and ATPs with the IAB’s texts in the visitor’s language, with an ETag', async () => {
    const fr = await vendorList('?locale=fr-CA');
    expect(fr.status, fr.text).toBe(200);
    expect(fr.body).toMatchObject({ vendorListVersion: 1, tcfPolicyVersion: 5, language: 'fr' });
    expect(Object.keys(fr.body.vendors)).toEqual(['1', '2']);
    expect(fr.body.vendors['1']).toMatchObject({ name: 'Fixture Ads SA', purposes: [1, 2, 3, 4], legIntPurposes: [7, 9, 10], dataDeclaration: [1, 3, 5] });
    expect(fr.body.purposes['1'].name).toBe('Stocker et/ou accéder à des informations sur un appareil');
    expect(Object.keys(fr.body.stacks)).toEqual(['1', '2', '3']);
    // TCF v2.4: the IAB's standard text for features, from the raw files (the IAB's library drops the field).
    expect(fr.body.standardTexts).toEqual({ features: expect.stringMatching(/^Texte de test : les fonctionnalités/) });
    expect(fr.body.googleAtps).toEqual([{ id: 89, name: 'Fixture Audience, Inc.', policyUrl: 'https://atp89.example/privacy', domains: ['atp89.example', 'cdn.atp89.example'] }]);
    expect(fr.headers.get('cache-control')).toMatch(/^public/);
    const etag = fr.headers.get('etag')!;
    expect(etag).toBe(`"${createHash('sha256').update(fr.text).digest('hex')}"`);
    expect((await vendorList('?locale=fr-CA', { 'if-none-match': etag })).status).toBe(304);

    const en = await vendorList();
    expect(en.body.language).toBe('en');
    expect(en.body.purposes['1'].name).toBe('Store and/or access information on a device');
    expect(en.body.standardTexts).toEqual({ features: gvlFixture(1).standardTexts.features });
    expect(en.headers.get('etag')).not.toBe(etag);
    expect((await server.request('GET', '/api/sdk/v2/tcf/vendor-list', { token: 'pk_live_unknownunknownunknown' })).status).toBe(401);
  });

  it('answers 404 tcf_not_enabled for a project whose live version has no TCF', async () => {
    const t = await team(server);
    await putDraft(server, t.owner, t.project.id);
    await publish(server, t.owner, t.project.id);
    const other = await createKey(server, t.owner.token, t.project.id);
    const res = await server.request('GET', '/api/sdk/v2/tcf/vendor-list', { token: other.secret });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('tcf_not_enabled');
  });

  const receipt = (tcf: unknown) =>
    server.request('POST', '/api/sdk/v1/consent', {
      token: key.secret,
      body: { versionId: version.id, consentHash: version.consentHash, choices: { ads: true }, installationId: 'inst_tcf_0001', tcf },
    });

  it('stores the strings, lists and exports them, and decodes them for support', async () => {
    const tc = tcString();
    const res = await receipt({ tcString: tc, addtlConsent: '2~89~dv.' });
    expect(res.status, res.text).toBe(201);
    // The v1 contract's answer, unchanged.
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'id', 'ok']);

    const list = await server.request('GET', `/api/platform/projects/${p.project.id}/receipts`, { token: p.viewer.token });
    expect(list.body.receipts[0]).toMatchObject({ id: res.body.id, tcf: { tcString: tc, addtlConsent: '2~89~dv.' } });
    const ndjson = await server.request('GET', `/api/platform/projects/${p.project.id}/receipts/export?format=ndjson`, { token: p.viewer.token });
    expect(JSON.parse(ndjson.text.trim().split('\n').at(-1)!).tcf).toEqual({ tcString: tc, addtlConsent: '2~89~dv.' });

    const decoded = await server.request('GET', `/api/platform/projects/${p.project.id}/receipts/${res.body.id}/tcf`, { token: p.viewer.token });
    expect(decoded.status, decoded.text).toBe(200);
    expect(decoded.body).toMatchObject({
      tcString: tc,
      cmpId: CMP_ID,
      vendorListVersion: 1,
      policyVersion: 5,
      isServiceSpecific: true,
      publisherCountryCode: 'FR',
      purposeConsents: [1, 2, 3, 4],
      specialFeatureOptins: [1],
      vendorConsents: [1],
      vendorsDisclosed: [1, 2],
      publisher: { purposeConsents: [1] },
      additionalConsent: { version: 2, consented: [89], disclosed: [] },
    });
    const graph = await server.request('POST', '/graphql', {
      token: p.viewer.token,
      body: { query: `{ receipts(projectId: "${p.project.id}", limit: 1) { receipts { tcString tcf } } }` },
    });
    expect(graph.body.data.receipts.receipts[0].tcf).toEqual(decoded.body);
    expect((await server.request('GET', `/api/platform/projects/${p.project.id}/receipts/${res.body.id}/tcf`, { token: p.outsider.token })).status).toBe(404);
  });

  it('refuses 400 invalid_body a malformed string, another CMP, no disclosed vendors, an undisclosed vendor, another GVL version', async () => {
    const cases: [unknown, RegExp][] = [
      [{ tcString: 'not-a-tc-string' }, /tcString/],
      [{ tcString: 'CQ.x y' }, /tcString/],
      [{ tcString: tcString({ cmpId: 301 }) }, /CMP id 301/],
      [{ tcString: tcString({ segments: [Segment.CORE] }) }, /disclosed vendors segment is missing/],
      [{ tcString: tcString({ disclosed: [1, 2, 3] }) }, /vendor 3 was not disclosed/],
      // Vendor 3 declares special purposes only: its legitimate interest bit is set when disclosed (the encoder keeps it).
      [{ tcString: tcString({ legInt: [3] }) }, /vendor 3 was not disclosed/],
      [{ tcString: tcString({ gvlVersion: 2 }) }, /vendor list version 2/],
      [{ tcString: tcString(), addtlConsent: '2~1301~dv.' }, /provider 1301/],
      [{ tcString: tcString(), addtlConsent: 'hello' }, /addtlConsent/],
      [{ tcString: tcString(), extra: true }, /extra|Unrecognized/i],
    ];
    for (const [tcf, message] of cases) {
      const res = await receipt(tcf);
      expect(res.status, JSON.stringify(tcf)).toBe(400);
      expect(res.body).toEqual({ error: expect.stringMatching(message), code: 'invalid_body' });
    }
  });
});

describe('npm run admin -- tcf import', () => {
  it('stores the files of an offline installation, checked first: a file that is not a TCF file stores nothing', async () => {
    const dataDir = migratedDataDir('tcf-import-');
    const own = await startTestServer({ databaseUrl: undefined, dataDir });
    try {
      const fixture = (name: string) => fileURLToPath(new URL(name, TCF_FIXTURE_DIR));
      // Asynchronous: the tool reaches the embedded database through this process's server (its socket).
      const cli = (args: string[]) => {
        const { DATABASE_URL: _url, ...env } = process.env;
        return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
          execFile(process.execPath, [CLI, 'tcf', 'import', ...args], { env: { ...env, DATA_DIR: dataDir }, timeout: 120_000 }, (error, stdout, stderr) =>
            resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          ),
        );
      };
      const refused = await cli([fixture('vendor-list-v1.json'), fixture('README.md')]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/README\.md/);
      expect(await own.services.db.query('SELECT version FROM tcf_vendor_lists')).toEqual([]);

      const files = ['vendor-list-v1.json', 'vendor-list-v2.json', 'purposes-fr.json', 'additional-consent-providers.csv'].map(fixture);
      const done = await cli(files);
      expect(done.status, done.stderr).toBe(0);
      expect(done.stdout).toContain('vendor list version 2');
      expect(await own.services.db.query('SELECT version FROM tcf_vendor_lists ORDER BY version')).toEqual([{ version: 1 }, { version: 2 }]);
      expect(await own.services.db.query('SELECT language, vendor_list_version FROM tcf_translations')).toEqual([{ language: 'fr', vendor_list_version: 2 }]);
      const [acList] = await own.services.db.query<{ providers: { id: number }[] }>('SELECT providers FROM tcf_ac_provider_lists');
      expect(acList!.providers.map((provider) => provider.id)).toEqual([39, 89, 1301]);
    } finally {
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
