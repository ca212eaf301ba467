// A typed client of the REST API: openapi-fetch over the types openapi-typescript generated from the
// committed document (schema.d.ts). `npm run typecheck` checks this file, and test/openapi-document.test.ts
// runs it against a real server: a generated client can call the service as the document describes it.
import createClient from 'openapi-fetch';
import type { operations, paths } from './schema.js';

export type ExperienceInput = NonNullable<operations['UpdateConsentExperience']['requestBody']>['content']['application/json'];

export function consentClient(baseUrl: string, token?: string) {
  return createClient<paths>({ baseUrl, headers: token ? { authorization: `Bearer ${token}` } : {} });
}

/** Registers, logs in, makes an organization and a project, and sets part of its experience: defaults fill the rest. */
export async function firstSteps(baseUrl: string, email: string, password: string) {
  const anonymous = consentClient(baseUrl);
  const registered = await anonymous.POST('/api/platform/auth/register', { body: { email, password, name: 'Typed' } });
  if (!registered.data) throw new Error(`register: ${registered.response.status}`);
  const login = await anonymous.POST('/api/platform/auth/login', { body: { email, password } });
  // Without ?session=cookie the answer is the contract's { token, user }; the document's union also holds the cookie form.
  if (!login.data || !('token' in login.data)) throw new Error(`login: ${login.error?.code ?? 'no token'}`);
  const client = consentClient(baseUrl, login.data.token);
  const org = await client.POST('/api/platform/orgs', { body: { name: 'Typed org' } });
  if (!org.data) throw new Error(`org: ${org.error?.code}`);
  const project = await client.POST('/api/platform/orgs/{orgId}/projects', {
    params: { path: { orgId: org.data.organization.id } },
    body: { name: 'Typed project' },
  });
  if (!project.data) throw new Error(`project: ${project.error?.code}`);
  // Only two of the experience's fields: the others have defaults, so the generated type leaves them optional.
  const experience: ExperienceInput = { reconsentAfterDays: 30, theme: { colorScheme: 'dark' } };
  const updated = await client.PUT('/api/platform/projects/{projectId}/consent/experience', {
    params: { path: { projectId: project.data.project.id } },
    body: experience,
  });
  const operationIdsAreTyped: keyof operations = 'UpdateConsentExperience';
  return { user: registered.data.user, project: project.data.project, experience: updated.data?.experience, operationIdsAreTyped };
}
