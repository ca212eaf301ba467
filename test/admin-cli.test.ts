import { execFile, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator, organization, type Operator } from './helpers/fixtures.js';
import { freshDatabaseUrl, onPostgres, startTestServer, type TestServer } from './helpers/server.js';
import { migratedDataDir } from './helpers/service-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The compiled tool `npm run admin` runs (test/helpers/build-service.ts builds dist/ before the suite); one test
// goes through npm itself.
const CLI = join(ROOT, 'dist', 'src', 'admin', 'cli.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the admin tool as a separate process with the server's database configuration. */
function cli(env: Record<string, string>, args: string[], via: 'node' | 'npm' = 'node'): Promise<Run> {
  const [command, argv] = via === 'npm' ? ['npm', ['run', '--silent', 'admin', '--', ...args]] : [process.execPath, [CLI, ...args]];
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(command, argv, { cwd: ROOT, env: { ...inherited, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const hasPsql = spawnSync('psql', ['--version']).status === 0;

// The same scenario on each database the tool can reach: PostgreSQL by DATABASE_URL, and the
// embedded database on disk, which the running server exposes on a Unix socket in DATA_DIR.
const setups: { name: string; enabled: boolean; start(): Promise<{ server: TestServer; env: Record<string, string>; cleanup?: () => void }> }[] = [
  {
    name: 'embedded database (DATA_DIR, through the running server)',
    enabled: true,
    async start() {
      const dataDir = migratedDataDir('admin-cli-');
      const server = await startTestServer({ databaseUrl: undefined, dataDir });
      return { server, env: { DATA_DIR: dataDir }, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'PostgreSQL (DATABASE_URL)',
    enabled: onPostgres,
    async start() {
      const databaseUrl = (await freshDatabaseUrl())!;
      const server = await startTestServer({ databaseUrl });
      return { server, env: { DATABASE_URL: databaseUrl } };
    },
  },
];

for (const setup of setups) {
  describe.runIf(setup.enabled)(`npm run admin -- member, ${setup.name}`, () => {
    let server: TestServer;
    let env: Record<string, string>;
    let cleanup: (() => void) | undefined;
    let owner: Operator;
    let member: Operator;
    let org: { id: string; slug: string };
    beforeAll(async () => {
      ({ server, env, cleanup } = await setup.start());
      owner = await operator(server, 'CliOwner');
      member = await operator(server, 'CliMember');
      org = await organization(server, owner, { name: 'Cli Org', planId: 'growth' });
    });
    afterAll(async () => {
      await server?.close();
      cleanup?.();
    });

    const projects = (who: Operator, method = 'GET') =>
      server.request(method, `/api/platform/orgs/${org.id}/projects`, { token: who.token, body: method === 'POST' ? { name: 'From CLI member' } : undefined });

    it('adds a member by slug; the role takes effect over HTTP at once, while the server keeps serving', async () => {
      expect((await projects(member)).status).toBe(404);
      // HTTP traffic while the tool connects and writes.
      const [run, ...during] = await Promise.all([
        cli(env, ['member', 'add', '--org', org.slug, '--email', member.email.toUpperCase(), '--role', 'VIEWER'], 'npm'),
        ...Array.from({ length: 5 }, () => server.request('GET', '/api/ready')),
        server.request('GET', '/api/platform/auth/me', { token: owner.token }),
      ]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('VIEWER');
      for (const res of during) expect(res.status).toBe(200);
      expect((await projects(member)).status).toBe(200);
      expect((await projects(member, 'POST')).status).toBe(403);
    });

    it('changes a role with add, by organization id', async () => {
      const run = await cli(env, ['member', 'add', '--org', org.id, '--email', member.email, '--role', 'admin']);
      expect(run.code, run.stderr).toBe(0);
      expect((await projects(member, 'POST')).status).toBe(201);
    });

    it('lists members as JSON [{userId, email, name, role}]', async () => {
      const run = await cli(env, ['member', 'list', '--org', org.slug, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const members = JSON.parse(run.stdout);
      expect(members).toEqual([
        { userId: owner.id, email: owner.email, name: 'CliOwner', role: 'OWNER' },
        { userId: member.id, email: member.email, name: 'CliMember', role: 'ADMIN' },
      ]);
      const text = await cli(env, ['member', 'list', '--org', org.slug]);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain(owner.email);
    });

    it('keeps at least one OWNER: the last one can be neither removed nor demoted', async () => {
      for (const args of [
        ['member', 'remove', '--org', org.slug, '--email', owner.email],
        ['member', 'add', '--org', org.slug, '--email', owner.email, '--role', 'ADMIN'],
      ]) {
        const run = await cli(env, args);
        expect(run.code).not.toBe(0);
        expect(run.stderr).toMatch(/at least one OWNER/);
      }
      expect((await projects(owner, 'POST')).status).toBe(201);
      // With a second owner, the first may step down.
      expect((await cli(env, ['member', 'add', '--org', org.slug, '--email', member.email, '--role', 'OWNER'])).code).toBe(0);
      expect((await cli(env, ['member', 'add', '--org', org.slug, '--email', owner.email, '--role', 'VIEWER'])).code).toBe(0);
      expect((await projects(owner, 'POST')).status).toBe(403);
      expect((await cli(env, ['member', 'add', '--org', org.slug, '--email', owner.email, '--role', 'OWNER'])).code).toBe(0);
    });

    it('removes a member: the organization is then 404 for them', async () => {
      const run = await cli(env, ['member', 'remove', '--org', org.slug, '--email', member.email]);
      expect(run.code, run.stderr).toBe(0);
      expect((await projects(member)).status).toBe(404);
      const again = await cli(env, ['member', 'remove', '--org', org.slug, '--email', member.email]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toMatch(/not a member/);
    });

    it('records every change it made in the audit log, by the admin tool (actor via "admin-cli"), and none it refused', async () => {
      const res = await server.request('GET', `/api/platform/orgs/${org.id}/audit-log?limit=200`, { token: owner.token });
      expect(res.status, res.text).toBe(200);
      const byTool = res.body.events.filter((event: { actor: { via: string | null } }) => event.actor.via !== null).reverse();
      const role = (before: string | null, after: string | null) => ({ role: { before, after } });
      expect(byTool).toEqual(
        [
          ['member.added', member, { email: { before: null, after: member.email }, ...role(null, 'VIEWER') }],
          ['member.role_changed', member, role('VIEWER', 'ADMIN')],
          // The refused removal and demotion of the last owner wrote nothing.
          ['member.role_changed', member, role('ADMIN', 'OWNER')],
          ['member.role_changed', owner, role('OWNER', 'VIEWER')],
          ['member.role_changed', owner, role('VIEWER', 'OWNER')],
          ['member.removed', member, { email: { before: member.email, after: null }, ...role('OWNER', null) }],
        ].map(([action, who, changes]) =>
          expect.objectContaining({
            action,
            organizationId: org.id,
            projectId: null,
            actor: { id: null, email: null, via: 'admin-cli' },
            target: { type: 'user', id: (who as Operator).id },
            changes,
            requestId: null,
          }),
        ),
      );
      // Events of operator requests keep their signed-in actor, with no `via`.
      const created = res.body.events.find((event: { action: string }) => event.action === 'organization.created');
      expect(created.actor).toEqual({ id: owner.id, email: owner.email, via: null });
    });

    it('fails with a clear message for an unknown user, organization, role or command', async () => {
      const unknownUser = await cli(env, ['member', 'add', '--org', org.slug, '--email', 'nobody@example.com', '--role', 'VIEWER']);
      expect(unknownUser.code).not.toBe(0);
      expect(unknownUser.stderr).toMatch(/No registered user with e-mail "nobody@example.com"/);
      const unknownOrg = await cli(env, ['member', 'list', '--org', 'no-such-org']);
      expect(unknownOrg.code).not.toBe(0);
      expect(unknownOrg.stderr).toMatch(/No organization with id or slug "no-such-org"/);
      const badRole = await cli(env, ['member', 'add', '--org', org.slug, '--email', owner.email, '--role', 'KING']);
      expect(badRole.code).not.toBe(0);
      expect(badRole.stderr).toMatch(/Role must be one of OWNER, ADMIN, VIEWER/);
      const usage = await cli(env, ['member', 'frobnicate', '--org', org.slug]);
      expect(usage.code).not.toBe(0);
      expect(usage.stderr).toMatch(/Usage/);
      for (const run of [unknownUser, unknownOrg, badRole]) expect(run.stderr).not.toMatch(/\n\s+at /); // no stack traces
    });

    // Fails on the old main: the slug of an organization named like another's id was that id, and
    // `WHERE id = $1 OR slug = $1` could pick either organization.
    it('never confuses an id with a slug: id-shaped names get no id-shaped slug, and --org <id> is looked up by id only', async () => {
      const impostor = await organization(server, member, { name: org.id });
      expect(impostor.slug).not.toBe(org.id);
      expect(impostor.slug).toBe(`org-${org.id}`);
      // A slug from before the fix that equals another organization's id is still never taken for it.
      await server.services.db.query('UPDATE organizations SET slug = $1 WHERE id = $2', [org.id, impostor.id]);
      for (const id of [org.id, org.id.toUpperCase()]) {
        const run = await cli(env, ['member', 'list', '--org', id, '--json']);
        expect(run.code, run.stderr).toBe(0);
        const emails = JSON.parse(run.stdout).map((m: { email: string }) => m.email);
        expect(emails).toContain(owner.email);
        expect(emails).not.toContain(member.email); // the impostor's owner
      }
      const viaImpostor = await cli(env, ['member', 'list', '--org', impostor.id, '--json']);
      expect(JSON.parse(viaImpostor.stdout).map((m: { email: string }) => m.email)).toEqual([member.email]);
    });

    it('leaves the server serving afterwards', async () => {
      expect((await server.request('GET', '/api/health')).body.status).toBe('ok');
      const late = await operator(server, 'AfterCli');
      expect((await server.request('GET', '/api/platform/auth/me', { token: late.token })).status).toBe(200);
    });

    it.runIf(hasPsql && setup.name.startsWith('embedded'))(
      'lets psql connect to the running server through the socket in DATA_DIR',
      async () => {
        const result = await new Promise<Run>((resolve) =>
          execFile('psql', ['-h', env.DATA_DIR!, '-U', 'postgres', '-At', '-c', 'select count(*) from organizations'], { timeout: 30_000 }, (error, stdout, stderr) =>
            resolve({ code: error ? 1 : 0, stdout, stderr }),
          ),
        );
        expect(result.code, result.stderr).toBe(0);
        expect(Number(result.stdout.trim())).toBeGreaterThanOrEqual(1);
        expect((await server.request('GET', '/api/ready')).status).toBe(200);
      },
    );
  });
}
