import type { Services } from '../services.js';
import type { Worker } from '../workers.js';
import { newSessionToken, sha256Hex } from './tokens.js';

export const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
  sessionId: string;
}

export async function createSession(services: Services, userId: string): Promise<string> {
  const token = newSessionToken();
  await services.db.prisma.session.create({
    data: {
      userId,
      tokenHash: sha256Hex(token),
      createdAt: services.now(),
      expiresAt: new Date(services.now().getTime() + SESSION_LIFETIME_MS),
    },
  });
  return token;
}

/** The user behind a bearer token, or null when it is unknown or expired. */
/** Publishable keys (`pk_…`) never authenticate operators: no session lookup is made for them. */
export const mayNameOperator = (token: string): boolean => !token.startsWith('pk_');

export async function findSessionUser(services: Services, token: string): Promise<SessionUser | null> {
  if (!mayNameOperator(token)) return null;
  const session = await services.db.prisma.session.findUnique({
    where: { tokenHash: sha256Hex(token) },
    select: { id: true, expiresAt: true, user: { select: { id: true, email: true, name: true, createdAt: true } } },
  });
  if (!session || session.expiresAt <= services.now()) return null;
  return { ...session.user, sessionId: session.id };
}

export async function revokeSession(services: Services, token: string): Promise<void> {
  await services.db.prisma.session.deleteMany({ where: { tokenHash: sha256Hex(token) } });
}

export async function revokeAllSessions(services: Services, userId: string): Promise<void> {
  await services.db.prisma.session.deleteMany({ where: { userId } });
}

const PURGE_BATCH = 1_000;

/**
 * Deletes expired sessions (they already authenticate nothing) in small batches, so a large
 * backlog never holds many row locks at once. Safe with several instances: a row deleted twice
 * is simply not counted twice. Returns how many this call deleted.
 */
export async function purgeExpiredSessions(services: Services): Promise<number> {
  const prisma = services.db.prisma;
  const now = services.now();
  let purged = 0;
  for (;;) {
    const expired = await prisma.session.findMany({ where: { expiresAt: { lte: now } }, select: { id: true }, take: PURGE_BATCH });
    if (!expired.length) return purged;
    const { count } = await prisma.session.deleteMany({ where: { id: { in: expired.map((session) => session.id) } } });
    purged += count;
    if (expired.length < PURGE_BATCH) return purged;
  }
}

/** The purge as a worker: every SESSION_PURGE_INTERVAL_MS (default one hour), never two at once here. */
export function sessionPurgeWorker(services: Services): Worker {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= purgeExpiredSessions(services)
      .then((purged) => purged && services.logger.info({ purged }, 'expired sessions purged'))
      .catch((error) => services.logger.error({ err: error }, 'session purge failed'))
      .finally(() => (running = undefined));
  }, services.config.sessionPurgeIntervalMs);
  timer.unref();
  return {
    name: 'session-purge',
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
