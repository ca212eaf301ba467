import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBillingSchedule } from '../src/billing/schedule.js';
import { operator, organization, project, team } from './helpers/fixtures.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const START = new Date('2026-11-23T10:00:00.000Z');

// The clock the server reads (services.now): tests move it instead of sleeping.
let now = START;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({}, { now: () => now });
});
afterAll(() => server?.close());

const billing = (orgId: string, token: string) => server.request('GET', `/api/platform/orgs/${orgId}/billing`, { token });
const post = (path: string, token: string | undefined, body?: unknown) => server.request('POST', path, { token, body });
const createProject = (orgId: string, token: string, name = 'More') =>
  post(`/api/platform/orgs/${orgId}/projects`, token, { name });

describe('GET /api/platform/billing/plans', () => {
  it('is public and lists the four plans with prices in cents and entitlements', async () => {
    const response = await server.request('GET', '/api/platform/billing/plans');
    expect(response.status).toBe(200);
    expect(response.body.plans.map((plan: { id: string }) => plan.id)).toEqual(['free', 'starter', 'growth', 'scale']);
    const entitlements = Object.fromEntries(
      response.body.plans.map((plan: { id: string; entitlements: object }) => [plan.id, plan.entitlements]),
    );
    expect(entitlements).toEqual({
      free: { projects: 1, connectors: 0, cases: 10 },
      starter: { projects: 3, connectors: 2, cases: 100 },
      growth: { projects: 10, connectors: 10, cases: 1000 },
      scale: { projects: 100, connectors: 50, cases: 10000 },
    });
    expect(response.body.plans[1]).toEqual({
      id: 'starter',
      name: 'Starter',
      prices: { month: 2900, year: 29000 },
      trialDays: 14,
      entitlements: { projects: 3, connectors: 2, cases: 100 },
    });
  });
});

describe('role matrix of the organization billing routes', () => {
  it('lets every member read billing; only the Owner change it; non-members get 404, no session 401', async () => {
    now = START;
    const t = await team(server);
    const read = await Promise.all([t.owner, t.admin, t.viewer].map((who) => billing(t.org.id, who.token)));
    expect(read.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await billing(t.org.id, t.outsider.token)).status).toBe(404);
    expect((await server.request('GET', `/api/platform/orgs/${t.org.id}/billing`)).status).toBe(401);

    const mutations: [string, unknown][] = [
      ['trial', { planId: 'starter' }],
      ['checkout', { planId: 'growth', interval: 'month' }],
      ['cancel', undefined],
    ];
    for (const [action, body] of mutations) {
      const path = `/api/platform/orgs/${t.org.id}/billing/${action}`;
      expect((await post(path, undefined, body)).status, `${action} anonymous`).toBe(401);
      expect((await post(path, t.outsider.token, body)).status, `${action} outsider`).toBe(404);
      for (const who of [t.admin, t.viewer]) {
        const denied = await post(path, who.token, body);
        expect(denied.status, `${action} as ${who.email}`).toBe(403);
        expect(denied.body.code).toBe('forbidden');
      }
    }
    // Denied requests changed nothing.
    expect((await billing(t.org.id, t.owner.token)).body.subscription).toBeNull();

    expect((await post(`/api/platform/orgs/${t.org.id}/billing/trial`, t.owner.token, { planId: 'starter' })).status).toBe(200);
    const checkout = await post(`/api/platform/orgs/${t.org.id}/billing/checkout`, t.owner.token, { planId: 'growth', interval: 'month' });
    expect(checkout.status).toBe(200);
    expect((await post(`/api/platform/orgs/${t.org.id}/billing/cancel`, t.owner.token)).status).toBe(200);
  });

  it('gives 404 for an unknown organization id', async () => {
    const someone = await operator(server);
    expect((await billing('00000000-0000-7000-8000-000000000000', someone.token)).status).toBe(404);
  });
});

describe('GET /orgs/:orgId/billing', () => {
  it('shows a new organization on free with no subscription and its project usage', async () => {
    now = START;
    const owner = await operator(server);
    const org = await organization(server, owner);
    await project(server, owner, org.id);
    const response = await billing(org.id, owner.token);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      plan: {
        id: 'free',
        name: 'Free',
        prices: { month: 0, year: 0 },
        trialDays: 0,
        entitlements: { projects: 1, connectors: 0, cases: 10 },
      },
      subscription: null,
      entitlements: { projects: 1, connectors: 0, cases: 10 },
      usage: { projects: 1 },
    });
  });
});

describe('POST /orgs with planId', () => {
  it('starts the trial of starter or growth, which counts as the one trial', async () => {
    now = START;
    const owner = await operator(server);
    const org = await organization(server, owner, { planId: 'growth' });
    const response = await billing(org.id, owner.token);
    expect(response.body.plan.id).toBe('growth');
    expect(response.body.entitlements).toEqual({ projects: 10, connectors: 10, cases: 1000 });
    expect(response.body.subscription).toEqual({
      status: 'trialing',
      planId: 'growth',
      interval: null,
      trialEndsAt: new Date(START.getTime() + 14 * DAY_MS).toISOString(),
      currentPeriodEnd: new Date(START.getTime() + 14 * DAY_MS).toISOString(),
      cancelAtPeriodEnd: false,
    });
    const again = await post(`/api/platform/orgs/${org.id}/billing/trial`, owner.token, { planId: 'starter' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
  });

  it('puts free and scale on free, and refuses an unknown planId with 400 creating nothing', async () => {
    const owner = await operator(server);
    for (const planId of ['free', 'scale']) {
      const org = await organization(server, owner, { planId });
      const response = await billing(org.id, owner.token);
      expect(response.body.plan.id).toBe('free');
      expect(response.body.subscription).toBeNull();
    }
    const unknown = await post('/api/platform/orgs', owner.token, { name: 'Nope', planId: 'enterprise' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('validation_failed');
    expect(unknown.body.details[0].path).toEqual(['planId']);
    const me = await server.request('GET', '/api/platform/auth/me', { token: owner.token });
    expect(me.body.organizations).toHaveLength(2);
  });
});

describe('POST /orgs/:orgId/billing/trial', () => {
  it('starts a trial once: the second is 409, and only starter or growth are accepted', async () => {
    now = START;
    const owner = await operator(server);
    const org = await organization(server, owner);
    for (const planId of ['scale', 'free', undefined]) {
      const refused = await post(`/api/platform/orgs/${org.id}/billing/trial`, owner.token, planId ? { planId } : {});
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('validation_failed');
    }
    const started = await post(`/api/platform/orgs/${org.id}/billing/trial`, owner.token, { planId: 'starter' });
    expect(started.status).toBe(200);
    expect(started.body).toEqual((await billing(org.id, owner.token)).body);
    expect(started.body.plan.id).toBe('starter');
    expect(started.body.subscription.status).toBe('trialing');
    expect(started.body.entitlements.projects).toBe(3);

    const second = await post(`/api/platform/orgs/${org.id}/billing/trial`, owner.token, { planId: 'growth' });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('conflict');
  });

  it('stays used after the trial expires', async () => {
    now = START;
    const owner = await operator(server);
    const org = await organization(server, owner, { planId: 'starter' });
    now = new Date(START.getTime() + 15 * DAY_MS);
    await runBillingSchedule(server.services);
    const again = await post(`/api/platform/orgs/${org.id}/billing/trial`, owner.token, { planId: 'starter' });
    expect(again.status).toBe(409);
  });
});

describe('POST /orgs/:orgId/billing/cancel', () => {
  it('cancels a trial at the end of its period; with nothing to cancel it changes nothing', async () => {
    now = START;
    const owner = await operator(server);
    const free = await organization(server, owner);
    const nothing = await post(`/api/platform/orgs/${free.id}/billing/cancel`, owner.token);
    expect(nothing.status).toBe(200);
    expect(nothing.body).toEqual((await billing(free.id, owner.token)).body);
    expect(nothing.body.subscription).toBeNull();

    const org = await organization(server, owner, { planId: 'starter' });
    const canceled = await post(`/api/platform/orgs/${org.id}/billing/cancel`, owner.token);
    expect(canceled.status).toBe(200);
    expect(canceled.body.subscription.cancelAtPeriodEnd).toBe(true);
    expect(canceled.body.plan.id).toBe('starter'); // in force until the period ends
    expect(canceled.body).toEqual((await billing(org.id, owner.token)).body);
    // Canceling again answers the same (idempotent).
    expect((await post(`/api/platform/orgs/${org.id}/billing/cancel`, owner.token)).body).toEqual(canceled.body);
  });
});

describe('entitlements', () => {
  it('lets exactly one of five parallel creates through on free with no project yet', async () => {
    now = START;
    const owner = await operator(server);
    const org = await organization(server, owner);
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => createProject(org.id, owner.token, `P${i}`)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 403, 403, 403, 403]);
    const refused = results.find((r) => r.status === 403)!;
    expect(refused.body.code).toBe('entitlement_exceeded');
    expect((await billing(org.id, owner.token)).body.usage.projects).toBe(1);
  });

  it('grants the trial plan, and when the trial ends keeps existing projects but refuses new ones', async () => {
    now = START;
    const owner = await operator(server);
    const org = await organization(server, owner, { planId: 'starter' });
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => createProject(org.id, owner.token, `P${i}`)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);

    now = new Date(START.getTime() + 14 * DAY_MS + 1);
    // Entitlements fall at once, even before the schedule has run.
    expect((await createProject(org.id, owner.token)).body.code).toBe('entitlement_exceeded');
    const after = await billing(org.id, owner.token);
    expect(after.body.plan.id).toBe('free');
    expect(after.body.subscription.status).toBe('canceled');
    expect(after.body.usage.projects).toBe(3);
    const projects = await server.request('GET', `/api/platform/orgs/${org.id}/projects`, { token: owner.token });
    expect(projects.body.projects).toHaveLength(3);
  });
});

describe('billing schedule', () => {
  const inbox = async (token: string) =>
    (await server.request('GET', '/api/platform/notifications?product=billing', { token })).body.notifications as {
      type: string;
      title: string;
      organizationId: string;
    }[];

  it('warns every member once when the trial ends within 3 days, then moves the expired trial to free', async () => {
    now = START;
    const t = await team(server, { planId: 'growth' });
    now = new Date(START.getTime() + 10 * DAY_MS); // 4 days left: too early
    await runBillingSchedule(server.services);
    expect((await inbox(t.viewer.token)).filter((n) => n.organizationId === t.org.id)).toEqual([]);

    now = new Date(START.getTime() + 11 * DAY_MS + 1); // just under 3 days left
    await runBillingSchedule(server.services);
    now = new Date(START.getTime() + 12 * DAY_MS);
    await runBillingSchedule(server.services);
    for (const member of [t.owner, t.admin, t.viewer]) {
      const mine = (await inbox(member.token)).filter((n) => n.organizationId === t.org.id);
      expect(mine.map((n) => n.type)).toEqual(['billing.trial_ending']);
      expect(mine[0]!.title).toBe('Growth trial ends soon');
    }

    now = new Date(START.getTime() + 14 * DAY_MS);
    await runBillingSchedule(server.services);
    const mine = (await inbox(t.owner.token)).filter((n) => n.organizationId === t.org.id);
    expect(mine.map((n) => n.type)).toEqual(['billing.subscription_changed', 'billing.trial_ending']);
    expect(mine[0]!.title).toBe('Growth trial ended');
    const after = await billing(t.org.id, t.owner.token);
    expect(after.body.subscription.status).toBe('canceled');
    expect(after.body.entitlements).toEqual({ projects: 1, connectors: 0, cases: 10 });

    // Another pass, or a second instance running the same pass, changes nothing more.
    await Promise.all([runBillingSchedule(server.services), runBillingSchedule(server.services)]);
    expect((await inbox(t.owner.token)).filter((n) => n.organizationId === t.org.id)).toHaveLength(2);
  });

  it('notifies once when two schedule passes race over the same trials', async () => {
    now = START;
    const owner = await operator(server);
    const orgs = await Promise.all([1, 2, 3].map(() => organization(server, owner, { planId: 'starter' })));
    now = new Date(START.getTime() + 12 * DAY_MS);
    await Promise.all([runBillingSchedule(server.services), runBillingSchedule(server.services)]);
    const mine = await inbox(owner.token);
    for (const org of orgs) expect(mine.filter((n) => n.organizationId === org.id)).toHaveLength(1);
  });
});
