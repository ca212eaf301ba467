// The live preview's frame (console/preview.html, same origin as the console): the real SDK v2 from
// /sdk/v2/consent.js renders the draft. The console posts the answer GET /api/sdk/v2/config would give if
// the draft were published (the consentPreview query); here the SDK's requests are answered with it, so
// nothing reaches the SDK API and no receipt is ever recorded. The console reloads the frame for every new
// draft, so each render starts from a visitor without a decision.
import './preview.css';

interface PreviewMessage {
  type: 'consent-preview';
  answer: unknown;
  /** Open the preferences dialog rather than the banner. */
  preferences: boolean;
}

interface ConsentSdk {
  init(options: { publicKey: string; apiBaseUrl: string; locale?: string; onError?: (e: { message: string }) => void }): Promise<{ showPreferences(): void }>;
}

const status = document.getElementById('preview-status')!;

function json(body: unknown, init: ResponseInit = {}): Response {
  return new Response(JSON.stringify(body), { status: 200, ...init, headers: { 'Content-Type': 'application/json' } });
}

function answerSdkRequests(answer: unknown): void {
  const realFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, location.href);
    if (url.origin !== location.origin) return realFetch(input, init);
    if (url.pathname === '/api/sdk/v2/config') return json(answer);
    if (url.pathname === '/api/sdk/v2/decision') return json({ decision: null });
    if (url.pathname === '/api/sdk/v1/consent') return json({ ok: true, id: 'preview', createdAt: new Date().toISOString() }, { status: 201 });
    return realFetch(input, init);
  };
}

function loadSdk(): Promise<ConsentSdk> {
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = '/sdk/v2/consent.js';
    script.onload = () => resolve((window as unknown as { ConsentSDK: ConsentSdk }).ConsentSDK);
    script.onerror = () => reject(new Error('The SDK could not be loaded from /sdk/v2/consent.js'));
    document.head.append(script);
  });
}

async function render(message: PreviewMessage): Promise<void> {
  try {
    localStorage.clear(); // a visitor without a decision: the banner shows
  } catch {
    // storage blocked: the SDK copes
  }
  answerSdkRequests(message.answer);
  try {
    const sdk = await loadSdk();
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
