import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeys } from '../verify/ledger.mjs';
import { verifyExport } from '../verify/verify-export.mjs';
import { sealDue } from '../src/ledger/seal.js';
import { sdkTeam } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { startReceiver } from './helpers/webhook-receiver.js';

// Issue 47 (extensions.md section 14, docs/subjects.md): one decision for a signed-in person, over real HTTP.

const logLines: string[] = [];
let offsetMs = 0;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(
    { logLevel: 'debug', ledger: { signingKey: generateKeyPairSync('ed25519').privateKey, publicKeys: [], sealIntervalMs: 3_600_000 } },
    // Time moves only forward (receipts made in one millisecond would have no order); tests add to it.
    { now: () => new Date(Date.now() + offsetMs), logDestination: { write: (line: string) => void logLines.push(line) } },
  );
});
afterAll(() => server?.close());

type Team = Awaited<ReturnType<typeof sdkTeam>>;
const secretPath = (t: Team) => `/api/platform/projects/${t.project.id}/subject-secret`;
const gql = (query: string, variables: Record<string, unknown>, token?: string) =>
  server.request('POST', '/graphql', { token, body: { query, variables } });

/** The operator's backend: an HS256 subject token as docs/subjects.md shows it. */
function sign(secret: string, claims: { sub?: string; aud?: string; expiresIn?: string | number; iat?: number }) {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(claims.iat ?? new Date(Date.now() + offsetMs));
  if (claims.sub !== undefined) jwt.setSubject(claims.sub);
  if (claims.aud !== undefined) jwt.setAudience(claims.aud);
  const iat = claims.iat ?? Math.floor((Date.now() + offsetMs) / 1000);
  jwt.setExpirationTime(typeof claims.expiresIn === 'number' ? claims.expiresIn : iat + 3600);
  return jwt.sign(new TextEncoder().encode(secret));
}

async function subjectsTeam() {
  const t = await sdkTeam(server);
  const made = await server.request('POST', secretPath(t), { token: t.admin.token });
  expect(made.status, made.text).toBe(200);
  const secret = made.body.secret as string;
  const tokenFor = (sub: string) => sign(secret, { sub, aud: t.project.id });
  const identify = async (installationId: string, token: string) =>
    server.request('POST', '/api/sdk/v2/identify', { token: t.key.secret, body: { installationId, token } });
  const forget = (installationId: string) => server.request('POST', '/api/sdk/v2/forget', { token: t.key.secret, body: { installationId } });
  const decision = async (installationId: string) => {
    const res = await server.request('GET', '/api/sdk/v2/decision', { token: t.key.secret, headers: { 'X-Consent-Installation': installationId } });
    expect(res.status, res.text).toBe(200);
    return res.body.decision as { choices: Record<string, boolean>; createdAt: string } | null;
  };
  const decide = async (installationId: string, analytics: boolean) => {
    offsetMs += 5; // a later millisecond than anything before
    const res = await server.request('POST', '/api/sdk/v1/consent', { token: t.key.secret, body: { ...t.body(installationId), choices: { analytics } } });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string; createdAt: string };
  };
  const receipts = async () =>
    (await server.request('GET', `/api/platform/projects/${t.project.id}/receipts?limit=200`, { token: t.viewer.token })).body.receipts as {
      id: string;
      installationId: string;
      subjectHash?: string;
    }[];
  return { ...t, secret, tokenFor, identify, forget, decision, decide, receipts };
}

const links = async (projectId: string) =>
  (await server.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM subject_links WHERE project_id = $1', [projectId]))[0]!.n;

describe('the subject secret', () => {
  it('is made and rotated by an Admin, shown once, audited without the secret, and the old one verifies for 24 hours', async () => {
    const t = await sdkTeam(server);
    expect((await server.request('GET', secretPath(t), { token: t.viewer.token })).body).toEqual({ subjectSecret: null });

    const made = await server.request('POST', secretPath(t), { token: t.admin.token });
    expect(made.status, made.text).toBe(200);
    expect(made.body.secret).toMatch(/^subsec_[0-9A-Za-z]{43}$/);
    expect(made.body.subjectSecret).toEqual({ secretPrefix: made.body.secret.slice(0, 13), createdAt: expect.any(String), previousValidUntil: null });
    // Shown once: afterwards only its prefix and dates.
    const read = await server.request('GET', secretPath(t), { token: t.viewer.token });
    expect(read.body).toEqual({ subjectSecret: made.body.subjectSecret });
    expect(read.text).not.toContain(made.body.secret);

    const identify = (token: string) =>
      server.request('POST', '/api/sdk/v2/identify', { token: t.key.secret, body: { installationId: 'device-old-secret', token } });
    const oldToken = await sign(made.body.secret, { sub: 'account-1', aud: t.project.id });

    // Over GraphQL too.
    const rotated = await gql(
      'mutation ($p: ID!) { rotateSubjectSecret(projectId: $p) { secret subjectSecret { secretPrefix previousValidUntil } } }',
      { p: t.project.id },
      t.admin.token,
    );
    const { secret, subjectSecret } = rotated.body.data.rotateSubjectSecret;
    expect(secret).not.toBe(made.body.secret);
    expect(Date.parse(subjectSecret.previousValidUntil) - (Date.now() + offsetMs)).toBeGreaterThan(23.9 * 3600_000);

    // Within the grace period the old secret's token is honoured, and the new one's.
    expect((await identify(oldToken)).status).toBe(200);
    expect((await identify(await sign(secret, { sub: 'account-1', aud: t.project.id }))).status).toBe(200);
    // After it, the old secret's token (made now, so not expired) is refused.
    offsetMs += 24 * 3600_000 + 60_000;
    const lateOld = await identify(await sign(made.body.secret, { sub: 'account-1', aud: t.project.id }));
    expect(lateOld.status).toBe(401);
    expect(lateOld.body).toEqual({ error: expect.any(String), code: 'invalid_subject_token' });
    expect((await identify(await sign(secret, { sub: 'account-1', aud: t.project.id }))).status).toBe(200);

    const audit = await server.request('GET', `/api/platform/orgs/${t.org.id}/audit-log?limit=50`, { token: t.owner.token });
    expect(audit.status, audit.text).toBe(200);
    const entries = audit.body.events.filter((e: { action: string }) => e.action.startsWith('subject.'));
    expect(entries.map((e: { action: string }) => e.action).sort()).toEqual(['subject.secret_created', 'subject.secret_rotated']);
    expect(audit.text).not.toContain(made.body.secret);
    expect(audit.text).not.toContain(secret);
  });

  it('is refused to a Viewer (403) and to non-members (404), over REST and GraphQL; erasure too', async () => {
    const t = await sdkTeam(server);
    const erase = `/api/platform/projects/${t.project.id}/subjects/${'a'.repeat(64)}`;
    expect((await server.request('POST', secretPath(t), { token: t.viewer.token })).status).toBe(403);
    expect((await server.request('POST', secretPath(t), { token: t.outsider.token })).status).toBe(404);
    expect((await server.request('GET', secretPath(t), { token: t.outsider.token })).status).toBe(404);
    expect((await server.request('DELETE', erase, { token: t.viewer.token })).status).toBe(403);
    expect((await server.request('DELETE', erase, { token: t.outsider.token })).status).toBe(404);
    const rotate = 'mutation ($p: ID!) { rotateSubjectSecret(projectId: $p) { secret } }';
    const del = 'mutation ($p: ID!, $h: String!) { deleteSubject(projectId: $p, subjectHash: $h) { unlinkedInstallations } }';
    expect((await gql(rotate, { p: t.project.id }, t.viewer.token)).body.errors[0].extensions.code).toBe('forbidden');
    expect((await gql(rotate, { p: t.project.id }, t.outsider.token)).body.errors[0].extensions.code).toBe('not_found');
    expect((await gql(del, { p: t.project.id, h: 'a'.repeat(64) }, t.viewer.token)).body.errors[0].extensions.code).toBe('forbidden');
    expect((await gql(del, { p: t.project.id, h: 'a'.repeat(64) }, t.outsider.token)).body.errors[0].extensions.code).toBe('not_found');
    // Nothing was made.
    expect((await server.request('GET', secretPath(t), { token: t.owner.token })).body).toEqual({ subjectSecret: null });
  });
});

describe('subject tokens', () => {
  it('refuses bad, expired, wrong-audience, forged, unsigned and too long-lived tokens with 401 invalid_subject_token, changing nothing', async () => {
    const s = await subjectsTeam();
    const other = await subjectsTeam();
    const now = Math.floor((Date.now() + offsetMs) / 1000);
    const bad: Record<string, string> = {
      garbage: 'not-a-jwt',
      expired: await sign(s.secret, { sub: 'u1', aud: s.project.id, iat: now - 7200, expiresIn: now - 3600 }),
      wrongAudience: await sign(s.secret, { sub: 'u1', aud: other.project.id }),
      anotherProjectsSecret: await sign(other.secret, { sub: 'u1', aud: s.project.id }),
      forged: await sign('subsec_' + 'x'.repeat(43), { sub: 'u1', aud: s.project.id }),
      unsigned: new UnsecuredJWT({ sub: 'u1', aud: s.project.id }).setIssuedAt().setExpirationTime('1h').encode(),
      tooLong: await sign(s.secret, { sub: 'u1', aud: s.project.id, expiresIn: now + 25 * 3600 }),
      noSub: await sign(s.secret, { aud: s.project.id }),
      issuedInTheFuture: await sign(s.secret, { sub: 'u1', aud: s.project.id, iat: now + 3600, expiresIn: now + 7200 }),
    };
    await s.decide('device-victim', true);
    for (const [name, token] of Object.entries(bad)) {
      const res = await s.identify('device-victim', token);
      expect(res.status, name).toBe(401);
      expect(res.body, name).toEqual({ error: expect.any(String), code: 'invalid_subject_token' });
      expect(res.text, name).not.toContain(token);
    }
    expect(await links(s.project.id)).toBe(0);
    // A project without a secret accepts no token at all.
    const bare = await sdkTeam(server);
    const none = await server.request('POST', '/api/sdk/v2/identify', {
      token: bare.key.secret,
      body: { installationId: 'device-bare', token: await sign(s.secret, { sub: 'u1', aud: bare.project.id }) },
    });
    expect(none.body.code).toBe('invalid_subject_token');
    // And a valid one still works.
    expect((await s.identify('device-victim', await s.tokenFor('u1'))).status).toBe(200);
    expect(await links(s.project.id)).toBe(1);
  });

  it('is rate-limited per key and address like the consent POST', async () => {
    const limited = await startTestServer({ rateLimits: { sdkConsentPerAddressPerMinute: 3 } });
    try {
      const t = await sdkTeam(limited);
      await limited.request('POST', `/api/platform/projects/${t.project.id}/subject-secret`, { token: t.admin.token });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await limited.request('POST', '/api/sdk/v2/identify', { token: t.key.secret, body: { installationId: `device-${i}-x`, token: 'guess' } })).status);
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('the decision follows the person', () => {
  it('links receipts made while signed in; a new device adopts the subject’s decision without a receipt; forget() unlinks', async () => {
    const s = await subjectsTeam();
    // Laptop: signs in, then rejects analytics.
    const signedIn = await s.identify('laptop-0001', await s.tokenFor('account-42'));
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(signedIn.body).toEqual({ decision: null });
    const laptop = await s.decide('laptop-0001', false);
    const [made] = await s.receipts();
    expect(made).toMatchObject({ id: laptop.id, installationId: 'laptop-0001', subjectHash: expect.stringMatching(/^[0-9a-f]{64}$/) });

    // Phone: nothing of its own; not signed in, it is not told the person's decision.
    expect(await s.decision('phone-0001')).toBeNull();
    const phone = await s.identify('phone-0001', await s.tokenFor('account-42'));
    expect(phone.body.decision).toMatchObject({ choices: { analytics: false }, createdAt: laptop.createdAt });
    expect(await s.decision('phone-0001')).toMatchObject({ choices: { analytics: false }, createdAt: laptop.createdAt });
    expect(await s.receipts()).toHaveLength(1); // adopting recorded nothing

    // Someone else signed in on the phone's neighbour gets nothing of account-42's.
    await s.identify('tablet-0001', await s.tokenFor('account-43'));
    expect(await s.decision('tablet-0001')).toBeNull();

    // The phone changes it: the laptop follows.
    const phoneChoice = await s.decide('phone-0001', true);
    expect(await s.decision('laptop-0001')).toMatchObject({ choices: { analytics: true }, createdAt: phoneChoice.createdAt });

    // Sign-out: the phone keeps only what it decided itself; the laptop's later choice no longer reaches it.
    expect((await s.forget('phone-0001')).body).toEqual({ ok: true });
    const laptopAgain = await s.decide('laptop-0001', false);
    expect(await s.decision('phone-0001')).toMatchObject({ createdAt: phoneChoice.createdAt });
    expect(await s.decision('laptop-0001')).toMatchObject({ createdAt: laptopAgain.createdAt });
  });

  it('after sign-in the newer of the device’s own decision and the subject’s wins, and both receipts stay', async () => {
    const s = await subjectsTeam();
    await s.identify('home-pc-01', await s.tokenFor('person-7'));
    const older = await s.decide('home-pc-01', true);
    // Decided on the work laptop while not signed in: newer than the person's.
    const newer = await s.decide('work-pc-01', false);
    const signIn = await s.identify('work-pc-01', await s.tokenFor('person-7'));
    expect(signIn.body.decision).toMatchObject({ choices: { analytics: false }, createdAt: newer.createdAt });
    expect(await s.decision('home-pc-01')).toMatchObject({ choices: { analytics: false }, createdAt: newer.createdAt });
    // A device with an older decision of its own than the person's follows the person.
    const oldest = await s.decide('old-tablet', true);
    const later = await s.decide('home-pc-01', true);
    const tablet = await s.identify('old-tablet', await s.tokenFor('person-7'));
    expect(tablet.body.decision).toMatchObject({ createdAt: later.createdAt });
    expect((await s.receipts()).map((r) => r.id).sort()).toEqual([older.id, newer.id, oldest.id, later.id].sort());
  });
});

describe('what is stored, shown and erased', () => {
  it('keeps no raw sub anywhere in the database; receipts show the hash in list, export, GraphQL and webhooks', async () => {
    const s = await subjectsTeam();
    const receiver = await startReceiver();
    try {
      expect((await server.request('PUT', `/api/platform/projects/${s.project.id}/webhook`, { token: s.admin.token, body: { url: receiver.url } })).status).toBe(200);
      const sub = `acct-${Date.now()}-unique-person@example.com`;
      const token = await s.tokenFor(sub);
      await s.identify('dump-device-1', token);
      const receipt = await s.decide('dump-device-1', true);
      const [listed] = await s.receipts();
      const hash = listed!.subjectHash!;
      expect(hash).toMatch(/^[0-9a-f]{64}$/);

      // Every text of every table (what a dump holds), searched for the raw sub and the token.
      const tables = await server.services.db.query<{ name: string }>(
        `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
      );
      let dump = '';
      for (const { name } of tables) {
        for (const row of await server.services.db.query<{ t: string }>(`SELECT t::text AS t FROM ${name} AS t`)) dump += `${row.t}\n`;
      }
      expect(dump).toContain(hash); // the search reaches the receipts
      expect(dump).not.toContain(sub);
      expect(dump).not.toContain(token);
      expect(dump).not.toContain(Buffer.from(sub).toString('hex'));

      const ndjson = await fetch(`${server.url}/api/platform/projects/${s.project.id}/receipts/export?format=ndjson`, {
        headers: { authorization: `Bearer ${s.viewer.token}` },
      });
      expect(JSON.parse((await ndjson.text()).trim())).toMatchObject({ id: receipt.id, subjectHash: hash });
      const csv = await (await fetch(`${server.url}/api/platform/projects/${s.project.id}/receipts/export?format=csv`, {
        headers: { authorization: `Bearer ${s.viewer.token}` },
      })).text();
      expect(csv.split('\n')[0]).toContain(',addtlConsent,subjectHash,');
      expect(csv).toContain(hash);
      const graph = await gql('query ($p: ID!) { receipts(projectId: $p) { receipts { id subjectHash } } }', { p: s.project.id }, s.viewer.token);
      expect(graph.body.data.receipts.receipts).toEqual([{ id: receipt.id, subjectHash: hash }]);
      const consentUpdated = (r: { json: unknown }) => (r.json as { type?: string } | null)?.type === 'consent.updated';
      await receiver.until((received) => received.some(consentUpdated));
      expect((receiver.received.find(consentUpdated)!.json as { data: object }).data).toMatchObject({ receiptId: receipt.id, subjectHash: hash });
    } finally {
      await receiver.close();
    }
  });

  it('erases a subject: every installation unlinked, the link deleted, audited; receipts and the ledger still verify', async () => {
    const s = await subjectsTeam();
    for (const device of ['erase-web-1', 'erase-app-1']) await s.identify(device, await s.tokenFor('leaving-person'));
    await s.decide('erase-web-1', false);
    const hash = (await s.receipts())[0]!.subjectHash!;
    expect(await s.decision('erase-app-1')).toMatchObject({ choices: { analytics: false } });

    const erased = await server.request('DELETE', `/api/platform/projects/${s.project.id}/subjects/${hash}`, { token: s.admin.token });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toEqual({ subjectHash: hash, unlinkedInstallations: 2 });
    expect(await links(s.project.id)).toBe(0);
    expect(await s.decision('erase-app-1')).toBeNull();
    const again = await server.request('DELETE', `/api/platform/projects/${s.project.id}/subjects/${hash}`, { token: s.admin.token });
    expect(again.status).toBe(404);
    const malformed = await gql('mutation ($p: ID!, $h: String!) { deleteSubject(projectId: $p, subjectHash: $h) { subjectHash } }', { p: s.project.id, h: 'nope' }, s.admin.token);
    expect(malformed.body.errors[0].extensions.code).toBe('validation_failed');

    const audit = await server.request('GET', `/api/platform/orgs/${s.org.id}/audit-log?limit=50`, { token: s.owner.token });
    expect(audit.body.events.find((e: { action: string }) => e.action === 'subject.erased')).toMatchObject({
      target: { type: 'subject', id: hash },
    });

    await sealDue(server.services);
    const keys = readKeys((await server.request('GET', '/.well-known/consent-ledger-keys.json')).body);
    const ledger = await (await fetch(`${server.url}/api/platform/projects/${s.project.id}/receipts/export?format=ledger`, {
      headers: { authorization: `Bearer ${s.viewer.token}` },
    })).text();
    expect(ledger).toContain(hash);
    expect(await verifyExport(ledger.trimEnd().split('\n'), keys)).toMatchObject({ ok: true, receipts: 1 });
  });

  it('never writes tokens or secrets into the log', async () => {
    const s = await subjectsTeam();
    const token = await s.tokenFor('logged-person');
    const from = logLines.length; // this test's lines only: the capture is the file's
    await s.identify('log-device-1', token);
    await s.identify('log-device-1', token.slice(0, -2) + 'xx'); // forged: its error too
    await server.request('POST', `/api/platform/projects/${s.project.id}/subject-secret`, { token: s.admin.token });
    // Log lines go out within a second (src/logger.ts): wait for the last request's, so the others are in too.
    const log = () => logLines.slice(from).join('');
    await expect.poll(log, { timeout: 10_000 }).toContain('/subject-secret');
    expect(log()).toContain('/api/sdk/v2/identify'); // the capture sees these requests
    expect(log()).not.toContain(token.split('.')[2]!);
    expect(log()).not.toContain(s.secret);
    expect(log()).not.toContain('logged-person');
  });
});
