// stub.js (/sdk/v2/stub.js, at most 1 KiB min+gzip): what tags running before the consent SDK must find
// already, loaded synchronously before consent.js with the same `data-` attributes on its script tag:
//   <script src="https://HOST/sdk/v2/stub.js" data-tcf></script>
//   <script src="https://HOST/sdk/v2/consent.js"></script>
// One section per feature; each acts only when its attribute is on this script tag.
import { tcfStub } from './tcf-stub';
// --- Integrations (extensions.md section 12, docs/integrations.md): the vendors' denied defaults, at evaluation.
import './integrations-stub';

const tag = document.currentScript as HTMLScriptElement | null;
const w = window as unknown as Record<string, unknown>;

// --- IAB TCF (extensions.md section 11, docs/tcf.md) ------------------------------------------------------
// `__tcfapi` and the `__tcfapiLocator` frame at once, so ad tags queue their calls; and tcf.js (the CMP API and
// the TCF banner) starts loading now, beside consent.js and its configuration. Until it has run,
// `window.ConsentTcf` is a promise of it (undefined when it cannot load), which consent.js awaits; tcf.js then
// defines `ConsentTcf` itself.
if (tag?.hasAttribute('data-tcf')) {
  tcfStub();
  const script = document.createElement('script');
  script.src = new URL('tcf.js', tag.src).href;
  w.ConsentTcf = new Promise((resolve) => (script.onload = script.onerror = () => resolve(typeof w.ConsentTcf == 'function' ? w.ConsentTcf : undefined)));
  document.head.append(script);
}
