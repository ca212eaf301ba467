import { createHash, randomBytes } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evidenceRoutes } from '../rest/routes/evidence.js';
import { writerReceipt } from './helpers/receipts.js';
import { receiptWriter } from '../src/sdk/receipt-writer.js';
import { evidencePath, NOTICE, publish, putDraft, type Version } from './helpers/consent.js';
import { team, type Operator } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
type Team = Awaited<ReturnType<typeof team>>;
let t: Team;
let v1: Version;
let v2: Version;

const HOSTILE = `<script>alert("x")</script> & 'quotes'`;

beforeAll(async () => {
  server = await startTestServer();
  t = await team(server);
  await putDraft(server, t.admin, t.project.id);
  v1 = await publish(server, t.admin, t.project.id);
  // Operator text with markup: every rendering must keep it inert.
  await putDraft(server, t.admin, t.project.id, {
    categories: [{ ref: 'm', name: `Marketing ${HOSTILE}`, sortOrder: 0 }],
    purposes: [
      { key: 'ads', name: `Ads ${HOSTILE}`, description: '=HYPERLINK("http://evil.example")', required: false, categoryId: 'm', sortOrder: 0 },
    ],
    notice: { ...NOTICE, title: `Privacy ${HOSTILE}` },
  });
  v2 = await publish(server, t.owner, t.project.id);
});
afterAll(() => server?.close());

const get = (actor: Operator | null, path: string) => server.request('GET', evidencePath(t.project.id, path), { token: actor?.token });
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Records receipts through the receipt writer, as the SDK route does (the route is another domain's): the
 * evidence counts them from the analytics rollup the writer keeps in the receipts' own statement.
 */
async function addReceipts(version: Version, createdAt: Date[]) {
  const key = await server.services.db.prisma.apiKey.create({
    data: { projectId: t.project.id, prefix: 'pk_live_test00', secretHash: randomBytes(16).toString('hex') },
  });
  const writer = receiptWriter(server.services);
  for (const at of createdAt) {
    await writer.write(
      writerReceipt({
        projectId: t.project.id,
        versionId: version.id,
        versionNumber: version.number,
        consentHash: version.consentHash,
        installationId: 'inst_12345678',
        decision: 'rejectedAll',
        apiKeyId: key.id,
        createdAt: at,
      }),
    );
  }
}

describe('publish evidence', () => {
  it('lists one summary per version, newest first', async () => {
    const response = await get(t.viewer, '');
    expect(response.status).toBe(200);
    const publisher = (who: Operator, name: string) => ({ id: who.id, email: who.email, name });
    expect(response.body).toEqual({
      evidence: [
        { versionId: v2.id, number: 2, publishedAt: v2.publishedAt, publishedBy: publisher(t.owner, 'Owner'), contentHash: v2.contentHash, consentHash: v2.consentHash },
        { versionId: v1.id, number: 1, publishedAt: v1.publishedAt, publishedBy: publisher(t.admin, 'Admin'), contentHash: v1.contentHash, consentHash: v1.consentHash },
      ],
    });
  });

  it('gives the package of a version, whose packageHash anyone can recompute', async () => {
    const response = await get(t.viewer, `/${v1.id}`);
    expect(response.status).toBe(200);
    const { evidence } = response.body;
    expect(Object.keys(evidence).sort()).toEqual(['config', 'firstReceiptAt', 'hashes', 'publishedBy', 'receiptsCount', 'version']);
    expect(evidence.version).toEqual(v1);
    expect(evidence.publishedBy).toEqual({ id: t.admin.id, email: t.admin.email, name: 'Admin' });
    expect(evidence.config.notice).toEqual(NOTICE);
    expect(evidence.config.purposes.map((p: { key: string }) => p.key)).toEqual(['necessary', 'analytics', 'ads']);
    expect(evidence.hashes).toEqual({ contentHash: v1.contentHash, consentHash: v1.consentHash, packageHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(evidence.receiptsCount).toBe(0);
    expect(evidence.firstReceiptAt).toBeNull();

    const { packageHash, ...otherHashes } = evidence.hashes;
    expect(sha256(canonicalize({ ...evidence, hashes: otherHashes })!)).toBe(packageHash);
    // contentHash re-checks against the config inside the package.
    expect(sha256(canonicalize({ number: 1, config: evidence.config })!)).toBe(v1.contentHash);
  });

  it('counts the receipts recorded against that version, and the packageHash follows', async () => {
    const before = (await get(t.viewer, `/${v2.id}`)).body.evidence;
    await addReceipts(v2, [new Date('2026-11-24T08:00:00.250Z'), new Date('2026-11-23T09:30:00.125Z'), new Date('2026-11-25T00:00:00.000Z')]);
    const after = (await get(t.viewer, `/${v2.id}`)).body.evidence;
    expect(after.receiptsCount).toBe(3);
    expect(after.firstReceiptAt).toBe('2026-11-23T09:30:00.125Z');
    expect(after.hashes.packageHash).not.toBe(before.hashes.packageHash);
    const { packageHash, ...otherHashes } = after.hashes;
    expect(sha256(canonicalize({ ...after, hashes: otherHashes })!)).toBe(packageHash);
    expect((await get(t.viewer, `/${v1.id}`)).body.evidence.receiptsCount).toBe(0);
  });

  it('answers 404 for a version of another project or none at all', async () => {
    const other = await team(server);
    await putDraft(server, other.admin, other.project.id);
    const foreign = await publish(server, other.admin, other.project.id);
    expect((await get(t.owner, `/${foreign.id}`)).status).toBe(404);
    expect((await get(t.owner, '/no-such-version')).body.code).toBe('not_found');
  });
});

describe('downloads', () => {
  it('serves the JSON package as an attachment with download=1', async () => {
    const plain = await get(t.viewer, `/${v2.id}`);
    const response = await get(t.viewer, `/${v2.id}?format=json&download=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="consent-evidence-${t.project.slug}-v2.json"`);
    expect(response.body).toEqual(plain.body);
    // Without download the JSON is the plain response.
    const inline = await get(t.viewer, `/${v2.id}?format=json`);
    expect(inline.headers.get('content-disposition')).toBeNull();
    expect(inline.body).toEqual(plain.body);
  });

  it('serves html as a printable self-contained page with all operator text escaped', async () => {
    const response = await get(t.viewer, `/${v2.id}?format=html&download=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="consent-evidence-${t.project.slug}-v2.html"`);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = response.text;
    expect(html).not.toContain('<script');
    expect(html).toContain('Ads &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;');
    expect(html).toContain('Privacy &lt;script&gt;');
    expect(html).toContain('Marketing &lt;script&gt;');
    // No external resource of any kind.
    expect(html).not.toMatch(/<(link|img|iframe|object|embed)\b|src=|url\(/i);
    expect(html).toContain('@media print');
    const evidence = (await get(t.viewer, `/${v2.id}`)).body.evidence;
    for (const hash of Object.values(evidence.hashes) as string[]) expect(html).toContain(hash);
    expect(html).toContain(t.owner.email);
    expect(html).toContain(v2.publishedAt);

    const inline = await get(t.viewer, `/${v2.id}?format=html`);
    expect(inline.headers.get('content-disposition')).toMatch(/^inline; filename=/);
    expect(inline.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('serves csv: a field,value block, a purposes table and a categories table', async () => {
    const response = await get(t.viewer, `/${v2.id}?format=csv&download=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="consent-evidence-${t.project.slug}-v2.csv"`);
    const blocks = parseCsv(response.text);
    expect(blocks).toHaveLength(3);
    const [fields, purposes, categories] = blocks as [string[][], string[][], string[][]];
    expect(fields[0]).toEqual(['field', 'value']);
    const value = Object.fromEntries(fields.slice(1).map(([field, v]) => [field, v]));
    const { evidence } = (await get(t.viewer, `/${v2.id}`)).body;
    expect(value).toMatchObject({
      'project.id': t.project.id,
      'project.name': t.project.name,
      'version.id': v2.id,
      'version.number': '2',
      'version.publishedAt': v2.publishedAt,
      'publishedBy.email': t.owner.email,
      'hashes.contentHash': v2.contentHash,
      'hashes.consentHash': v2.consentHash,
      'hashes.packageHash': evidence.hashes.packageHash,
      'receiptsCount': String(evidence.receiptsCount),
      'notice.title': `Privacy ${HOSTILE}`,
      'notice.primaryColor': NOTICE.primaryColor,
    });
    expect(value.generatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(purposes[0]).toEqual(['purpose.key', 'purpose.name', 'purpose.description', 'purpose.required', 'purpose.category', 'purpose.sortOrder', 'purpose.id', 'purpose.categoryId']);
    // A description a spreadsheet would run as a formula is neutralised with a leading apostrophe.
    expect(purposes[1]).toEqual([
      'ads',
      `Ads ${HOSTILE}`,
      `'=HYPERLINK("http://evil.example")`,
      'false',
      `Marketing ${HOSTILE}`,
      '0',
      evidence.config.purposes[0].id,
      evidence.config.categories[0].id,
    ]);
    expect(categories).toEqual([['category.id', 'category.name', 'category.sortOrder'], [evidence.config.categories[0].id, `Marketing ${HOSTILE}`, '0']]);
  });

  it('refuses an unknown format with 400 validation_failed, but only to those who may read', async () => {
    const response = await get(t.viewer, `/${v1.id}?format=pdf&download=1`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'validation_failed', details: [{ path: ['format'] }] });
    expect((await get(t.outsider, `/${v1.id}?format=pdf`)).status).toBe(404);
    expect((await get(null, `/${v1.id}?format=pdf`)).status).toBe(401);
  });
});

describe('access', () => {
  it('lets Viewers and above read every evidence route; outsiders get 404, no session 401', async () => {
    const paths = ['', `/${v1.id}`, `/${v1.id}?format=html&download=1`, `/${v1.id}?format=csv`, `/${v1.id}?format=json&download=1`];
    for (const path of paths) {
      for (const [actor, status] of [[null, 401], [t.outsider, 404], [t.viewer, 200], [t.admin, 200], [t.owner, 200]] as const) {
        const response = await get(actor, path);
        expect(response.status, `${path} as ${actor?.email ?? 'nobody'}`).toBe(status);
        if (typeof response.body === 'object') {
          // Exactly the declared OpenAPI shape (parsing drops undeclared keys).
          const documented = evidenceRoutes[path ? 1 : 0]!.responses[status]!;
          const schema = (documented.schema ?? documented.content!['application/json'])!;
          expect(schema.parse(response.body)).toEqual(response.body);
        }
      }
    }
  });

  it('GraphQL serves the same package', async () => {
    const response = await server.request('POST', '/graphql', {
      token: t.viewer.token,
      body: {
        query: `query($p: ID!, $v: ID!) { publishEvidencePackage(projectId: $p, versionId: $v) { version { number } hashes { packageHash } receiptsCount } }`,
        variables: { p: t.project.id, v: v1.id },
      },
    });
    const rest = (await get(t.viewer, `/${v1.id}`)).body.evidence;
    expect(response.body.data.publishEvidencePackage).toEqual({
      version: { number: 1 },
      hashes: { packageHash: rest.hashes.packageHash },
      receiptsCount: rest.receiptsCount,
    });
    const outsider = await server.request('POST', '/graphql', {
      token: t.outsider.token,
      body: { query: `query($p: ID!) { publishEvidence(projectId: $p) { number } }`, variables: { p: t.project.id } },
    });
    expect(outsider.body.errors[0].extensions.code).toBe('not_found');
  });

  it('the notification of a publish links to its evidence', async () => {
    const row = await server.services.db.prisma.notification.findFirstOrThrow({ where: { userId: t.viewer.id, title: 'Version 2 published' } });
    const response = await server.request('GET', row.link!, { token: t.viewer.token });
    expect(response.status).toBe(200);
    expect(response.body.evidence.version.id).toBe(v2.id);
  });
});

/** RFC 4180 with blank lines separating blocks: returns the blocks' rows. */
function parseCsv(text: string): string[][][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\n') row.push(cell), rows.push(row), (row = []), (cell = '');
    else if (ch !== '\r') cell += ch;
  }
  if (cell || row.length) row.push(cell), rows.push(row);
  const blocks: string[][][] = [[]];
  for (const r of rows) {
    if (r.length === 1 && r[0] === '') blocks.push([]);
    else blocks.at(-1)!.push(r);
  }
  return blocks.filter((block) => block.length);
}
