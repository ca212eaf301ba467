import type { Services } from '../services.js';
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
export async function findSessionUser(services: Services, token: string): Promise<SessionUser | null> {
  // Publishable keys never authenticate operators; skip the lookup for them.
  if (token.startsWith('pk_')) return null;
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
