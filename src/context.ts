import DataLoader from 'dataloader';
import type { Role } from './generated/prisma/client.js';
import { findSessionUser, type SessionUser } from './auth/sessions.js';
import { notFound, unauthorized, forbidden } from './errors.js';
import type { Services } from './services.js';
import type { GeoHeaders } from './sdk/location.js';

const RANK: Record<Role, number> = { VIEWER: 1, ADMIN: 2, OWNER: 3 };

export interface RequestInfo {
  requestId: string;
  ip: string;
  /** The bearer token as sent, if any (session token or publishable key). */
  bearer?: string;
  /** The operator session token presented: the bearer, or the console's cookie where accepted (sessionCredential). */
  session?: string;
  /** The Origin header of a browser request (the SDK allowlist checks it). */
  origin?: string;
  /** The visitor's country and region as the CDN sent them in GEO_COUNTRY_HEADER / GEO_REGION_HEADER (unchecked). */
  geo?: GeoHeaders;
}


/** A fresh context per request, for /graphql and for in-process REST execution alike. */
export interface Context extends RequestInfo {
  services: Services;
  prisma: Services['db']['prisma'];
  viewer: SessionUser | null;
  access: Access;
}

export async function createContext(services: Services, request: RequestInfo): Promise<Context> {
  const session = request.session ?? request.bearer;
  return contextWithViewer(services, request, session ? await findSessionUser(services, session) : null);
}

/**
 * createContext's answer once the viewer is known: null at once for a request whose credential cannot name an
 * operator (none, or a publishable key: every SDK call), so its context needs no promise.
 */
export function contextWithViewer(services: Services, request: RequestInfo, viewer: SessionUser | null): Context {
  return { ...request, session: request.session ?? request.bearer, services, prisma: services.db.prisma, viewer, access: new Access(services, viewer) };
}

/**
 * Membership answers for one request, batched and cached: a non-member (or an
 * unknown id) is 404, a member below the role 403, as the contract orders.
 */
export class Access {
  // Made on first use: most requests (every SDK call) never ask about membership.
  private orgRolesLoader?: DataLoader<string, Role | null>;
  private projectOrgsLoader?: DataLoader<string, string | null>;

  constructor(
    private readonly services: Services,
    private readonly viewer: SessionUser | null,
  ) {}

  private get orgRoles(): DataLoader<string, Role | null> {
    const { viewer } = this;
    const prisma = this.services.db.prisma;
    return (this.orgRolesLoader ??= new DataLoader(async (orgIds) => {
      const rows = await prisma.membership.findMany({
        where: { userId: viewer?.id ?? '', organizationId: { in: [...orgIds] } },
        select: { organizationId: true, role: true },
      });
      const byOrg = new Map(rows.map((row) => [row.organizationId, row.role]));
      return orgIds.map((id) => byOrg.get(id) ?? null);
    }));
  }

  private get projectOrgs(): DataLoader<string, string | null> {
    const prisma = this.services.db.prisma;
    return (this.projectOrgsLoader ??= new DataLoader(async (projectIds) => {
      const rows = await prisma.project.findMany({
        where: { id: { in: [...projectIds] } },
        select: { id: true, organizationId: true },
      });
      const byId = new Map(rows.map((row) => [row.id, row.organizationId]));
      return projectIds.map((id) => byId.get(id) ?? null);
    }));
  }

  requireViewer(): SessionUser {
    if (!this.viewer) throw unauthorized();
    return this.viewer;
  }

  /** Resolves to true when the viewer holds at least `role` in the organization. */
  async orgRole(orgId: string, role: Role): Promise<true> {
    this.requireViewer();
    const held = await this.orgRoles.load(orgId);
    if (!held) throw notFound('Organization');
    if (RANK[held] < RANK[role]) throw forbidden();
    return true;
  }

  /** The viewer's own role in an organization (null when not a member), so a console can hide what would be 403. */
  async roleIn(orgId: string): Promise<Role | null> {
    this.requireViewer();
    return this.orgRoles.load(orgId);
  }

  async projectRole(projectId: string, role: Role): Promise<true> {
    this.requireViewer();
    const orgId = await this.projectOrgs.load(projectId);
    const held = orgId ? await this.orgRoles.load(orgId) : null;
    if (!held) throw notFound('Project');
    if (RANK[held] < RANK[role]) throw forbidden();
    return true;
  }

  /** The organization owning a project the viewer may see (call after projectRole). */
  async projectOrganizationId(projectId: string): Promise<string> {
    const orgId = await this.projectOrgs.load(projectId);
    if (!orgId) throw notFound('Project');
    return orgId;
  }
}
