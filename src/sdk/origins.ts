import { z } from 'zod';
import type { Services } from '../services.js';
import { parseInput } from '../validation.js';
import { sdkCache } from './cache.js';
import { changesOf, recordAudit } from '../audit/record.js';

export const MAX_ORIGINS = 100;
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };
// scheme://host[:port] and at most a trailing slash: no path, query, fragment or user info.
const ORIGIN_SHAPE = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s]+\/?$/i;
const WILDCARD_LABEL = 'wildcard--label';

/**
 * Parses and normalises an allowed origin: lowercase, no trailing slash, no
 * default port, IDN hosts in punycode (as browsers send them). `https://*.example.com`
 * allows every subdomain of example.com at any depth, but not example.com itself.
 * Returns null when the value is not an origin.
 */
export function normaliseOrigin(value: string): string | null {
  const raw = value.trim();
  if (!ORIGIN_SHAPE.test(raw)) return null;
  const wildcard = /^[a-z][a-z0-9+.-]*:\/\/\*\./i.test(raw);
  let url: URL;
  try {
    url = new URL(wildcard ? raw.replace('*.', `${WILDCARD_LABEL}.`) : raw);
  } catch {
    return null;
  }
  if (!(url.protocol in DEFAULT_PORTS) || !url.hostname || url.hostname.includes('*')) return null;
  let host = url.hostname;
  if (wildcard) {
    if (!host.startsWith(`${WILDCARD_LABEL}.`)) return null;
    host = `*${host.slice(WILDCARD_LABEL.length)}`;
    // `*.com` would allow a whole top-level domain.
    if (host.split('.').length < 3) return null;
  }
  const port = url.port && url.port !== DEFAULT_PORTS[url.protocol] ? `:${url.port}` : '';
  return `${url.protocol}//${host}${port}`;
}

/** A project's allowlist, prepared for one Set lookup per SDK request. */
export class OriginRules {
  private readonly exact: Set<string>;
  private readonly wildcards: { scheme: string; suffix: string; port: string }[];

  constructor(origins: string[]) {
    this.exact = new Set(origins.filter((o) => !o.includes('*')));
    this.wildcards = origins
      .filter((o) => o.includes('*'))
      .map((o) => {
        const [, scheme, suffix, port] = /^(\w+):\/\/\*(\.[^:]+)(:\d+)?$/.exec(o)!;
        return { scheme: scheme!, suffix: suffix!, port: port ?? '' };
      });
  }

  allows(origin: string): boolean {
    if (this.exact.has(origin)) return true;
    if (!this.wildcards.length) return false;
    const parsed = /^(\w+):\/\/([^:/]+)(:\d+)?$/.exec(origin);
    if (!parsed) return false;
    const [, scheme, host, port = ''] = parsed;
    return this.wildcards.some((w) => w.scheme === scheme && w.port === port && host!.length > w.suffix.length && host!.endsWith(w.suffix));
  }
}

const allowedOriginsInput = z
  .object({
    enforce: z.boolean().optional(),
    origins: z
      .array(z.string().max(255, 'At most 255 characters'))
      .max(MAX_ORIGINS, `At most ${MAX_ORIGINS} origins`)
      .optional(),
  })
  .strict();

export interface AllowedOrigins {
  enforce: boolean;
  origins: string[];
}

export async function getAllowedOrigins(services: Services, projectId: string): Promise<AllowedOrigins> {
  const project = await services.db.prisma.project.findUniqueOrThrow({
    where: { id: projectId },
    select: { enforceOrigins: true, allowedOrigins: true },
  });
  return { enforce: project.enforceOrigins, origins: project.allowedOrigins };
}

/** Replaces what is given (`enforce`, the whole `origins` list, or both); origins are stored normalised. */
export async function updateAllowedOrigins(services: Services, projectId: string, input: unknown): Promise<AllowedOrigins> {
  const data = parseInput(
    allowedOriginsInput.superRefine((value, ctx) => {
      value.origins?.forEach((origin, index) => {
        if (normaliseOrigin(origin) === null) {
          ctx.addIssue({
            code: 'custom',
            path: ['origins', index],
            message: 'Must be scheme://host[:port] (http or https, no path), optionally https://*.example.com',
          });
        }
      });
    }),
    input ?? {},
  );
  const origins = data.origins && [...new Set(data.origins.map((origin) => normaliseOrigin(origin)!))];
  const project = await services.db.prisma.$transaction(async (tx) => {
    const before = await tx.project.findUniqueOrThrow({ where: { id: projectId }, select: { enforceOrigins: true, allowedOrigins: true } });
    const after = await tx.project.update({
      where: { id: projectId },
      data: { ...(data.enforce !== undefined && { enforceOrigins: data.enforce }), ...(origins && { allowedOrigins: origins }) },
      select: { enforceOrigins: true, allowedOrigins: true },
    });
    await recordAudit(tx, { action: 'allowed_origins.updated', projectId, target: { type: 'project', id: projectId }, changes: changesOf(before, after, ['enforceOrigins', 'allowedOrigins']) });
    return after;
  });
  sdkCache(services).invalidateProject(projectId);
  return { enforce: project.enforceOrigins, origins: project.allowedOrigins };
}
