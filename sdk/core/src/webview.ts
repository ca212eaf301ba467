// A page in the app's WebView that runs the browser SDK v2 must not ask again (extensions.md section 13).
// webViewUrl: the installation in the URL fragment, exactly as the browser client's decorate() puts it (`#i=...`,
// after any fragment the URL had): never sent to a server; the page's SDK adopts it and asks /decision once.
// webViewScript: injected before the page's scripts run, it writes the installation and the decision into the page's
// localStorage under the browser SDK's own keys (sdk/src/storage.ts, sdk/src/v2/consent.ts, tcf.ts), so the SDK
// there finds a current decision at once, offline too, and shows no banner and posts nothing.
import type { Stored } from '../../src/v2/consent';

/** The browser SDK's storage keys: its installation, its decision and TC strings for a project. */
const INSTALLATION = 'consent:installationId';
const decisionKey = (projectId: string) => 'consent:' + projectId;
const tcfKey = (projectId: string) => 'consent:tcf:' + projectId;

export function webViewUrl(url: string, installation: string): string {
  // String work, not URL: React Native's URL has no settable hash.
  const hash = url.indexOf('#');
  return url + (hash < 0 ? '#' : hash < url.length - 1 ? '&' : '') + 'i=' + installation;
}

export function webViewScript(installation: string, projectId: string | undefined, decision: (Stored & { tcf?: unknown }) | undefined): string {
  const items: [string, string][] = [[INSTALLATION, installation]];
  if (projectId && decision) {
    const { consentHash, versionNumber, choices, decidedAt, gpc, mode, action, tcf } = decision;
    items.push([decisionKey(projectId), JSON.stringify({ consentHash, versionNumber, choices, decidedAt, gpc, mode, action })]);
    if (tcf) items.push([tcfKey(projectId), JSON.stringify(tcf)]);
  }
  // JSON.stringify makes each a JavaScript string literal. Blocked storage: the page asks as any page would.
  // `true;` last: react-native-webview's injected scripts must end in a value.
  return `(function(){try{var s=window.localStorage;${items.map(([k, v]) => `s.setItem(${JSON.stringify(k)},${JSON.stringify(v)});`).join('')}}catch(e){}})();true;`;
}
