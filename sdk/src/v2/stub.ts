// stub.js (/sdk/v2/stub.js, at most 1 KiB min+gzip): what tags running before the consent SDK must find
// already, loaded synchronously before consent.js with the same `data-` attributes on its script tag:
//   <script src="https://HOST/sdk/v2/stub.js" data-tcf></script>
//   <script src="https://HOST/sdk/v2/consent.js"></script>
// One section per feature; each acts only when its attribute is on this script tag.
import { w } from './page';
import { tcfStub } from './tcf-stub';
// --- Integrations (extensions.md section 12, docs/integrations.md): the vendors' denied defaults, at evaluation.
import './integrations-stub';

const tag = document.currentScript as HTMLScriptElement | null;

// --- IAB TCF (extensions.md section 11, docs/tcf.md) ------------------------------------------------------
// `__tcfapi` and the `__tcfapiLocator` frame at once, so ad tags queue their calls; and tcf.js (the CMP API and
// the TCF banner) starts loading now, beside consent.js and its configuration. Until it has run,
// `window.ConsentTcf` is a promise of it (undefined when it cannot load), which consent.js awaits; tcf.js then
// defines `ConsentTcf` itself.
if (tag?.dataset.tcf != null) {
  tcfStub();
  const script = document.createElement('script');
  // A URL is turned into its string as it is set.
  script.src = new URL('tcf.js', tag.src) as unknown as string;
  w.ConsentTcf = new Promise((resolve) => (script.onload = script.onerror = () => resolve(typeof w.ConsentTcf == 'function' ? w.ConsentTcf : undefined)));
  document.head.append(script);
}
