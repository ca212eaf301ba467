// A project's home (console-core): the go-live checklist, which updates as the operator goes (it refetches
// every few seconds until every step is done, since the SDK's first request and first receipt happen on the
// operator's site), and the copy-paste snippet for SDK v2 with the Google tag (Consent Mode) examples.
import { useEffect, useState } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { QueryState } from '../components/states';
import { ProjectHomeDocument, type ProjectHomeQuery } from '../graphql/generated';
import { useProjectContext } from '../lib/context';
import { paths, type ScreenProps } from '../lib/screen';

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
}

export function checklist(project: Project): Step[] {
  const keys = (project.apiKeys?.edges ?? []).map((e) => e.node).filter((k) => !k.revokedAt);
  const latest = project.consent?.latestVersion;
  const origins = project.allowedOrigins?.origins ?? [];
  const used = keys.filter((k) => k.lastUsedAt);
  const receipt = project.receipts?.edges[0]?.node;
  return [
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
      detail: origins.length ? `${origins.length} allowed: ${origins.slice(0, 3).join(', ')}${origins.length > 3 ? '…' : ''}` : 'Browsers on other origins are refused until you list yours.',
      screen: 'origins',
      action: 'Set allowed origins',
    },
    {
      id: 'key',
      title: 'Create a publishable key',
      done: keys.length > 0,
      detail: keys.length ? `${keys.length} active key${keys.length > 1 ? 's' : ''} (${keys.map((k) => k.prefix).join(', ')}…)` : 'The SDK identifies your project with it.',
      screen: 'keys',
      action: 'Manage API keys',
    },
    {
      id: 'sdk',
      title: 'Install the SDK on your site',
      done: used.length > 0,
      detail: used.length ? `The SDK loaded your configuration (key ${used[0]!.prefix}…, ${new Date(used[0]!.lastUsedAt!).toLocaleString()}).` : 'Paste the snippet below into your pages; this turns green at the first visit.',
      screen: '',
      action: '',
    },
    {
      id: 'receipt',
      title: 'Receive the first consent receipt',
      done: !!receipt,
      detail: receipt ? `First receipt stored ${new Date(receipt.createdAt).toLocaleString()} (SDK ${receipt.sdkVersion}).` : 'Accept or reject the banner on your site once.',
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
                <li key={step.id} className={step.done ? 'done' : 'todo'} data-step={step.id}>
                  <span className="check" aria-hidden="true">
                    {step.done ? '✓' : ''}
                  </span>
                  <div>
                    <p className="step-title">
                      {step.title} <span className="visually-hidden">{step.done ? '(done)' : '(to do)'}</span>
                    </p>
                    <p className="step-detail">{step.detail}</p>
                    {step.screen && !step.done && organization && (
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
  const origin = window.location.origin;
  const key = (project.apiKeys?.edges ?? []).map((e) => e.node).find((k) => !k.revokedAt);
  // Only the prefix of a key is ever readable again: the secret is shown once, when it is created.
  const keyText = key ? `${key.prefix}…` : 'pk_live_…';
  const gcm = (project.consent?.experience as { googleConsentMode?: { enabled?: boolean } } | undefined)?.googleConsentMode?.enabled;
  const basic = `<script src="${origin}/sdk/v2/consent.js"></script>
<script>ConsentSDK.init({ publicKey: '${keyText}', apiBaseUrl: '${origin}' });</script>`;
  const google = `<head>
  <!-- 1. The consent SDK. With data-google-consent-mode on its tag, it writes Google's consent default ('denied') before any later tag runs, on a visitor's first page too. -->
  <script src="${origin}/sdk/v2/consent.js"></script>
  <script>ConsentSDK.init({ publicKey: '${keyText}', apiBaseUrl: '${origin}' });</script>
  <!-- 2. The Google tag, unchanged: it reads the default, then each update the SDK sends. -->
  <script async src="https://www.googletagmanager.com/gtag/js?id=G-XXXXXXX"></script>
  <script>
    window.dataLayer = window.dataLayer || [];
    function gtag(){dataLayer.push(arguments);}
    gtag('js', new Date());
    gtag('config', 'G-XXXXXXX');
  </script>
  <!-- 3. Scripts that must not run at all without consent: held back until 'analytics' is granted. -->
  <script type="text/plain" data-consent="analytics" data-src="https://cdn.example.com/heatmap.js"></script>
</head>`;
  return (
    <>
      <h2>Install the SDK</h2>
      <p>
        Paste this into every page, before other tags. Replace <code>{keyText}</code> with the full key you copied when you created it
        (only its prefix is shown again).
      </p>
      <CopyBlock label="SDK v2 snippet" text={basic} />
      <h3>With the Google tag (Consent Mode v2)</h3>
      <p>
        {gcm
          ? 'Google Consent Mode is on for this project: the SDK sends gtag consent updates mapped from your purposes.'
          : 'Turn on Google Consent Mode in the consent editor (Experience) and map each Google signal to your purposes; then:'}
      </p>
      <CopyBlock label="SDK v2 with the Google tag" text={google} />
    </>
  );
}

function CopyBlock({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      setCopied('no');
    }
  };
  return (
    <figure className="snippet">
      <figcaption className="row">
        <span>{label}</span>
        <button type="button" onClick={copy}>
          Copy
        </button>
        <span role="status">{copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Copying was refused by the browser: select the text instead.' : ''}</span>
      </figcaption>
      <pre tabIndex={0} aria-label={label}>
        <code>{text}</code>
      </pre>
    </figure>
  );
}
