import { z } from 'zod';
import { migrationsUpToDate } from '../../src/db/migrate.js';
import type { Services } from '../../src/services.js';
import { route } from '../route.js';
import { timestamp } from '../schemas.js';

// The probes ask the database directly: they must work when GraphQL or sessions cannot.
const PROBE_TIMEOUT_MS = 2000;

async function databaseAnswers(services: Services): Promise<boolean> {
  try {
    await withTimeout(services.db.query('SELECT 1'), PROBE_TIMEOUT_MS);
    return true;
  } catch {
    return false;
  }
}

async function migrationsApplied(services: Services): Promise<boolean> {
  try {
    return await withTimeout(migrationsUpToDate(services.db), PROBE_TIMEOUT_MS);
  } catch {
    return false;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const Health = z.object({
  status: z.enum(['ok', 'error']),
  checks: z.object({ database: z.enum(['ok', 'error']), migrations: z.enum(['ok', 'error']) }),
  version: z.string(),
  gitCommit: z.string().nullable(),
  environment: z.string(),
  startedAt: timestamp,
  uptimeSeconds: z.number(),
});

export const probeRoutes = (startedAt: Date) => [
  route({
    method: 'GET',
    path: '/api/health',
    summary: 'Health report: database connectivity and migrations',
    operationId: 'getHealth',
    auth: 'public',
    handle: async ({ services }) => {
      const database = await databaseAnswers(services);
      const migrations = database && (await migrationsApplied(services));
      const ok = database && migrations;
      return {
        status: ok ? 200 : 503,
        headers: { 'Cache-Control': 'no-store' },
        body: {
          status: ok ? 'ok' : 'error',
          checks: { database: database ? 'ok' : 'error', migrations: migrations ? 'ok' : 'error' },
          version: services.config.version,
          gitCommit: services.config.gitCommit,
          environment: services.config.nodeEnv,
          startedAt: startedAt.toISOString(),
          uptimeSeconds: Math.floor((Date.now() - startedAt.getTime()) / 1000),
        },
      };
    },
    responses: {
      200: { description: 'Healthy', schema: Health },
      503: { description: 'Database or migrations failing', schema: Health },
    },
  }),
  route({
    method: 'GET',
    path: '/api/ready',
    summary: 'Readiness: the database accepts queries',
    operationId: 'getReady',
    auth: 'public',
    handle: async ({ services }) => {
      const ready = await databaseAnswers(services);
      return { status: ready ? 200 : 503, headers: { 'Cache-Control': 'no-store' }, body: { ready } };
    },
    responses: {
      200: { description: 'Ready', schema: z.object({ ready: z.literal(true) }) },
      503: { description: 'Not ready', schema: z.object({ ready: z.literal(false) }) },
    },
  }),
];
