// Where a screen learns who is signed in, which organization and project it shows and the user's role there.
// The shell query is read once by the layout (app.tsx); these hooks read it from the cache.
import { createContext, useContext } from 'react';
import type { ShellQuery } from '../graphql/generated';

export type Role = 'OWNER' | 'ADMIN' | 'VIEWER';
export type ShellOrganization = ShellQuery['me']['organizations'][number];
export type ShellProject = ShellOrganization['projects'][number];

export interface ProjectContext {
  user: ShellQuery['me']['user'];
  organizations: ShellOrganization[];
  /** The organization in the address (undefined on pages outside one, e.g. notifications). */
  organization?: ShellOrganization;
  /** The project in the address, when the page is a project's. */
  project?: ShellProject;
  /** The user's role in `organization` (VIEWER outside one: show nothing that changes anything). */
  role: Role;
}

export const ProjectContextValue = createContext<ProjectContext | null>(null);

/** The signed-in user, the current organization and project (from the address) and the role there. */
export function useProjectContext(): ProjectContext {
  const value = useContext(ProjectContextValue);
  if (!value) throw new Error('useProjectContext() outside the signed-in layout');
  return value;
}

const RANK: Record<Role, number> = { VIEWER: 1, ADMIN: 2, OWNER: 3 };

/** The user's role in the current organization. */
export function useRole(): Role {
  return useProjectContext().role;
}

/**
 * Whether the user holds at least `role` here, as the API checks it (docs/security.md): render a control
 * that changes something only when this is true, so a Viewer never meets a 403.
 */
export function useCan(role: Role): boolean {
  return RANK[useRole()] >= RANK[role];
}

export function roleAtLeast(held: Role, wanted: Role): boolean {
  return RANK[held] >= RANK[wanted];
}
