// Relay's global object identification over real HTTP: every type with an id implements Node, node(id) and
// nodes(ids) find each by the id REST shows, authorised as the type's own field (not_found for a non-member,
// forbidden below the field's role, only the user's own notifications and account).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_SOURCES } from '../src/graph/nodes.js';
import { team } from './helpers/fixtures.js';
import { createKey } from './helpers/sdk.js';
import { sealingByTest, startTestServer, type TestServer } from './helpers/server.js';
import { statementsDuring } from './helpers/statements.js';
import { publishVersion } from './helpers/versions.js';

let server: TestServer;
let t: Awaited<ReturnType<typeof team>>;
/** One object of every Node type, and what a member sees of it. */
const ids: Record<string, string> = {};

const gql = (query: string, variables: Record<string, unknown>, token?: string) =>
  server.request('POST', '/graphql', { token, body: { query, variables } });

beforeAll(async () => {
  // No sealing round on its own timer inside the counted windows (test/graph.test.ts says why).
  server = await startTestServer(sealingByTest());
  t = await team(server);
  const version = await publishVersion(server, t.owner, t.project.id);
  const key = await createKey(server, t.owner.token, t.project.id);
  const receipt = await server.request('POST', '/api/sdk/v1/consent', {
    token: key.secret,
    body: { versionId: version.id, consentHash: version.consentHash, choices: { analytics: true }, installationId: 'node-install' },
  });
  expect(receipt.status, receipt.text).toBe(201);
  const prisma = server.services.db.prisma;
  const delivery = await prisma.webhookDelivery.create({
    data: { projectId: t.project.id, eventType: 'consent.version_published', attempt: 1, status: 'succeeded', responseStatus: 200, durationMs: 5 },
  });
  // A finished scan row (a queued one would wake the scanner): node(id) reads it as `scan` does, Viewer and above.
  const scan = await prisma.scan.create({
    data: { id: crypto.randomUUID(), projectId: t.project.id, status: 'failed', urls: ['https://example.com/'], error: 'test row', finishedAt: new Date() },
  });
  const [category, purpose, membership, audit, notification] = await Promise.all([
    prisma.category.findFirstOrThrow({ where: { projectId: t.project.id } }),
    prisma.purpose.findFirstOrThrow({ where: { projectId: t.project.id } }),
    prisma.membership.findFirstOrThrow({ where: { organizationId: t.org.id, userId: t.viewer.id } }),
    prisma.auditEvent.findFirstOrThrow({ where: { organizationId: t.org.id } }),
    prisma.notification.findFirstOrThrow({ where: { userId: t.viewer.id } }),
  ]);
  Object.assign(ids, {
    Organization: t.org.id,
    OrganizationMember: membership.id,
    AuditEvent: audit.id,
    Project: t.project.id,
    ConsentCategory: category.id,
    ConsentPurpose: purpose.id,
    ConsentVersion: version.id,
    ApiKey: key.id,
    Receipt: receipt.body.id,
    WebhookDelivery: delivery.id,
    Scan: scan.id,
    Notification: notification.id,
    User: t.viewer.id,
  });
});
afterAll(() => server?.close());

const NODE = `query($id: ID!) { node(id: $id) { __typename id
  ... on Organization { slug } ... on OrganizationMember { email role } ... on AuditEvent { action actor { email } }
  ... on Project { organizationId } ... on ConsentCategory { name } ... on ConsentPurpose { key }
  ... on ConsentVersion { number } ... on ApiKey { prefix } ... on Receipt { versionNumber installationId }
  ... on WebhookDelivery { status } ... on Scan { status projectId } ... on Notification { type } ... on User { email } } }`;

describe('the Node interface', () => {
  it('is implemented by every type with an id of its own; projections of another type’s id are not Nodes', async () => {
    const res = await gql('{ __type(name: "Node") { possibleTypes { name } } }', {}, t.owner.token);
    const implementers = res.body.data.__type.possibleTypes.map((type: { name: string }) => type.name).sort();
    expect(implementers).toEqual(Object.keys(NODE_SOURCES).sort());
    // Every object type with an `id: ID!` field is a Node, except those whose id is another type's id (a node(id)
    // finds the type itself) or not unique (a catalog key, a rule id inside a document).
    const all = await gql('{ __schema { types { name kind fields { name type { kind ofType { name } } } } } }', {}, t.owner.token);
    const withId = all.body.data.__schema.types
      .filter((type: any) => type.kind === 'OBJECT' && !type.name.startsWith('__'))
      .filter((type: any) => type.fields.some((f: any) => f.name === 'id' && f.type.kind === 'NON_NULL' && f.type.ofType.name === 'ID'))
      .map((type: { name: string }) => type.name);
    const projections = ['ConsentDeletedPayload', 'ConsentReceiptAck', 'EvidencePublisher', 'SdkVersion'];
    expect(withId.filter((name: string) => !implementers.includes(name)).sort()).toEqual(projections);
  });
});

describe('node(id)', () => {
  it('finds an object of every type by the id REST shows, for a member with the role of the type’s own field', async () => {
    for (const [type, id] of Object.entries(ids)) {
      // The Admin types (members, audit log) as the Owner; the user's own things as that user (the Viewer).
      const token = type === 'Notification' || type === 'User' ? t.viewer.token : t.owner.token;
      const res = await gql(NODE, { id }, token);
      expect(res.body.errors, `${type}: ${res.text}`).toBeUndefined();
      expect(res.body.data.node, type).toMatchObject({ __typename: type, id });
    }
    const receipt = await gql(NODE, { id: ids.Receipt }, t.viewer.token);
    expect(receipt.body.data.node).toEqual({ __typename: 'Receipt', id: ids.Receipt, versionNumber: 1, installationId: 'node-install' });
    // A scan as `scan(projectId, scanId)` gives it: to a Viewer of its project.
    const scan = await gql(NODE, { id: ids.Scan }, t.viewer.token);
    expect(scan.body.data.node).toEqual({ __typename: 'Scan', id: ids.Scan, status: 'failed', projectId: t.project.id });
    const member = await gql(NODE, { id: ids.OrganizationMember }, t.admin.token);
    expect(member.body.data.node).toEqual({ __typename: 'OrganizationMember', id: ids.OrganizationMember, email: t.viewer.email, role: 'VIEWER' });
  });

  it('gives a non-member what the type’s own field gives a non-member: null with not_found, for every type', async () => {
    for (const [type, id] of Object.entries(ids)) {
      const res = await gql(NODE, { id }, t.outsider.token);
      expect(res.body.data, type).toEqual({ node: null });
      expect(res.body.errors, type).toEqual([expect.objectContaining({ path: ['node'], message: 'Node not found', extensions: { code: 'not_found' } })]);
    }
    // The types' own fields agree (not_found for the outsider).
    for (const field of [`organization(id: "${t.org.id}") { id }`, `project(id: "${t.project.id}") { id }`, `receipts(projectId: "${t.project.id}") { nextCursor }`]) {
      const own = await gql(`{ ${field} }`, {}, t.outsider.token);
      expect(own.body.errors[0].extensions.code, field).toBe('not_found');
    }
    const unknown = await gql(NODE, { id: '01a20000-0000-7000-8000-000000000000' }, t.owner.token);
    expect(unknown.body).toEqual({ data: { node: null }, errors: [expect.objectContaining({ extensions: { code: 'not_found' } })] });
  });

  it('refuses a member below the role of the type’s own field as that field does (forbidden), and others’ own things (not_found)', async () => {
    for (const type of ['OrganizationMember', 'AuditEvent']) {
      const res = await gql(NODE, { id: ids[type] }, t.viewer.token);
      expect(res.body.data, type).toEqual({ node: null });
      expect(res.body.errors[0].extensions.code, type).toBe('forbidden');
    }
    const members = await gql('query($id: ID!) { organization(id: $id) { members { id } } }', { id: t.org.id }, t.viewer.token);
    expect(members.body.errors[0].extensions.code).toBe('forbidden');
    for (const type of ['Notification', 'User']) {
      const res = await gql(NODE, { id: ids[type] }, t.owner.token);
      expect(res.body.data, type).toEqual({ node: null });
      expect(res.body.errors[0].extensions.code, type).toBe('not_found');
    }
    const anonymous = await gql(NODE, { id: t.project.id });
    expect(anonymous.body.errors[0].extensions.code).toBe('unauthorized');
  });
});

describe('nodes(ids)', () => {
  it('answers in order, each id alone: one the viewer may not see is null with its own error, the others answer', async () => {
    const query = 'query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }';
    const wanted = [ids.Project!, ids.AuditEvent!, ids.Receipt!, 'no-such-id', ids.Project!];
    const res = await gql(query, { ids: wanted }, t.viewer.token);
    expect(res.body.data.nodes).toEqual([
      { __typename: 'Project', id: ids.Project },
      null,
      { __typename: 'Receipt', id: ids.Receipt },
      null,
      { __typename: 'Project', id: ids.Project },
    ]);
    expect(res.body.errors).toEqual([
      expect.objectContaining({ path: ['nodes', 1], extensions: { code: 'forbidden' } }),
      expect.objectContaining({ path: ['nodes', 3], extensions: { code: 'not_found' } }),
    ]);
    const every = await gql(query, { ids: Object.values(ids) }, t.owner.token);
    expect(every.body.data.nodes.map((node: { __typename: string } | null) => node?.__typename ?? null)).toEqual(
      Object.keys(ids).map((type) => (type === 'Notification' || type === 'User' ? null : type)),
    );
    const tooMany = await gql(query, { ids: Array.from({ length: 101 }, (_, i) => `id-${i}`) }, t.owner.token);
    expect(tooMany.body.errors[0].extensions).toMatchObject({ code: 'validation_failed' });
  });

  it('counts its ids in the cost limit: 30 aliases of 100 receipt ids are refused like the same 3,000 rows through connections', async () => {
    const hundred = Array.from({ length: 100 }, () => ids.Receipt!);
    const fields = '... on Receipt { id versionNumber installationId createdAt choices }';
    const aliases = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: nodes(ids: $ids) { ${fields} }`).join(' ');
    const wide = await gql(`query($ids: [ID!]!) { ${aliases(30)} }`, { ids: hundred }, t.owner.token);
    expect(wide.body.data).toBeUndefined();
    expect(wide.body.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/cost \d+ exceeds the limit of 5000/), extensions: { code: 'query_too_complex' } })]);
    // Fewer ids stay under the limit and answer.
    const narrow = await gql(`query($ids: [ID!]!) { ${aliases(2)} }`, { ids: hundred }, t.owner.token);
    expect(narrow.body.errors).toBeUndefined();
    expect(narrow.body.data.a1).toHaveLength(100);
  });

  it('costs a fixed number of statements: one finds the types of every id, then one read per type present', async () => {
    const keys = await Promise.all([1, 2, 3].map((i) => createKey(server, t.owner.token, t.project.id, `Key ${i}`)));
    // The fewest of three tries: a background worker's poll (webhook outbox, sealing) landing inside the window
    // only ever adds a statement.
    const statements = async (wanted: string[]) => {
      const counts: number[] = [];
      for (let i = 0; i < 3; i++)
        counts.push(
          await statementsDuring(server, async () => {
            const res = await gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: wanted }, t.owner.token);
            expect(res.body.errors).toBeUndefined();
          }),
        );
      return Math.min(...counts);
    };
    const one = await statements([keys[0]!.id]);
    expect(await statements(keys.map((key) => key.id))).toBe(one);
    // Every type at once: the same count with more ids of a type already present.
    const owned = Object.entries(ids).filter(([type]) => type !== 'Notification' && type !== 'User').map(([, id]) => id);
    expect(await statements([...owned, ...keys.map((key) => key.id)])).toBe(await statements(owned));
  });
});

describe('receipt ids of any time a uuidv7 can carry', () => {
  // 48 bits of milliseconds reach the year 10889; PostgreSQL holds timestamps to 294276 but the driver sends a
  // Date past 9999 as `+010889-…`, which it refuses: such an id once answered 500 and broke a whole nodes call.
  const MAX_MS = 2 ** 48 - 1;
  const YEAR_10000 = Date.UTC(10000, 0, 1);
  const edgeTimes = fc.oneof(
    fc.constantFrom(0, 1, Date.now(), Date.UTC(9999, 11, 31), Date.UTC(9999, 11, 31, 23, 59, 59, 999), YEAR_10000 - 1, YEAR_10000, MAX_MS - 1, MAX_MS),
    fc.integer({ min: 0, max: MAX_MS }),
  );
  const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });
  const uuidv7 = fc
    .tuple(edgeTimes, hex(3), fc.constantFrom('8', '9', 'a', 'b'), hex(3), hex(12))
    .map(([ms, a, variant, b, c]) => {
      const time = ms.toString(16).padStart(12, '0');
      return `${time.slice(0, 8)}-${time.slice(8)}-7${a}-${variant}${b}-${c}`;
    });

  it('is 404 on the receipt proof route and null with not_found in nodes, next to a receipt that answers (fast-check)', async () => {
    expect(await gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: ['ffffffff-ffff-7fff-bfff-ffffffffffff'] }, t.owner.token)).toMatchObject({
      status: 200,
      body: { data: { nodes: [null] } },
    });
    await fc.assert(
      fc.asyncProperty(fc.array(uuidv7, { minLength: 1, maxLength: 5 }), async (wanted) => {
        const proof = await server.request('GET', `/api/platform/projects/${t.project.id}/receipts/${wanted[0]}/proof`, { token: t.owner.token });
        expect(proof.status, proof.text).toBe(404);
        const res = await gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: [...wanted, ids.Receipt!] }, t.owner.token);
        expect(res.status).toBe(200);
        expect(res.body.data.nodes).toEqual([...wanted.map(() => null), { id: ids.Receipt }]);
        expect(res.body.errors.map((error: { extensions: { code: string } }) => error.extensions.code)).toEqual(wanted.map(() => 'not_found'));
      }),
      { numRuns: 15, ...(process.env.FC_SEED && { seed: Number(process.env.FC_SEED) }) },
    );
  });
});
