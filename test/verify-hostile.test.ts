// consent-verify read by someone who wants it to fail (issue 37): it trusts only the keys the auditor chose,
// survives hostile numbers and nesting, says what "verified" covers, and refuses a retired key's signature.
// The CLI runs as a child process on real exports of a test server, tampered with and re-signed here.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointMessage } from '../verify/ledger.mjs';
import { loadConfig } from '../src/config.js';
import { openLedgerSigner, publicJwkOf } from '../src/ledger/keys.js';
import { sealDue } from '../src/ledger/seal.js';
import type { Services } from '../src/services.js';
import { sdkTeam } from './helpers/sdk.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'verify-hostile-'));
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

type Team = Awaited<ReturnType<typeof sdkTeam>>;
type Entry = Record<string, any>;

const oldKey = generateKeyPairSync('ed25519').privateKey;
const newKey = generateKeyPairSync('ed25519').privateKey;
let server: TestServer;
let rotated: Services;
let t: Team;
let exported: string;
let keysFile: string;
let keysDocument: { keys: Array<{ kid: string; notBefore: string | null; notAfter: string | null }> };

let visitor = 0;
async function record(team: Team, count: number) {
  for (let i = 0; i < count; i++) expect((await team.post(`hostile-visitor-${visitor++}`)).status).toBe(201);
}
const sealed = async (services: Services, team: Team) => (await sealDue(services)).filter((c) => c.projectId === team.project.id);
async function exportOf(team: Team, query = '') {
  const res = await fetch(`${server.url}/api/platform/projects/${team.project.id}/receipts/export?format=ledger${query}`, {
    headers: { authorization: `Bearer ${team.viewer.token}` },
  });
  expect(res.status).toBe(200);
  return res.text();
}

beforeAll(async () => {
  server = await startTestServer({ ledger: { signingKey: oldKey, publicKeys: [], sealIntervalMs: 3_600_000 } });
  t = await sdkTeam(server);
  // Checkpoints 1 and 2 signed with the old key; then a rotation (a restart with a new key), checkpoints 3 and 4.
  await record(t, 3);
  await sealed(server.services, t);
  await record(t, 2);
  await sealed(server.services, t);
  const keyFile = file('new-key.pem', newKey.export({ format: 'pem', type: 'pkcs8' }).toString());
  rotated = { ...server.services, config: { ...server.services.config, ledger: loadConfig({ LEDGER_SIGNING_KEY_FILE: keyFile }).ledger } };
  await openLedgerSigner(rotated);
  await record(t, 2);
  expect((await sealed(rotated, t)).map((c) => c.sequence)).toEqual([3]);
  await record(t, 1);
  expect((await sealed(rotated, t)).map((c) => c.sequence)).toEqual([4]);
  exported = await exportOf(t);
  keysDocument = (await server.request('GET', '/.well-known/consent-ledger-keys.json')).body;
  keysFile = file('keys.json', JSON.stringify(keysDocument));
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (text = exported) => text.trimEnd().split('\n');
const entries = (text = exported): Entry[] => lines(text).map((line) => JSON.parse(line));
const join_ = (all: Entry[]) => `${all.map((e) => JSON.stringify(e)).join('\n')}\n`;
const checkpointIndex = (all: Entry[], sequence: number) => all.findIndex((e) => e.type === 'checkpoint' && e.checkpoint.sequence === sequence);
const resign = (checkpoint: Entry, key: KeyObject) => {
  checkpoint.keyId = publicJwkOf(key).kid;
  checkpoint.signature = sign(null, Buffer.from(checkpointMessage(checkpoint as never)), key).toString('base64');
};

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['verify/consent-verify.mjs', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
const json = async (args: string[]) => {
  const result = await cli([...args, '--json']);
  return { code: result.code, answer: JSON.parse(result.stdout || 'null'), stderr: result.stderr };
};

describe('the keys are the auditor’s', () => {
  let forger: Server;
  let forgerUrl: string;
  const forgerKey = generateKeyPairSync('ed25519').privateKey;
  beforeAll(async () => {
    forger = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [{ ...publicJwkOf(forgerKey), notBefore: null, notAfter: null }] }));
    });
    await new Promise<void>((resolve) => forger.listen(0, '127.0.0.1', resolve));
    forgerUrl = `http://127.0.0.1:${(forger.address() as { port: number }).port}/keys.json`;
  });
  afterAll(() => new Promise((resolve) => forger.close(resolve)));

  it('refuses an export alone, even one whose header points at keys that would verify it (exit 2)', async () => {
    // A forger edits a receipt, re-seals and re-signs the whole chain with their key, and points the header at it.
    const all = entries();
    all[0]!.keys = forgerUrl;
    const receipt = all.find((e) => e.type === 'receipt')!;
    receipt.receipt.choices.analytics = !receipt.receipt.choices.analytics;
    const forged = file('forged.ndjson', join_(all));
    const alone = await cli([forged]);
    expect(alone.code).toBe(2);
    expect(alone.stdout).toBe('');
    expect(alone.stderr.split('\n')[0]).toBe(
      "consent-verify: no keys given: pass --keys <file> (the keys document you keep) or --keys-url <url> (an address you choose). The export's header names a keys address, but the header is not signed: keys fetched from it would let whoever wrote the file choose the keys that check it",
    );
    // With the keys the auditor kept, the forger's key is unknown.
    for (const e of all) if (e.type === 'checkpoint') resign(e.checkpoint, forgerKey);
    writeFileSync(forged, join_(all));
    const kept = await cli([forged, '--keys', keysFile]);
    expect(kept.code).toBe(1);
    expect(kept.stdout).toMatch(/^FAIL unknown_key: checkpoint 1 \(line \d+\): signed by key \S+, which is not among the trusted keys$/m);
    // Keys from an address given on the command line are used, and the answer names where they came from.
    const named = await json([forged, '--keys-url', forgerUrl]);
    expect(named.answer.keys).toEqual({ url: forgerUrl, origin: new URL(forgerUrl).origin });
    const text = await cli([file('genuine.ndjson', exported), '--keys-url', `${server.url}/.well-known/consent-ledger-keys.json`]);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toContain(`  keys:        ${new URL(server.url).origin} (fetched now from ${server.url}/.well-known/consent-ledger-keys.json, the address you gave)`);
  });
});

describe('hostile numbers', () => {
  it('checks a checkpoint’s count against what one checkpoint seals before using it (1,000,000,000 leaves)', async () => {
    const all = entries();
    all[checkpointIndex(all, 2)]!.checkpoint.count = 1_000_000_000;
    const { code, answer } = await json([file('count.ndjson', join_(all)), '--keys', keysFile]);
    expect(code).toBe(1);
    expect(answer.problems[0]).toMatchObject({ code: 'malformed', message: expect.stringMatching(/^checkpoint on line \d+: count 1000000000 is not 1 to 10000 \(what one checkpoint seals\)/) });
    expect(answer.problems.length + answer.moreProblems).toBeLessThan(10);
  });

  it('caps the problems it lists, and says how many more', async () => {
    const all = entries();
    const template = all.find((e) => e.type === 'receipt')!;
    const forged = Array.from({ length: 250 }, (_, i) => ({ ...template, receipt: { ...template.receipt, id: `forged-${i}` } }));
    all.splice(1, 0, ...forged);
    const path = file('many.ndjson', join_(all));
    const { answer } = await json([path, '--keys', keysFile]);
    expect(answer.problems).toHaveLength(100);
    expect(answer.moreProblems).toBeGreaterThan(150);
    const text = await cli([path, '--keys', keysFile]);
    expect(text.stdout.match(/^FAIL /gm)).toHaveLength(100);
    expect(text.stdout).toContain(`… and ${answer.moreProblems} more problem(s) not shown`);
  });

  it('ends deep nesting with one line and exit 2, never a stack trace', async () => {
    const all = lines();
    const deep = `{"type":"receipt","leafIndex":0,"path":[],"receipt":{"id":"deep","choices":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
    all.splice(1, 0, deep);
    const result = await cli([file('deep.ndjson', `${all.join('\n')}\n`), '--keys', keysFile]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('consent-verify: line 2: JSON nested deeper than 32 levels, which the service never writes\n');
    // The same for a keys document.
    const keys = await cli([file('plain.ndjson', exported), '--keys', file('deep-keys.json', `${'['.repeat(100_000)}${']'.repeat(100_000)}`)]);
    expect(keys.code).toBe(2);
    expect(keys.stderr).toMatch(/^consent-verify: --keys .*deep-keys\.json: JSON nested deeper than 32 levels, which the service never writes\n$/);
  });

  it('skips a line longer than any the service writes, and a path longer than a tree of 10,000 leaves has', async () => {
    const all = entries();
    const receiptAt = all.findIndex((e) => e.type === 'receipt');
    all[receiptAt]!.path = Array(15).fill('ab'.repeat(32));
    const text = join_(all).trimEnd().split('\n');
    text.splice(2, 0, `{"type":"receipt","padding":"${'x'.repeat(2 << 20)}"}`);
    const { code, answer } = await json([file('long.ndjson', `${text.join('\n')}\n`), '--keys', keysFile]);
    expect(code).toBe(1);
    expect(answer.problems.map((p: { code: string }) => p.code)).toEqual(['malformed', 'receipt_edited']);
    expect(answer.problems[0].message).toBe('line 3: longer than 1048576 bytes, which no line of the service\'s export is');
    expect(answer.problems[1]).toMatchObject({ line: 2, receiptId: all[receiptAt]!.receipt.id });
  });
});

describe('what “verified” covers', () => {
  it('names the project, the first and last checkpoint, the last root and time, and the keys', async () => {
    const last = entries().filter((e) => e.type === 'checkpoint').at(-1)!.checkpoint;
    const path = file('export.ndjson', exported);
    const { code, answer } = await json([path, '--keys', keysFile]);
    expect(code).toBe(0);
    expect(answer).toMatchObject({
      ok: true,
      project: t.project.id,
      first: { sequence: 1 },
      last: { sequence: 4, root: last.root, createdAt: last.createdAt },
      startsAtFirst: true,
      checkpoints: 4,
      receipts: 8,
      keys: { file: keysFile },
      notes: [],
    });
    const text = await cli([path, '--keys', keysFile]);
    expect(text.stdout).toBe(
      [
        'OK: 8 receipts in 4 checkpoints verified',
        `  project:     ${t.project.id}`,
        '  checkpoints: 1 to 4',
        `  last:        checkpoint 4, root ${last.root}, sealed ${last.createdAt}`,
        `  keys:        the file ${keysFile}`,
        '',
      ].join('\n'),
    );
  });

  it('checks a single proof against the keys given, and names its receipt and checkpoint', async () => {
    const all = entries();
    const line = all.find((e) => e.type === 'receipt')!;
    const checkpoint = all[checkpointIndex(all, 1)]!.checkpoint;
    const proof = file('proof.json', JSON.stringify({ receipt: line.receipt, proof: { leafIndex: line.leafIndex, treeSize: checkpoint.count, path: line.path }, checkpoint }));
    const ok = await cli(['--proof', proof, '--keys', keysFile]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toBe(`OK: proof of receipt ${line.receipt.id} in checkpoint 1 of project ${t.project.id} verified against keys from the file ${keysFile}\n`);
    const alone = await cli(['--proof', proof]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/^consent-verify: no keys given/);
  });

  it('--head: passes when the export holds the kept checkpoint, fails when it stops short of it or disagrees', async () => {
    const checkpoints = entries().filter((e) => e.type === 'checkpoint').map((e) => e.checkpoint);
    const path = file('export.ndjson', exported);
    const held = await cli([path, '--keys', keysFile, '--head', `2:${checkpoints[1].root}`]);
    expect(held.code).toBe(0);
    expect(held.stdout).toContain('  head:        checkpoint 2 is in the export with the root you kept');
    const other = await json([path, '--keys', keysFile, '--head', `3:${'cd'.repeat(32)}`]);
    expect(other.code).toBe(1);
    expect(other.answer.problems).toEqual([expect.objectContaining({ code: 'head_mismatch', sequence: 3 })]);

    // Cut short: the last checkpoint, its receipts, and an end line made to match. It still verifies alone...
    const all = entries();
    const cut = all.slice(0, checkpointIndex(all, 2) + 1);
    cut.push({ type: 'end', checkpoints: 2, receipts: cut.filter((e) => e.type === 'receipt').length });
    const short = file('short.ndjson', join_(cut));
    expect((await cli([short, '--keys', keysFile])).code).toBe(0);
    // ...but not against the checkpoint the auditor kept.
    const missing = await json([short, '--keys', keysFile, '--head', `3:${checkpoints[2].root}`]);
    expect(missing.code).toBe(1);
    expect(missing.answer.problems).toEqual([
      expect.objectContaining({
        code: 'head_missing',
        message: `checkpoint 3 (root ${checkpoints[2].root}), which you kept, is missing: the export ends at checkpoint 2: it was cut short, or made before that checkpoint`,
      }),
    ]);
    expect((await cli([short, '--keys', keysFile, '--head', 'three'])).code).toBe(2);
  });

  it('says so when an export does not start at checkpoint 1', async () => {
    const from = entries().filter((e) => e.type === 'checkpoint')[1]!.checkpoint.createdAt;
    const path = file('window.ndjson', await exportOf(t, `&from=${from}`));
    const { code, answer } = await json([path, '--keys', keysFile]);
    expect(code).toBe(0);
    expect(answer).toMatchObject({ first: { sequence: 2 }, startsAtFirst: false, notes: ['the export starts at checkpoint 2, not 1: checkpoints 1 to 1 are not covered'] });
    expect((await cli([path, '--keys', keysFile])).stdout).toContain('  checkpoints: 2 to 4 (not from 1: checkpoints 1 to 1 are not in this export)');
  });
});

describe('key validity and rotation', () => {
  it('publishes each key’s validity: the old key ends where the new one begins', () => {
    const byKid = new Map(keysDocument.keys.map((k) => [k.kid, k]));
    const before = byKid.get(publicJwkOf(oldKey).kid)!;
    const after = byKid.get(publicJwkOf(newKey).kid)!;
    expect(before.notBefore).toEqual(expect.any(String));
    expect(before.notAfter).toBe(after.notBefore);
    expect(after.notAfter).toBeNull();
    const checkpoints = entries().filter((e) => e.type === 'checkpoint').map((e) => e.checkpoint);
    expect(checkpoints.map((c) => c.keyId)).toEqual([before.kid, before.kid, after.kid, after.kid]);
    expect(Date.parse(checkpoints[1].createdAt)).toBeLessThan(Date.parse(after.notBefore!));
    expect(Date.parse(checkpoints[2].createdAt)).toBeGreaterThanOrEqual(Date.parse(after.notBefore!));
  });

  it('refuses a checkpoint re-signed with the retired key after the new one took over, also backdated into its validity', async () => {
    const all = entries();
    resign(all[checkpointIndex(all, 4)]!.checkpoint, oldKey);
    const late = await json([file('retired.ndjson', join_(all)), '--keys', keysFile]);
    expect(late.code).toBe(1);
    expect(late.answer.problems.map((p: { code: string }) => p.code)).toEqual(['key_not_valid', 'key_superseded']);
    expect(late.answer.problems[0].message).toContain(`after the key was retired (notAfter ${keysDocument.keys.find((k) => k.kid === publicJwkOf(oldKey).kid)!.notAfter})`);
    // Dated back into the old key's validity, the chain still shows a retired key signing after its successor.
    const backdated = entries();
    const checkpoint = backdated[checkpointIndex(backdated, 4)]!.checkpoint;
    checkpoint.createdAt = backdated[checkpointIndex(backdated, 2)]!.checkpoint.createdAt;
    resign(checkpoint, oldKey);
    const { answer } = await json([file('backdated.ndjson', join_(backdated)), '--keys', keysFile]);
    expect(answer.problems).toEqual([
      expect.objectContaining({
        code: 'key_superseded',
        sequence: 4,
        message: expect.stringContaining(`which key ${publicJwkOf(newKey).kid} took over from at checkpoint 3 of this chain: a retired key signing again`),
      }),
    ]);
  });

  it('refuses a new project’s checkpoint signed with the retired key (outside its validity), and the service never makes one', async () => {
    const fresh = await sdkTeam(server);
    await record(fresh, 1);
    // The old key's instance is retired: it seals nothing; the new key's instance seals.
    expect(await sealed(server.services, fresh)).toEqual([]);
    expect((await sealed(rotated, fresh)).map((c) => c.keyId)).toEqual([publicJwkOf(newKey).kid]);
    const all = entries(await exportOf(fresh));
    resign(all[checkpointIndex(all, 1)]!.checkpoint, oldKey);
    const { answer } = await json([file('fresh.ndjson', join_(all)), '--keys', keysFile]);
    expect(answer.problems.map((p: { code: string }) => p.code)).toEqual(['key_not_valid']);
  });
});
