/** What the router hands every screen: the ids in the address (the hooks in context.tsx give the rest). */
export interface ScreenProps {
  params: { orgId: string; projectId?: string };
}

/** Addresses inside the console (relative to its base, /console). */
export const paths = {
  home: '/',
  signIn: '/sign-in',
  signUp: '/sign-up',
  newOrganization: '/orgs/new',
  notifications: '/notifications',
  organization: (orgId: string) => `/orgs/${orgId}`,
  orgScreen: (orgId: string, screen: string) => `/orgs/${orgId}/${screen}`,
  project: (orgId: string, projectId: string) => `/orgs/${orgId}/projects/${projectId}`,
  projectScreen: (orgId: string, projectId: string, screen: string) => `/orgs/${orgId}/projects/${projectId}/${screen}`,
};
