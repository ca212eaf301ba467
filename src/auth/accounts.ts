import { z } from 'zod';
import { conflict, invalidCredentials } from '../errors.js';
import { isUniqueViolation } from '../db/errors.js';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { dummyPasswordHash, hashPassword, needsRehash, verifyPassword } from './passwords.js';
import { createSession, revokeAllSessions, revokeSession } from './sessions.js';
import { recordAudit } from '../audit/record.js';

const email = z.string().trim().toLowerCase().pipe(z.email({ message: 'Must be a valid e-mail address' }).max(254));
// scrypt reads the whole password: cap it so a megabyte password cannot pin a core.
const newPassword = z.string().min(12, 'Must be at least 12 characters').max(1024);

export const registerInput = z.object({
  email,
  password: newPassword,
  name: z.string().trim().min(1, 'Required').max(200),
});
export const loginInput = z.object({ email: z.string().trim().toLowerCase().max(254), password: z.string().max(1024) });
export const changePasswordInput = z.object({ currentPassword: z.string().max(1024), newPassword });

const rules = (services: Services) => {
  const limits = services.config.rateLimits;
  return {
    register: { name: 'register-ip', points: limits.registerPerHour, durationSeconds: 3600 },
    loginIp: { name: 'login-ip', points: limits.loginPerIp, durationSeconds: 900 },
    failedPerAddress: { name: 'login-failed-email-address', points: limits.loginFailedPerEmailAndAddress, durationSeconds: 900 },
    failedPerEmail: { name: 'login-failed-email', points: limits.loginFailedPerEmail, durationSeconds: 900 },
  };
};

/**
 * Wrong passwords count against the e-mail from this client address (5 per 15 min) and against
 * the e-mail over all addresses (50): a flood from one address locks out only that address, so
 * the owner still signs in from theirs. The address comes first in the key: it holds no `|`.
 *
 * Every attempt is counted before the password is checked and given back when it was right, so
 * concurrent guesses cannot all slip through one check before the first failure is counted.
 */
const failedLogins = (services: Services, ip: string, email: string) => {
  const limits = rules(services);
  const perAddress = `${ip}|${email}`;
  return {
    /** Counts the attempt; 429 while either budget is spent (even for the right password). */
    attempt: async () => {
      await services.rateLimits.consume(limits.failedPerAddress, perAddress);
      await services.rateLimits.consume(limits.failedPerEmail, email);
    },
    succeeded: () =>
      Promise.all([services.rateLimits.reset(limits.failedPerAddress, perAddress), services.rateLimits.reward(limits.failedPerEmail, email)]),
  };
};

export const publicUser = { id: true, email: true, name: true, createdAt: true } as const;

export async function register(services: Services, ip: string, input: unknown) {
  await services.rateLimits.consume(rules(services).register, ip);
  const data = parseInput(registerInput, input);
  const passwordHash = await hashPassword(data.password, services.config.passwordHashLogN);
  try {
    return await services.db.prisma.user.create({
      data: { email: data.email, name: data.name, passwordHash, createdAt: services.now() },
      select: publicUser,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('E-mail already registered');
    throw error;
  }
}

export async function login(services: Services, ip: string, input: unknown) {
  await services.rateLimits.consume(rules(services).loginIp, ip);
  const data = parseInput(loginInput, input);
  const failures = failedLogins(services, ip, data.email);
  await failures.attempt();
  const user = await services.db.prisma.user.findUnique({ where: { email: data.email } });
  // Hash against a dummy when the e-mail is unknown: both failures take the same time.
  const valid = await verifyPassword(data.password, user?.passwordHash ?? (await dummyPasswordHash(services.config.passwordHashLogN)));
  if (!user || !valid) throw invalidCredentials();
  await failures.succeeded();
  if (needsRehash(user.passwordHash, services.config.passwordHashLogN)) {
    await services.db.prisma.user.update({
      where: { id: user.id },
      data: { passwordHash: await hashPassword(data.password, services.config.passwordHashLogN) },
    });
  }
  const token = await createSession(services, user.id);
  return { token, user: { id: user.id, email: user.email, name: user.name, createdAt: user.createdAt } };
}

export async function logout(services: Services, bearer: string | undefined) {
  if (bearer) await revokeSession(services, bearer);
  return { success: true };
}

/** A wrong `currentPassword` is a failed login: a stolen session cannot guess the password unthrottled. */
export async function changePassword(services: Services, ip: string, userId: string, input: unknown) {
  const data = parseInput(changePasswordInput, input);
  const user = await services.db.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  const failures = failedLogins(services, ip, user.email);
  await failures.attempt();
  if (!(await verifyPassword(data.currentPassword, user.passwordHash))) throw invalidCredentials();
  await failures.succeeded();
  const passwordHash = await hashPassword(data.newPassword, services.config.passwordHashLogN);
  await services.db.prisma.$transaction(async (tx) => {
    await tx.user.update({ where: { id: userId }, data: { passwordHash } });
    // An account event: no organization, no changes (never the hash); see docs/audit.md.
    await recordAudit(tx, { action: 'account.password_changed', organizationId: null, target: { type: 'user', id: userId } });
  });
  // Every session goes, the caller's included: the contract says all.
  await revokeAllSessions(services, userId);
  return { success: true };
}
