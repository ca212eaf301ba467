// The SDK collector: whether the page loads the project's SDK (its config request names a publishable key), when
// the config is answered (the banner is waited for from then on), and the SDK's consent requests, answered inside
// the browser as the service would: a scan's clicks are never receipts (docs/scanner.md).
import type { Request, Route } from 'playwright-core';
import { uuidv7 } from 'uuidv7';
import { withoutQuery, type VisitSession } from './visit-session.js';

const SDK_CONFIG_PATH = /\/api\/sdk\/v[12]\/config$/;
/** Where the SDK (v1 and v2) sends a decision to become a receipt. */
const SDK_CONSENT_PATH = /\/api\/sdk\/v[12]\/consent$/;

export interface SdkWatch {
  /** Resolves when the SDK's config request is answered (never, on a page without the SDK). */
  configAnswered: Promise<void>;
}

/** The SDK's consent POST answered as the service would (201 `{ ok, id, createdAt }`, contract 4.9), never sent. */
async function answerConsentLocally(route: Route, session: VisitSession): Promise<void> {
  const request = route.request();
  const origin = await request.headerValue('origin');
  const cors = { 'access-control-allow-origin': origin ?? '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'POST, OPTIONS', vary: 'Origin' };
  if (request.method() === 'OPTIONS') return route.fulfill({ status: 204, headers: cors });
  if (request.method() !== 'POST') return route.continue();
  session.result.consentRequestsAnswered++;
  await route.fulfill({
    status: 201,
    headers: { ...cors, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ ok: true, id: uuidv7(), createdAt: new Date().toISOString() }),
  });
}

export async function watchSdk(session: VisitSession): Promise<SdkWatch> {
  const { context, result, options } = session;
  await session.within(context.route((target) => SDK_CONSENT_PATH.test(target.pathname), (route) => answerConsentLocally(route, session)));
  let answered = () => {};
  const configAnswered = new Promise<void>((resolve) => (answered = resolve));
  context.on('request', (request: Request) => {
    if (!SDK_CONFIG_PATH.test(withoutQuery(request.url()))) return;
    session.track(
      request.headerValue('authorization').then((auth) => {
        const key = /^Bearer (pk_live_\w+)$/.exec(auth ?? '')?.[1];
        if (!key) return;
        result.sdk.loaded = true;
        result.sdk.keyPrefix ??= key.slice(0, 14);
        if (options.isProjectKey(key)) {
          result.sdk.projectKey = true;
          result.sdk.keyPrefix = key.slice(0, 14);
        }
      }),
    );
  });
  context.on('response', (response) => {
    if (SDK_CONFIG_PATH.test(withoutQuery(response.url()))) answered();
  });
  return { configAnswered };
}
