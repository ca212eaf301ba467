// The install snippet, in one place: the key-created dialog fills it in with the full key (the one moment the
// console knows it), the project home shows it with a placeholder no one could mistake for a key.

/** What the project home puts where the key goes: not a key, and said to be one to replace. */
export const KEY_PLACEHOLDER = 'PASTE_YOUR_PUBLISHABLE_KEY_HERE';

export interface SnippetOptions {
  /** The service's origin (the console is served by it). */
  origin: string;
  /** The full publishable key, or KEY_PLACEHOLDER. */
  publicKey: string;
  /**
   * The project's experience has Google Consent Mode on: the script tag says so, so the SDK writes Google's
   * consent default at evaluation, before any later tag runs, on a visitor's first page too (extensions.md §4).
   */
  googleConsentMode: boolean;
  /**
   * The vendors' consent APIs of the published experience (docs/integrations.md): stub.js goes first, naming them in
   * data-integrations, so their denied defaults are written before the vendors' tags on a visitor's first page.
   */
  integrations?: string[];
  /**
   * IAB TCF is on (docs/tcf.md): stub.js goes first with data-tcf, so `__tcfapi` exists before any ad tag runs and
   * tcf.js starts loading beside consent.js.
   */
  tcf?: boolean;
}

const stubTag = ({ origin, integrations, tcf }: SnippetOptions, indent: string) =>
  tcf || integrations?.length
    ? `${indent}<script src="${origin}/sdk/v2/stub.js"${tcf ? ' data-tcf' : ''}${integrations?.length ? ` data-integrations="${integrations.join(' ')}"` : ''}></script>\n`
    : '';

const sdkTags = (options: SnippetOptions, indent = '') => {
  const { origin, publicKey, googleConsentMode } = options;
  return stubTag(options, indent) +
  `${indent}<script src="${origin}/sdk/v2/consent.js"${googleConsentMode ? ' data-google-consent-mode' : ''}></script>\n` +
  `${indent}<script>ConsentSDK.init({ publicKey: '${publicKey}', apiBaseUrl: '${origin}' });</script>`;
};

/** The two tags to paste into every page, before other tags. */
export const installSnippet = (options: SnippetOptions): string => sdkTags(options);

/** The same with the Google tag after it, and a script held back until 'analytics' is granted. */
export const googleTagSnippet = (options: SnippetOptions): string => `<head>
  <!-- 1. The consent SDK. data-google-consent-mode: Google's consent default ('denied') is written here,
       before any tag below runs, on a visitor's first page too. -->
${sdkTags({ ...options, googleConsentMode: true }, '  ')}
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

interface ExperienceLike {
  googleConsentMode?: { enabled?: boolean };
}

/** Whether Consent Mode is on: the published experience when there is one (what sites get), else the draft's. */
export function consentModeOn(consent: { experience?: unknown; latestVersion?: { experience?: unknown } | null } | null | undefined): boolean {
  const experience = (consent?.latestVersion?.experience ?? consent?.experience) as ExperienceLike | null | undefined;
  return experience?.googleConsentMode?.enabled === true;
}

/** The integration types of the published experience (else the draft's), for the snippet's data-integrations. */
export function integrationTypes(consent: { experience?: unknown; latestVersion?: { experience?: unknown } | null } | null | undefined): string[] {
  const experience = (consent?.latestVersion?.experience ?? consent?.experience) as { integrations?: { type: string }[] } | null | undefined;
  return (experience?.integrations ?? []).map((integration) => integration.type);
}

/**
 * Whether IAB TCF is on in the published experience or in the draft: the stub must already be on the page when a
 * version with TCF goes live, and on a page whose version has it off, tcf.js only hands back to the core banner.
 */
export function tcfOn(consent: { experience?: unknown; latestVersion?: { experience?: unknown } | null } | null | undefined): boolean {
  const on = (experience: unknown) => (experience as { tcf?: { enabled?: boolean } } | null | undefined)?.tcf?.enabled === true;
  return on(consent?.latestVersion?.experience) || on(consent?.experience);
}

/** The npm packages an app installs (sdk/react-native/README.md); AsyncStorage keeps the decision and the queue. */
export const reactNativeInstall = 'npm install @consent/react-native @consent/core @react-native-async-storage/async-storage';

/**
 * The React Native app's root with the provider (issue 45): the same publishable key and service as the site; the
 * provider shows the default banner while a decision is needed (<ConsentBanner /> where the app wants it, with
 * `headless`), and `useConsent()` reads the decision anywhere below it.
 */
export const reactNativeSnippet = ({ origin, publicKey }: Pick<SnippetOptions, 'origin' | 'publicKey'>): string => `import AsyncStorage from '@react-native-async-storage/async-storage';
import { ConsentProvider, useConsent } from '@consent/react-native';

export default function App() {
  return (
    <ConsentProvider publicKey="${publicKey}" apiBaseUrl="${origin}" storage={AsyncStorage}>
      {/* The banner shows over the app while a decision is needed (or add headless and place <ConsentBanner /> yourself). */}
      <Navigation />
    </ConsentProvider>
  );
}

// Anywhere inside the provider: what the person allowed, and a way back to their choices.
function PrivacySettings() {
  const { isAllowed, showPreferences } = useConsent();
  return <Button title={isAllowed('analytics') ? 'Analytics on: change' : 'Privacy settings'} onPress={showPreferences} />;
}`;
