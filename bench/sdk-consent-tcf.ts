// The consent POST with an IAB TC string and an AC string against the same POST without, in one run (issue 39:
// "the consent POST's cost with a TC string"):
//   npx tsx bench/sdk-consent-tcf.ts   (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
//                                       BENCH_DATABASE_URL= measures the embedded database)
// One service, two projects (two organizations of one operator): `plain` (the sample purposes, no TCF) and `tcf` (the same purposes,
// TCF on against the test GVL of test/fixtures/tcf served on loopback, its version pinned at publish). Each case
// posts POST /api/sdk/v1/consent through HTTP from a child process (bench/lib/load.ts), a new installation per
// request; the `tcf` case adds `tcf: { tcString, addtlConsent }`, a TC string the IAB's encoder made for that
// version (core + disclosed vendors + publisher TC, 2 vendors). The service decodes and checks it on every request
// (docs/tcf.md "Receipts"). Cases alternate, ROUNDS times, the order rotated each round; reported: receipts/s, p99,
// this process's CPU per receipt (the service's: the load comes from a child) and the ratios tcf ÷ plain.
import { GVL, TCModel, TCString } from '@iabtechlabtcf/core';
import { loadavg } from 'node:os';
import { send } from '../test/helpers/server.js';
import { gvlFixture, startGvlServer } from '../test/helpers/tcf-gvl-server.js';
import { sampleDraft } from '../test/helpers/versions.js';
import { loadFromChild } from './lib/load.js';
import { BENCH_ORIGIN, benchProject, consentLoad, machine } from './lib/setup.js';

if (process.env.BENCH_DATABASE_URL === undefined) process.env.BENCH_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
if (process.env.BENCH_DATABASE_URL === '') delete process.env.BENCH_DATABASE_URL;
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const CMP_ID = 300;

const gvl = await startGvlServer({ version: 1 });
const plain = await benchProject({ tcf: { gvlUrl: gvl.gvlUrl, acProvidersUrl: gvl.acProvidersUrl, minRefreshSeconds: 300 } } as never);
const { server, token } = plain;
const call = (method: string, path: string, body?: unknown) => send(server.url, method, path, { token, body });
const ok = async (res: Promise<{ status: number; text: string; body: any }>, status = 200) => {
  const answer = await res;
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${answer.text}`);
  return answer.body;
};

// The TCF project, in a second organization of the same operator (the free plan has one project per organization).
const orgId = (await ok(call('POST', '/api/platform/orgs', { name: 'Bench TCF' }), 201)).organization.id as string;
const projectId = (await ok(call('POST', `/api/platform/orgs/${orgId}/projects`, { name: 'Bench TCF' }), 201)).project.id as string;
await ok(call('PUT', `/api/platform/projects/${projectId}/consent`, sampleDraft()));
await ok(
  call('PUT', `/api/platform/projects/${projectId}/consent/experience`, {
    tcf: {
      enabled: true,
      cmpId: CMP_ID,
      cmpVersion: 2,
      publisherCountryCode: 'FR',
      vendors: [1, 2],
      googleAtps: [89],
      specialFeatures: [1],
      restrictions: [],
      publisher: { purposes: [1, 7], legitimateInterests: [] },
      purposeMap: { marketing: [1, 2, 3, 4], analytics: [1, 8, 9] },
    },
  }),
);
const version = (await ok(call('POST', `/api/platform/projects/${projectId}/consent/publish`), 201)).version;
const key = await ok(call('POST', `/api/platform/projects/${projectId}/api-keys`, { name: 'bench' }), 201);
await ok(call('PUT', `/api/platform/projects/${projectId}/allowed-origins`, { origins: [BENCH_ORIGIN] }));
const tcfProject = { ...plain, projectId, version, secret: key.secret as string, keyId: key.apiKey.id as string };

/** What the banner sends after Accept all (sdk/src/v2/tcf.ts makes the same with the same library). */
function acceptAllTcString(): string {
  const model = new TCModel(new GVL(gvlFixture(1)));
  model.cmpId = CMP_ID;
  model.cmpVersion = 2;
  model.isServiceSpecific = true;
  model.publisherCountryCode = 'FR';
  model.consentLanguage = 'EN';
  model.purposeConsents.set([1, 2, 3, 4, 7, 8, 9]);
  model.purposeLegitimateInterests.set([2, 7, 8, 9]);
  model.specialFeatureOptins.set(1);
  model.vendorConsents.set([1, 2]);
  model.vendorLegitimateInterests.set([1, 2]);
  model.vendorsDisclosed.set([1, 2]);
  model.publisherConsents.set([1, 7]);
  return TCString.encode(model);
}

const choices = { necessary: true, analytics: true, marketing: true };
const tcf = { tcString: acceptAllTcString(), addtlConsent: '2~89~dv.' };
const loads = {
  plain: consentLoad(plain, choices),
  tcf: consentLoad(tcfProject, choices, { tcf }),
};
// The TCF request must be one the service takes: fail loudly rather than measure 400s.
const probe = await send(server.url, 'POST', '/api/sdk/v1/consent', {
  token: tcfProject.secret,
  headers: { origin: BENCH_ORIGIN },
  body: { versionId: version.id, consentHash: version.consentHash, choices, installationId: 'bench-probe-0001', tcf },
});
if (probe.status !== 201) throw new Error(`the TCF consent POST answered ${probe.status}: ${probe.text}`);

interface Round {
  perSecond: number;
  p99Ms: number;
  cpuMicrosPerReceipt: number;
  errors: number;
  loadAverage1m: number;
}
async function round(name: keyof typeof loads): Promise<Round> {
  const loadAverage1m = Number(loadavg()[0]!.toFixed(1));
  const cpu = process.cpuUsage();
  const result = await loadFromChild({ port: server.port, connections: CONNECTIONS, durationMs: DURATION_MS, requests: loads[name], expectStatus: 201 });
  const { user, system } = process.cpuUsage(cpu);
  return {
    perSecond: Math.round(result.perSecond),
    p99Ms: Number(result.p99Ms.toFixed(1)),
    cpuMicrosPerReceipt: Math.round((user + system) / (result.perSecond * (DURATION_MS / 1000))),
    errors: result.errors,
    loadAverage1m,
  };
}

const names = ['plain', 'tcf'] as const;
for (const name of names) await round(name); // warm-up of each
const runs: Record<(typeof names)[number], Round[]> = { plain: [], tcf: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (let i = 0; i < names.length; i++) {
    const name = names[(r + i) % names.length]!;
    runs[name].push(await round(name));
  }
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ratios = (field: keyof Round) => runs.tcf.map((t, i) => Number((t[field] / runs.plain[i]![field]).toFixed(3)));
console.log(
  JSON.stringify(
    {
      machine: await machine(),
      database: process.env.BENCH_DATABASE_URL ? 'postgresql' : 'embedded',
      connections: CONNECTIONS,
      durationMs: DURATION_MS,
      tcStringBytes: tcf.tcString.length,
      ...runs,
      medianRatioTcfVsPlain: { perSecond: median(ratios('perSecond')), cpuMicrosPerReceipt: median(ratios('cpuMicrosPerReceipt')), p99Ms: median(ratios('p99Ms')) },
    },
    null,
    2,
  ),
);
await server.close();
await gvl.close();
