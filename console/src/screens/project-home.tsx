// A project's home (console-core): the go-live checklist, which updates as the operator goes (it refetches
// every few seconds until every step is done, since the SDK's first request and first receipt happen on the
// operator's site), and the copy-paste snippets: a website's SDK v2 with the Google tag (Consent Mode) examples, and
// an app's React Native provider (issue 45).
import { useEffect } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { CopyBlock } from '../components/copy';
import { QueryState } from '../components/states';
import { ProjectHomeDocument, type ProjectHomeQuery } from '../graphql/generated';
import { useProjectContext } from '../lib/context';
import { paths, type ScreenProps } from '../lib/screen';
import { consentModeOn, googleTagSnippet, installSnippet, integrationTypes, KEY_PLACEHOLDER, tcfOn } from '../lib/snippet';
import { InstallTabs, ReactNativePanel } from './parts/install-tabs';
import { formatDateTime } from './parts/format';

const REFRESH_MS = 5000;

type Project = ProjectHomeQuery['project'];

interface Step {
  id: string;
  title: string;
  done: boolean;
  detail: string;
  /** The screen where the operator does it. */
  screen: string;
  action: string;
  /** Something the service refused from the site: shown as a warning, whatever `done` says. */
  problem?: boolean;
}

type Refusal = NonNullable<Project['sdkRefusals']>[number];

/** Whether a refusal still explains anything: an origin refused then but allowed now does not. */
function stillApplies(refusal: Refusal, project: Project): boolean {
  if (refusal.kind !== 'origin_not_allowed') return true;
  const allowed = project.allowedOrigins;
  return !!allowed?.enforce && !allowed.origins.includes(refusal.origin ?? '');
}

/** What the service saw from the site, in words, with where to fix it. */
function refusalStep(refusal: Refusal): Pick<Step, 'detail' | 'screen' | 'action'> {
  const from = refusal.origin ? `a page on ${refusal.origin}` : 'a request without an origin';
  const when = formatDateTime(refusal.seenAt);
  switch (refusal.kind) {
    case 'origin_not_allowed':
      return { detail: `Refused ${from} (${when}): that origin is not allowed. Add it to the allowed origins.`, screen: 'origins', action: 'Set allowed origins' };
    case 'revoked_key':
      return { detail: `Refused ${from} (${when}): it sent the revoked key ${refusal.keyPrefix}…. Create a key and paste the snippet shown with it.`, screen: 'keys', action: 'Manage API keys' };
    default:
      return {
        detail: `Refused ${from} (${when}): it sent a key the service does not know, starting ${refusal.keyPrefix} (copied incompletely or mistyped). Paste the snippet shown when you create a key, unchanged.`,
        screen: 'keys',
        action: 'Manage API keys',
      };
  }
}

/**
 * With IAB TCF turned on in the draft: what it still lacks. The blocking items are the service's own publish check
 * (consent.tcfIssues, src/tcf/draft.ts), so console and publish agree; vendors and the purpose map are advice.
 */
function tcfSteps(project: Project): Step[] {
  const consent = project.consent;
  const tcf = (consent?.experience as { tcf?: { enabled?: boolean; vendors?: number[]; purposeMap?: Record<string, number[]> } } | undefined)?.tcf;
  if (!consent || !tcf?.enabled) return [];
  const issues = consent.tcfIssues;
  const at = (path: string) => issues.filter((i) => i.path.join('.') === path);
  const cmp = at('tcf.cmpId');
  const list = at('tcf');
  const others = issues.filter((i) => !cmp.includes(i) && !list.includes(i) && !/^No Global Vendor List/.test(i.message));
  const vendors = tcf.vendors ?? [];
  const unmapped = consent.draft.purposes.filter((p) => !p.required && !tcf.purposeMap?.[p.key]?.length).map((p) => p.key);
  const step = (id: string, title: string, done: boolean, detail: string): Step => ({ id, title, done, detail, screen: 'consent/tcf', action: 'Open the IAB TCF settings' });
  return [
    step('tcf-cmp', 'IAB TCF: set your CMP id', !cmp.length, cmp.length ? cmp[0]!.message : 'Set.'),
    step('tcf-list', 'IAB TCF: hold a Global Vendor List', !list.length, list.length ? list[0]!.message : 'Held: the next publish pins the newest version.'),
    step('tcf-vendors', 'IAB TCF: choose vendors', vendors.length > 0, vendors.length ? `${vendors.length} vendor${vendors.length > 1 ? 's' : ''} chosen.` : 'The banner discloses no vendor until you choose them from the vendor list.'),
    step(
      'tcf-map',
      'IAB TCF: map your purposes',
      unmapped.length === 0,
      unmapped.length ? `Optional purposes not mapped to TCF purposes: ${unmapped.join(', ')} (each gets its own switch in the second layer).` : 'Every optional purpose follows TCF purposes.',
    ),
    ...(others.length
      ? [step('tcf-settings', 'IAB TCF: fix the settings publishing refuses', false, others.map((i) => `${i.path.join('.')}: ${i.message}`).join(' '))]
      : []),
  ];
}

export function checklist(project: Project): Step[] {
  const keys = (project.apiKeys?.edges ?? []).map((e) => e.node).filter((k) => !k.revokedAt);
  const latest = project.consent?.latestVersion;
  const origins = project.allowedOrigins?.origins ?? [];
  const used = keys.filter((k) => k.lastUsedAt).sort((a, b) => Date.parse(b.lastUsedAt!) - Date.parse(a.lastUsedAt!));
  const receipt = project.receipts?.edges[0]?.node;
  const lastUse = used[0]?.lastUsedAt ? Date.parse(used[0].lastUsedAt) : 0;
  // The newest refusal that still explains something and came after the last request that passed.
  const refusal = (project.sdkRefusals ?? []).find((r) => stillApplies(r, project) && Date.parse(r.seenAt) > lastUse);
  const sdk: Step = used.length
    ? {
        id: 'sdk',
        title: 'Install the SDK on your site',
        done: true,
        detail: `The SDK loaded your configuration (key ${used[0]!.prefix}…, ${formatDateTime(used[0]!.lastUsedAt)}).`,
        screen: '',
        action: '',
      }
    : refusal
      ? { id: 'sdk', title: 'Install the SDK on your site', done: false, problem: true, ...refusalStep(refusal) }
      : {
          id: 'sdk',
          title: 'Install the SDK on your site',
          done: false,
          detail: keys.length
            ? 'No request from your site yet. Paste the snippet shown when you created the key into your pages and open one; this turns green at the first visit.'
            : 'Create a key first: the snippet to paste, filled in with it, is shown when you create it.',
          screen: '',
          action: '',
        };
  if (sdk.done && refusal) Object.assign(sdk, { problem: true, detail: `${sdk.detail} Since then: ${refusalStep(refusal).detail}` });
  return [
    ...tcfSteps(project),
    {
      id: 'published',
      title: 'Publish a consent configuration',
      done: !!latest,
      detail: latest ? `Version ${latest.number} is live${project.consent?.hasUnpublishedChanges ? ' (the draft has unpublished changes)' : ''}.` : 'Write your purposes and notice, then publish.',
      screen: 'consent',
      action: 'Open the consent editor',
    },
    {
      id: 'origins',
      title: 'Allow your website’s origin',
      done: origins.length > 0 || project.allowedOrigins?.enforce === false,
      detail: origins.length ? `${origins.length} allowed: ${origins.slice(0, 3).join(', ')}${origins.length > 3 ? ', …' : ''}` : 'Browsers on other origins are refused until you list yours.',
      screen: 'origins',
      action: 'Set allowed origins',
    },
    {
      id: 'key',
      title: 'Create a publishable key',
      done: keys.length > 0,
      detail: keys.length
        ? `${keys.length} active key${keys.length > 1 ? 's' : ''}: ${keys.map((k) => k.name || k.prefix).join(', ')}.`
        : 'The SDK identifies your project with it; the snippet to paste is shown with the new key.',
      screen: 'keys',
      action: 'Manage API keys',
    },
    sdk,
    {
      id: 'receipt',
      title: 'Receive the first consent receipt',
      done: !!receipt,
      detail: receipt ? `First receipt stored ${formatDateTime(receipt.createdAt)}${receipt.sdkVersion ? ` (SDK ${receipt.sdkVersion})` : ''}.` : 'Accept or reject the banner on your site once.',
      screen: 'receipts',
      action: 'See receipts',
    },
  ];
}

export default function ProjectHome({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const { organization } = useProjectContext();
  const [result, refetch] = useQuery({ query: ProjectHomeDocument, variables: { projectId }, requestPolicy: 'cache-and-network' });
  const steps = result.data ? checklist(result.data.project) : [];
  const allDone = steps.length > 0 && steps.every((s) => s.done);

  useEffect(() => {
    if (!result.data || allDone) return;
    const timer = setInterval(() => refetch({ requestPolicy: 'network-only' }), REFRESH_MS);
    return () => clearInterval(timer);
  }, [result.data, allDone, refetch]);

  return (
    <section aria-labelledby="screen-title">
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {(data) => (
          <>
            <div className="title-row">
              <h1 id="screen-title">{data.project.name}</h1>
              <span className={`badge ${allDone ? 'ok' : 'warn'}`}>{allDone ? 'Live' : 'Not live yet'}</span>
            </div>
            <h2 id="checklist-title">Go-live checklist</h2>
            <ol className="checklist" aria-labelledby="checklist-title">
              {steps.map((step) => (
                <li key={step.id} className={`${step.done ? 'done' : 'todo'}${step.problem ? ' problem' : ''}`} data-step={step.id}>
                  <span className="check" aria-hidden="true">
                    {step.done ? '✓' : step.problem ? '!' : ''}
                  </span>
                  <div>
                    <p className="step-title">
                      {step.title} <span className="visually-hidden">{step.done ? '(done)' : '(to do)'}{step.problem ? ' (refused)' : ''}</span>
                    </p>
                    <p className="step-detail">{step.detail}</p>
                    {step.screen && (!step.done || step.problem) && organization && (
                      <Link href={paths.projectScreen(organization.id, projectId, step.screen)}>{step.action}</Link>
                    )}
                  </div>
                </li>
              ))}
            </ol>
            <Snippet project={data.project} />
          </>
        )}
      </QueryState>
    </section>
  );
}

function Snippet({ project }: { project: Project }) {
  const { organization } = useProjectContext();
  const options = { origin: window.location.origin, publicKey: KEY_PLACEHOLDER, googleConsentMode: consentModeOn(project.consent), integrations: integrationTypes(project.consent), tcf: tcfOn(project.consent) };
  const keysLink = organization && (
    <>
      {' '}
      (<Link href={paths.projectScreen(organization.id, project.id, 'keys')}>API keys</Link>)
    </>
  );
  const website = (
    <>
      <p>
        Paste this into every page, before other tags, with your publishable key in place of <code>{KEY_PLACEHOLDER}</code>. The full key
        is shown only once, when it is created: the dialog then offers this snippet filled in, ready to paste
        {keysLink}. A key you stored can be pasted here instead.
      </p>
      <CopyBlock label="SDK v2 snippet (with a placeholder for the key)" text={installSnippet(options)} />
      <h3>With the Google tag (Consent Mode v2)</h3>
      <p>
        {options.googleConsentMode
          ? 'Google Consent Mode is on for this project: the script tag carries data-google-consent-mode, so the SDK writes Google’s consent default before the Google tag runs, and sends gtag consent updates mapped from your purposes.'
          : 'Turn on Google Consent Mode in the consent editor (Experience), map each Google signal to your purposes and publish; then use this, whose script tag carries data-google-consent-mode:'}
      </p>
      <CopyBlock label="SDK v2 with the Google tag (with a placeholder for the key)" text={googleTagSnippet(options)} />
    </>
  );
  const keyNote = (
    <>
      Put your publishable key in place of <code>{KEY_PLACEHOLDER}</code>: the dialog shown when a key is created offers this snippet with it
      {keysLink}.
    </>
  );
  return (
    <>
      <h2>Install the SDK</h2>
      <InstallTabs
        label="Where the SDK runs"
        tabs={[
          { id: 'web', label: 'Website', panel: website },
          { id: 'react-native', label: 'App (React Native)', panel: <ReactNativePanel publicKey={KEY_PLACEHOLDER} keyNote={keyNote} /> },
        ]}
      />
    </>
  );
}
