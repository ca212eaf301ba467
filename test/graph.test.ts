// The nested operator graph over real HTTP: one query for a dashboard, role checks per nested
// field, Relay connections, and a bounded number of SQL statements whatever the number of projects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { sealingByTest, startTestServer, type TestServer } from './helpers/server.js';
import { statementsOfRequest as countStatementsOfRequest } from './helpers/statements.js';
import { publishVersion } from './helpers/versions.js';

let server: TestServer;
beforeAll(async () => {
  // No sealing round on its own timer: sealing every project's receipts (8 statements each) inside a counted
  // window made the 5-project count larger than the 20-project one on a loaded CI, in all three tries.
  server = await startTestServer(sealingByTest());
});
afterAll(() => server?.close());

const gql = (query: string, variables: Record<string, unknown>, token: string) =>
  server.request('POST', '/graphql', { token, body: { query, variables } });

const DASHBOARD = `query Dashboard($id: ID!) {
  organization(id: $id) {
    name
    billing { plan { id } usage { projects } }
    members { email role }
    projects {
      id name
      organization { id }
      consent { hasUnpublishedChanges latestVersion { number } draft { purposes { key } } }
      versions(first: 2) { edges { node { number } } pageInfo { hasNextPage } }
      apiKeys(first: 5) { edges { node { prefix } } }
      allowedOrigins { enforce origins }
      webhook { url deliveries(first: 5) { edges { node { status } } } }
      receipts(first: 3) { edges { cursor node { installationId versionNumber choices } } pageInfo { hasNextPage endCursor } }
      evidence { versionId number publishedBy { email } }
    }
  }
}`;

/** An organization with `count` projects, each with a published version, a key and two receipts. */
async function organizationWith(count: number) {
  const t = await team(server);
  // Extra projects straight into the table: the plan limit is not what this file tests.
  for (let i = 1; i < count; i++) {
    await server.services.db.prisma.project.create({ data: { organizationId: t.org.id, name: `Shop ${i}`, slug: `shop-${i}` } });
  }
  const projects = await server.services.db.prisma.project.findMany({ where: { organizationId: t.org.id }, select: { id: true } });
  await Promise.all(
    projects.map(async ({ id }) => {
      const version = await publishVersion(server, t.owner, id);
      const key = await createKey(server, t.owner.token, id);
      for (const installationId of ['first-install', 'second-install']) {
        const res = await server.request('POST', '/api/sdk/v1/consent', {
          token: key.secret,
          body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: true }, installationId },
        });
        expect(res.status, res.text).toBe(201);
      }
    }),
  );
  return t;
}

describe('the nested operator graph', () => {
  it('answers a dashboard of every project in one query', async () => {
    const t = await organizationWith(3);
    const res = await gql(DASHBOARD, { id: t.org.id }, t.owner.token);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const org = res.body.data.organization;
    expect(org.billing.usage.projects).toBe(3);
    expect(org.members.map((m: { role: string }) => m.role).sort()).toEqual(['ADMIN', 'OWNER', 'VIEWER']);
    expect(org.projects).toHaveLength(3);
    for (const project of org.projects) {
      expect(project.organization.id).toBe(t.org.id);
      expect(project.consent.latestVersion.number).toBe(1);
      expect(project.consent.hasUnpublishedChanges).toBe(false);
      expect(project.versions).toEqual({ edges: [{ node: { number: 1 } }], pageInfo: { hasNextPage: false } });
      expect(project.apiKeys.edges).toEqual([{ node: { prefix: expect.stringMatching(/^pk_live_/) } }]);
      expect(project.allowedOrigins).toEqual({ enforce: true, origins: [] });
      expect(project.webhook).toBeNull();
      expect(project.receipts.edges.map((e: { node: { installationId: string } }) => e.node.installationId)).toEqual(['second-install', 'first-install']);
      expect(project.receipts.edges[0].node).toMatchObject({ versionNumber: 1, choices: { analytics: true } });
      expect(project.receipts.pageInfo.hasNextPage).toBe(false);
      expect(project.evidence).toEqual([{ versionId: expect.any(String), number: 1, publishedBy: { email: t.owner.email } }]);
    }
  });

  it('runs the same number of SQL statements for 20 projects as for 5', async () => {
    // Broken batching (a loader per project, or Prisma fallbacks per row) makes the 20-project count larger.
    const small = await organizationWith(5);
    const large = await organizationWith(20);
    // Only the request's own statements count (tagged by its x-request-id): a background worker's poll landing in
    // the window once made the 5-project count the larger on a loaded machine. A worker's statements are sent
    // here on purpose, during the smaller run, to show they cannot disturb the count.
    const counted = async (t: Awaited<ReturnType<typeof organizationWith>>, background: boolean) => {
      const requestId = `graph-count-${crypto.randomUUID()}`;
      return countStatementsOfRequest(server, requestId, async () => {
        const worker = background ? Promise.all([1, 2, 3].map(() => server.services.db.query('SELECT 1'))) : undefined;
        const res = await server.request('POST', '/graphql', { token: t.owner.token, headers: { 'x-request-id': requestId }, body: { query: DASHBOARD, variables: { id: t.org.id } } });
        await worker;
        expect(res.body.errors).toBeUndefined();
        expect(res.body.data.organization.projects).toHaveLength(t === small ? 5 : 20);
      });
    };
    const five = await counted(small, true);
    expect(five).toBeGreaterThan(0);
    expect(await counted(large, false)).toBe(five);
    expect(await counted(small, false)).toBe(five);
  });

  it('refuses a nested field alone for a lower role; its siblings still answer', async () => {
    const t = await organizationWith(1);
    const res = await gql(DASHBOARD, { id: t.org.id }, t.viewer.token);
    expect(res.status).toBe(200);
    // Members need Admin (they list colleagues' e-mail addresses); a Viewer sees everything else.
    expect(res.body.errors).toEqual([expect.objectContaining({ path: ['organization', 'members'], extensions: { code: 'forbidden' } })]);
    expect(res.body.data.organization.members).toBeNull();
    expect(res.body.data.organization.billing.plan.id).toBe('free');
    expect(res.body.data.organization.projects[0].consent.latestVersion.number).toBe(1);

    const outsider = await gql(DASHBOARD, { id: t.org.id }, t.outsider.token);
    expect(outsider.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'not_found' } })]);
    expect(outsider.body.data).toBeNull();
  });

  it('pages receipts with first/after and refuses arguments out of range', async () => {
    const t = await organizationWith(1);
    const page = (args: string) =>
      gql(
        `query($id: ID!) { project(id: $id) { name receipts(${args}) { edges { node { installationId } } pageInfo { hasNextPage endCursor } } } }`,
        { id: t.project.id },
        t.viewer.token,
      );
    const first = await page('first: 1');
    expect(first.body.data.project.receipts.edges).toEqual([{ node: { installationId: 'second-install' } }]);
    expect(first.body.data.project.receipts.pageInfo.hasNextPage).toBe(true);
    const next = await page(`first: 1, after: "${first.body.data.project.receipts.pageInfo.endCursor}"`);
    expect(next.body.data.project.receipts).toEqual({ edges: [{ node: { installationId: 'first-install' } }], pageInfo: { hasNextPage: false, endCursor: expect.any(String) } });

    for (const [args, path] of <[string, string][]>[
      ['first: 0', 'first'],
      ['first: 101', 'first'],
      ['first: -1', 'first'],
      ['after: "not-a-cursor"', 'after'],
    ]) {
      const res = await page(args);
      expect(res.status).toBe(200);
      expect(res.body.errors, args).toEqual([
        expect.objectContaining({
          path: ['project', 'receipts'],
          extensions: { code: 'validation_failed', details: [expect.objectContaining({ path: [path] })] },
        }),
      ]);
      expect(res.body.data.project.name).toBe('Shop'); // the sibling still answers
    }
    // The connections take first/after only: last and before are not in the schema, so a document using them is invalid.
    for (const args of ['last: 1', 'before: "x"']) {
      const res = await page(args);
      expect(res.body.data, args).toBeUndefined();
      expect(res.body.errors[0].message, args).toMatch(/^Unknown argument "(last|before)" on field "Project\.receipts"/);
    }
  });
});
