// The console's frame: the router (base /console), the signed-in gate, the layout with the organization
// switcher and the navigation, and every screen lazy-loaded so the first load carries only this.
import { useEffect, useMemo, useState, type ComponentType } from 'react';
import { Provider, useQuery } from 'urql';
import { Link, Redirect, Route, Router, Switch, useLocation, useParams } from 'wouter';
import { lazyComponent } from './components/lazy';
import { ErrorState, Loading } from './components/states';
import { ShellDocument, type ShellQuery } from './graphql/generated';
import { createClient, isUnauthorized, whenSignedOut } from './lib/client';
import { ProjectContextValue, roleAtLeast, type ProjectContext, type Role } from './lib/context';
import { signOut } from './lib/rest';
import { paths, type ScreenProps } from './lib/screen';
import { SignIn, SignUp } from './screens/auth';
import { NotificationsLink } from './screens/notifications/badge';

type Screen = ComponentType<ScreenProps>;
const screen = (load: () => Promise<{ default: Screen }>): Screen => lazyComponent(load);

// console-core's screens
const OrganizationHome = screen(() => import('./screens/organization-home'));
const NewOrganization = screen(() => import('./screens/organization-new'));
const ProjectHome = screen(() => import('./screens/project-home'));
const ConsentEditor = screen(() => import('./screens/consent'));
// console-screens' screens
const Versions = screen(() => import('./screens/versions'));
const Keys = screen(() => import('./screens/keys'));
const Origins = screen(() => import('./screens/origins'));
const Webhook = screen(() => import('./screens/webhook'));
const Subjects = screen(() => import('./screens/subjects'));
const Receipts = screen(() => import('./screens/receipts'));
const Analytics = screen(() => import('./screens/analytics'));
const Notifications = screen(() => import('./screens/notifications'));
const Billing = screen(() => import('./screens/billing'));
const Members = screen(() => import('./screens/members'));
const Audit = screen(() => import('./screens/audit'));
const Scans = screen(() => import('./screens/scans'));
const Tcf = screen(() => import('./screens/tcf'));

interface NavItem {
  screen: string;
  label: string;
  component: Screen;
  /** The least role that may open it (its queries would 403 below). */
  role: Role;
}

/** A project's screens, in navigation order ('' is the project home). */
export const PROJECT_SCREENS: NavItem[] = [
  { screen: '', label: 'Home', component: ProjectHome, role: 'VIEWER' },
  { screen: 'consent', label: 'Consent', component: ConsentEditor, role: 'VIEWER' },
  { screen: 'consent/tcf', label: 'IAB TCF', component: Tcf, role: 'VIEWER' },
  { screen: 'versions', label: 'Versions', component: Versions, role: 'VIEWER' },
  { screen: 'keys', label: 'API keys', component: Keys, role: 'VIEWER' },
  { screen: 'origins', label: 'Origins', component: Origins, role: 'VIEWER' },
  { screen: 'webhook', label: 'Webhook', component: Webhook, role: 'VIEWER' },
  { screen: 'subjects', label: 'Signed-in visitors', component: Subjects, role: 'VIEWER' },
  { screen: 'receipts', label: 'Receipts', component: Receipts, role: 'VIEWER' },
  { screen: 'analytics', label: 'Analytics', component: Analytics, role: 'VIEWER' },
  { screen: 'scans', label: 'Site scans', component: Scans, role: 'VIEWER' },
];

/** An organization's screens ('' is the project list). */
export const ORGANIZATION_SCREENS: NavItem[] = [
  { screen: '', label: 'Projects', component: OrganizationHome, role: 'VIEWER' },
  { screen: 'members', label: 'Members', component: Members, role: 'ADMIN' },
  { screen: 'billing', label: 'Billing', component: Billing, role: 'VIEWER' },
  { screen: 'audit', label: 'Audit log', component: Audit, role: 'ADMIN' },
];

export function App() {
  const client = useMemo(createClient, []);
  return (
    <Provider value={client}>
      <Router base="/console">
        <Switch>
          <Route path={paths.signIn} component={SignIn} />
          <Route path={paths.signUp} component={SignUp} />
          <Route>
            <SignedIn />
          </Route>
        </Switch>
      </Router>
    </Provider>
  );
}

/** Everything behind the session: reads the shell query once, sends a signed-out visitor to sign-in. */
function SignedIn() {
  const [location, navigate] = useLocation();
  const [shell, refetch] = useQuery({ query: ShellDocument });
  const [signedOut, setSignedOut] = useState(false);
  useEffect(() => whenSignedOut(() => setSignedOut(true)), []);

  if (signedOut || isUnauthorized(shell.error)) {
    const next = location === '/' ? '' : `?next=${encodeURIComponent(location)}`;
    return <Redirect to={`${paths.signIn}${next}`} replace />;
  }
  if (shell.error && !shell.data) {
    return (
      <main className="centered">
        <ErrorState title="The console could not load" error={shell.error} retry={() => refetch({ requestPolicy: 'network-only' })} />
      </main>
    );
  }
  if (!shell.data) {
    return (
      <main className="centered">
        <Loading label="Loading the console…" />
      </main>
    );
  }
  const me = shell.data.me;
  return (
    <Switch>
      <Route path="/">
        <Redirect to={me.organizations[0] ? paths.organization(me.organizations[0].id) : paths.newOrganization} replace />
      </Route>
      <Route path="/orgs/:orgId/*?">
        {(params) => <Frame me={me} orgId={params.orgId} navigate={navigate} />}
      </Route>
      <Route path={paths.notifications}>
        <Frame me={me} navigate={navigate} />
      </Route>
      <Route>
        <Frame me={me} navigate={navigate} notFound />
      </Route>
    </Switch>
  );
}

function Frame({ me, orgId, notFound, navigate }: { me: ShellQuery['me']; orgId?: string; notFound?: boolean; navigate: (to: string) => void }) {
  const params = useParams<{ projectId?: string }>();
  const [location] = useLocation();
  const projectId = /^\/orgs\/[^/]+\/projects\/([^/]+)/.exec(location)?.[1] ?? params.projectId;
  const isNew = orgId === 'new';
  const organization = isNew ? undefined : me.organizations.find((o) => o.id === orgId);
  const project = projectId ? organization?.projects.find((p) => p.id === projectId) : undefined;
  const context: ProjectContext = {
    user: me.user,
    organizations: me.organizations,
    organization,
    project,
    role: (organization?.myRole as Role | undefined) ?? 'VIEWER',
  };

  let content;
  if (isNew) content = <NewOrganization params={{ orgId: '' }} />;
  else if (notFound || (orgId && !organization) || (projectId && !project)) content = <NotFound what={projectId ? 'project' : orgId ? 'organization' : 'page'} />;
  else if (!orgId) content = <Notifications params={{ orgId: '' }} />;
  else content = <Screens orgId={orgId} projectId={projectId} role={context.role} />;

  return (
    <ProjectContextValue.Provider value={context}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <Header context={context} navigate={navigate} />
      <div className={organization ? 'frame' : 'frame single'}>
        {organization && <Navigation context={context} />}
        <main id="main" tabIndex={-1}>
          {content}
        </main>
      </div>
    </ProjectContextValue.Provider>
  );
}

/** The screen for the address, among the organization's or the project's; one the role cannot open is not found. */
function Screens({ orgId, projectId, role }: { orgId: string; projectId?: string; role: Role }) {
  const items = projectId ? PROJECT_SCREENS : ORGANIZATION_SCREENS;
  const base = projectId ? `/orgs/${orgId}/projects/${projectId}` : `/orgs/${orgId}`;
  return (
    <Switch>
      {items
        .filter((item) => roleAtLeast(role, item.role))
        .map((item) => (
          <Route key={item.screen} path={item.screen ? `${base}/${item.screen}` : base}>
            <item.component params={{ orgId, projectId }} />
          </Route>
        ))}
      <Route>
        <NotFound what="page" />
      </Route>
    </Switch>
  );
}

function NotFound({ what }: { what: string }) {
  return (
    <section className="state empty" aria-labelledby="screen-title">
      <h1 id="screen-title">Not found</h1>
      <p>This {what} does not exist, or you are not a member of it.</p>
      <Link href={paths.home}>Go to your organizations</Link>
    </section>
  );
}

function Header({ context, navigate }: { context: ProjectContext; navigate: (to: string) => void }) {
  const [error, setError] = useState<unknown>(null);
  const leave = async () => {
    try {
      await signOut();
      // Nothing of the last session may show to the next one: a fresh page, a fresh cache.
      window.location.assign('/console/sign-in');
    } catch (e) {
      setError(e);
    }
  };
  return (
    <header className="topbar">
      <Link href={paths.home} className="brand">
        Consent console
      </Link>
      <label className="switcher">
        <span className="visually-hidden">Organization</span>
        <select
          value={context.organization?.id ?? ''}
          onChange={(event) => navigate(event.target.value === 'new' ? paths.newOrganization : paths.organization(event.target.value))}
        >
          {!context.organization && <option value="">Choose an organization</option>}
          {context.organizations.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
          <option value="new">+ New organization…</option>
        </select>
      </label>
      <nav className="user" aria-label="Account">
        <NotificationsLink />
        <span className="who" title={context.user.email}>
          {context.user.name || context.user.email}
        </span>
        <button type="button" className="link" onClick={leave}>
          Sign out
        </button>
      </nav>
      {error ? <ErrorState title="Signing out failed" error={error} /> : null}
    </header>
  );
}

// The project last opened in each organization: its screens stay in the sidebar on the organization's own screens
// (Members, Billing, Audit log), one click away. Kept for the tab's life (sessionStorage), not across sign-ins.
const LAST_PROJECT = 'consent-console:last-project:';
function rememberProject(orgId: string, projectId: string) {
  try {
    sessionStorage.setItem(LAST_PROJECT + orgId, projectId);
  } catch {
    // Storage refused (a locked-down browser): the sidebar only forgets the project.
  }
}
function lastProject(orgId: string): string | null {
  try {
    return sessionStorage.getItem(LAST_PROJECT + orgId);
  } catch {
    return null;
  }
}

function Navigation({ context }: { context: ProjectContext }) {
  const [location] = useLocation();
  const { organization, project, role } = context;
  useEffect(() => {
    if (organization && project) rememberProject(organization.id, project.id);
  }, [organization, project]);
  if (!organization) return null;
  const lastId = project ? null : lastProject(organization.id);
  const shown = project ?? organization.projects.find((p) => p.id === lastId) ?? (organization.projects.length === 1 ? organization.projects[0] : undefined);
  const link = (href: string, label: string) => (
    <li key={href}>
      <Link href={href} aria-current={location === href ? 'page' : undefined}>
        {label}
      </Link>
    </li>
  );
  return (
    <nav className="sidebar" aria-label="Console">
      <p className="nav-heading" id="nav-organization">
        {organization.name}
      </p>
      <ul aria-labelledby="nav-organization">
        {ORGANIZATION_SCREENS.filter((item) => roleAtLeast(role, item.role)).map((item) =>
          link(item.screen ? paths.orgScreen(organization.id, item.screen) : paths.organization(organization.id), item.label),
        )}
      </ul>
      {shown && (
        <>
          <p className="nav-heading" id="nav-project">
            {shown.name}
          </p>
          <ul aria-labelledby="nav-project">
            {PROJECT_SCREENS.filter((item) => roleAtLeast(role, item.role)).map((item) =>
              link(item.screen ? paths.projectScreen(organization.id, shown.id, item.screen) : paths.project(organization.id, shown.id), item.label),
            )}
          </ul>
        </>
      )}
    </nav>
  );
}
