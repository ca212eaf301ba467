import { z } from 'zod';
import type { CreateOrganizationMutation, CreateProjectMutation, OrganizationProjectsQuery } from '../generated/operations.js';
import { route } from '../route.js';
import { ErrorBody, Organization, Project, pick, sessionErrors, validationError } from '../schemas.js';

export const organizationRoutes = [
  route<CreateOrganizationMutation>({
    method: 'POST',
    path: '/api/platform/orgs',
    summary: 'Create an organization; the creator becomes OWNER',
    auth: 'session',
    operation: 'CreateOrganization',
    requestBody: z.object({
      name: z.string().min(1).max(120),
      planId: z.enum(['free', 'starter', 'growth', 'scale']).optional().describe('starter or growth starts that trial'),
    }),
    variables: ({ body }) => ({ input: pick(body, ['name', 'planId']) }),
    respond: (data) => ({ status: 201, body: data.createOrganization }),
    responses: {
      201: { description: 'Created', schema: z.object({ organization: Organization }) },
      ...validationError,
      401: sessionErrors[401],
      429: { description: 'rate_limited: the user created RATE_LIMIT_ORGANIZATIONS_PER_HOUR (20) organizations this hour (Retry-After, X-RateLimit-*)', schema: ErrorBody },
    },
  }),
  route<OrganizationProjectsQuery>({
    method: 'GET',
    path: '/api/platform/orgs/:orgId/projects',
    summary: "The organization's projects, oldest first (Viewer or above)",
    auth: 'session',
    operation: 'OrganizationProjects',
    variables: ({ params }) => ({ orgId: params.orgId }),
    respond: (data) => ({ status: 200, body: { projects: data.organization.projects } }),
    responses: { 200: { description: 'Projects', schema: z.object({ projects: z.array(Project) }) }, ...sessionErrors },
  }),
  route<CreateProjectMutation>({
    method: 'POST',
    path: '/api/platform/orgs/:orgId/projects',
    summary: 'Create a project (Admin or above) within the plan entitlement',
    auth: 'session',
    operation: 'CreateProject',
    requestBody: z.object({ name: z.string().min(1).max(120) }),
    variables: ({ params, body }) => ({ orgId: params.orgId, input: pick(body, ['name']) }),
    respond: (data) => ({ status: 201, body: data.createProject }),
    responses: {
      201: { description: 'Created', schema: z.object({ project: Project }) },
      ...validationError,
      ...sessionErrors,
      403: { description: 'Role insufficient, or entitlement_exceeded', schema: ErrorBody },
    },
  }),
];
