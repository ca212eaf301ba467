// more.js (global `ConsentMore`): what the core loads beside itself, outside its 8 KiB, only where a page needs it
// (index.ts says when; extensions.md sections 3, 4 and 12, docs/integrations.md):
// - state made elsewhere, before the core reads its own: experience.cookieDomain's first-party cookie (the
//   installation and the decision shared across subdomains), an installation carried in the URL fragment by
//   client.decorate(url) on another site of the operator, the decision made on the hosted preferences page or
//   that other site (`/decision`, once);
// - after init and every decision: cookies of denied purposes removed (experience.cookies), the shared cookie
//   written, and the vendors' consent APIs updated (integrations.js, loaded from here only where configured).
// The core's storage keys are read and written directly: ../storage.ts and consent.ts own their meaning.
import type { Api, RemoteDecision, SdkConfig } from './api';
import type { Consent } from './consent';
import { removeCookies } from './blocking';
import { loadFile } from './gpp-stub';
import type * as Integrations from './integrations';

const INSTALLATION = 'consent:installationId';
const subjectKey = (projectId: string) => 'consent:subject:' + projectId;
const decisionKey = (projectId: string) => 'consent:' + projectId;
const ID = /^[A-Za-z0-9_-]{8,64}$/;
/** 395 days, the longest a project may keep a decision (reconsentAfterDays). */
const COOKIE_MAX_AGE = 395 * 86400;

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}
function write(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // memory only: the core keeps its own
  }
}
function remove(key: string): void {
  try {
    localStorage.removeItem(key);
  } catch {
    // nothing stored
  }
}
function parse<T>(text: string | null | undefined): T | undefined {
  try {
    return JSON.parse(text!) ?? undefined;
  } catch {
    return undefined;
  }
}

const cookieName = (projectId: string) => 'consent_' + projectId;

/** The cookie domain when this page's host is on it; otherwise the state stays in this origin's storage only. */
function sharedDomain(config: SdkConfig): string | undefined {
  const domain = config.experience.cookieDomain;
  const host = location.hostname;
  return domain && (host == domain || host.endsWith('.' + domain)) ? domain : undefined;
}

interface Shared {
  i?: string;
  d?: { decidedAt: string; consentHash: string; choices: Record<string, boolean> };
}

function readCookie(name: string): Shared | undefined {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key == name) return parse<Shared>(decodeURIComponent(value.join('=')));
  }
}

/**
 * Before the core reads its state: the installation carried in the fragment (`#i=...`, also after another
 * fragment: `#reviews&i=...`) is adopted and the decision made under it is asked for once (the core's
 * preferences marker); the fragment goes back to what it was. Then the shared cookie: its installation, and its
 * decision when newer than this origin's. Last, where the marker says a decision may have been made elsewhere
 * (the hosted preferences page, another site), `/decision` once: adopted when it is for the current
 * consentHash and newer than the local one; a failure keeps the local decision and the marker (next init).
 */
let integrations: typeof Integrations | undefined;

export async function ready(config: SdkConfig, base: string, api: Api, installation: (projectId: string) => string): Promise<void> {
  const { projectId } = config;
  if (config.experience.integrations) integrations = await loadFile(base, 'integrations.js', 'ConsentIntegrations');
  const marker = 'consent:prefs:' + projectId;
  const carried = /(^#|&)i=([A-Za-z0-9_-]{8,64})$/.exec(location.hash);
  // The service's own /preferences page reads the fragment itself (index.ts hostedInstallation).
  if (carried && location.origin != base) {
    write(INSTALLATION, carried[2]!);
    write(marker, '1');
    const rest = location.hash.slice(0, carried.index);
    history.replaceState(history.state, '', location.pathname + location.search + rest);
    if (rest) document.getElementById(decodeURIComponent(rest.slice(1)))?.scrollIntoView();
  }
  tellScope(config);
  const shared = sharedDomain(config) && readCookie(cookieName(projectId));
  if (shared) {
    if (!carried && shared.i && ID.test(shared.i)) write(INSTALLATION, shared.i);
    const local = parse<Shared['d']>(read(decisionKey(projectId)));
    if (shared.d?.consentHash && shared.d.choices && !(local && local.decidedAt >= shared.d.decidedAt)) write(decisionKey(projectId), JSON.stringify(shared.d));
  }
  // Signed in, identify() keeps the marker: the person may have decided on another device since, so every init asks.
  if (read(marker)) {
    try {
      adopt(config, await api.getDecision(installation(projectId)));
      if (!read(subjectKey(projectId))) remove(marker);
    } catch {
      // The next init tries again.
    }
  }
}

const descriptions = new WeakMap<SdkConfig, string>();

/**
 * Signed in, the notice says the choice applies on the person's signed-in devices (the UI string `signedInScope`
 * after its description: the banner, the preferences dialog and TCF's first layer all show it, as TCF Policies
 * 5.0.b ask of the first layer); signed out, the description alone again.
 */
function tellScope(config: SdkConfig): void {
  const notice = config.config.notice;
  const own = descriptions.get(config) ?? notice.description;
  descriptions.set(config, own);
  notice.description = read(subjectKey(config.projectId)) && config.ui.signedInScope ? `${own} ${config.ui.signedInScope}` : own;
}

/** Keeps a decision made elsewhere when it is for the current consentHash and newer than this device's own. */
function adopt({ projectId, version, mode }: SdkConfig, remote: RemoteDecision | null): void {
  const local = parse<Shared['d']>(read(decisionKey(projectId)));
  if (remote?.consentHash === version.consentHash && !(local && local.consentHash === remote.consentHash && local.decidedAt >= remote.createdAt)) {
    write(decisionKey(projectId), JSON.stringify({ consentHash: remote.consentHash, versionNumber: version.number, choices: remote.choices, decidedAt: remote.createdAt, mode }));
  }
}

/**
 * client.identify(token) with the token (anything but a string: the service refuses it), client.forget() with null.
 * identify: the service checks the token, links the installation to the person and answers the
 * decision it now follows (the newer of this device's and the person's); adopted as /decision's answer is,
 * recording nothing. A refused token rejects and changes nothing here either.
 */
export async function subject(consent: Consent, token: string | null): Promise<void> {
  const { api, config } = consent as Consent & { config: SdkConfig };
  const installationId = consent.installation(config.projectId);
  if (token === null) return forget(config, api, installationId);
  const answer = await api.call('v2/identify', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ installationId, token }),
  });
  write(subjectKey(config.projectId), '1');
  write('consent:prefs:' + config.projectId, '1');
  adopt(config, answer?.decision || null);
  tellScope(config);
  // The core reads its state again (the config from the browser's cache; ready() asks /decision once more).
  await consent.load(config.locale);
}

/** client.forget(): signed out; the decision stored here stays this device's own. */
async function forget(config: SdkConfig, api: Api, installationId: string): Promise<void> {
  await api.call('v2/forget', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ installationId }) });
  remove(subjectKey(config.projectId));
  remove('consent:prefs:' + config.projectId);
  tellScope(config);
}

/** After init and after every decision: cookies of denied purposes go, the shared cookie holds the state, the vendors follow it. */
export function apply(config: SdkConfig, settled: boolean, has: (purposeKey: string) => boolean): void {
  if (settled) for (const p of config.config.purposes) if (!has(p.key)) removeCookies(config.experience.cookies[p.key] || []);
  integrations?.apply(config, settled, has);
  const domain = sharedDomain(config);
  const installation = read(INSTALLATION);
  if (domain && installation) {
    const value: Shared = { i: installation, d: parse(read(decisionKey(config.projectId))) };
    document.cookie =
      `${cookieName(config.projectId)}=${encodeURIComponent(JSON.stringify(value))};domain=${domain};path=/;max-age=${COOKIE_MAX_AGE};samesite=lax` +
      (location.protocol == 'https:' ? ';secure' : '');
  }
}
