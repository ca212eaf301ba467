// The live preview's frame (console/preview.html, same origin as the console): the real SDK v2 from
// /sdk/v2/consent.js renders the draft. The console posts the answer GET /api/sdk/v2/config would give if
// the draft were published (the consentPreview query); here the SDK's requests are answered with it, so
// nothing reaches the SDK API and no receipt is ever recorded. The console reloads the frame for every new
// draft, so each render starts from a visitor without a decision.
import './preview.css';

interface PreviewMessage {
  type: 'consent-preview';
  answer: unknown;
  /** Open the preferences dialog rather than the banner (with TCF: the second layer). */
  preferences: boolean;
  /** With IAB TCF on: what GET /api/sdk/v2/tcf/vendor-list would answer; stub.js and tcf.js then draw the banner. */
  tcfVendorList?: unknown;
}

interface ConsentSdk {
  init(options: { publicKey: string; apiBaseUrl: string; locale?: string; onError?: (e: { message: string }) => void }): Promise<{ showPreferences(): void }>;
}

const status = document.getElementById('preview-status')!;

function json(body: unknown, init: ResponseInit = {}): Response {
  return new Response(JSON.stringify(body), { status: 200, ...init, headers: { 'Content-Type': 'application/json' } });
}

function answerSdkRequests(answer: unknown, tcfVendorList: unknown): void {
  const realFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, location.href);
    if (url.origin !== location.origin) return realFetch(input, init);
    if (url.pathname === '/api/sdk/v2/config') return json(answer);
    if (url.pathname === '/api/sdk/v2/decision') return json({ decision: null });
    if (url.pathname === '/api/sdk/v2/tcf/vendor-list' && tcfVendorList) return json(tcfVendorList);
    if (url.pathname === '/api/sdk/v1/consent') return json({ ok: true, id: 'preview', createdAt: new Date().toISOString() }, { status: 201 });
    return realFetch(input, init);
  };
}

function loadScript(src: string, attributes: string[] = []): Promise<void> {
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    for (const name of attributes) script.setAttribute(name, '');
    script.onload = () => resolve();
    script.onerror = () => reject(new Error(`The SDK could not be loaded from ${src}`));
    document.head.append(script);
  });
}

/** The snippet's order: with TCF, stub.js (data-tcf: it starts loading tcf.js) before consent.js. */
async function loadSdk(tcf: boolean): Promise<ConsentSdk> {
  // tcf.js styles its banner with a constructed sheet, as the core does: the console's CSP (style-src 'self') allows it.
  if (tcf) await loadScript('/sdk/v2/stub.js', ['data-tcf']);
  await loadScript('/sdk/v2/consent.js');
  return (window as unknown as { ConsentSDK: ConsentSdk }).ConsentSDK;
}

async function render(message: PreviewMessage): Promise<void> {
  try {
    localStorage.clear(); // a visitor without a decision: the banner shows
  } catch {
    // storage blocked: the SDK copes
  }
  answerSdkRequests(message.answer, message.tcfVendorList);
  try {
    const sdk = await loadSdk(!!message.tcfVendorList);
    const client = await sdk.init({ publicKey: 'pk_live_preview000000000000000000000000', apiBaseUrl: location.origin });
    if (message.preferences) client.showPreferences();
    status.textContent = 'Preview of the draft: nothing you choose here is recorded.';
    document.body.dataset.ready = 'true';
  } catch (error) {
    status.textContent = `The preview failed: ${(error as Error).message}`;
    document.body.dataset.ready = 'error';
  }
}

window.addEventListener('message', (event) => {
  if (event.origin !== location.origin || event.source !== window.parent) return;
  const message = event.data as PreviewMessage;
  if (message?.type === 'consent-preview') void render(message);
});
window.parent.postMessage({ type: 'consent-preview-ready' }, location.origin);
