// identify(token) and forget() for apps (extensions.md section 14, docs/subjects.md): the app hands the core a
// subject token its backend signed when the person signed in; the service links this installation to the person
// (keeping only a keyed hash of the account id) and the person's newest decision, made on any of their devices or
// sites, is adopted without a banner and without a receipt while it is for the current version. forget() on
// sign-out unlinks the installation; its own decision stays.
import { sdkError } from '../../src/api';
import type { Store } from './store';

export interface SubjectDeps {
  base: string;
  publicKey: string;
  fetch: typeof fetch;
  store: Store;
  installation(): string;
  /** The core's refresh: the config, then (signed in) the person's decision through /decision, then listeners. */
  refresh(): Promise<void>;
  reportError(err: unknown): void;
}

/** Signed in on this installation: every refresh asks /decision, as the person may have decided elsewhere. */
export const signedIn = async (store: Store) => (await store.read<boolean>('subject', (v) => v === true)) === true;

export function subjects(d: SubjectDeps) {
  async function post(path: string, body: object): Promise<unknown> {
    let res: Response;
    try {
      res = await d.fetch(`${d.base}/api/sdk/${path}`, {
        method: 'POST',
        headers: { Authorization: 'Bearer ' + d.publicKey, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    } catch {
      throw sdkError('network_error', `could not reach ${d.base}`);
    }
    const json = await res.json().catch(() => null);
    if (!res.ok) throw sdkError(json?.code || 'http_error', json?.error || `HTTP ${res.status}`, res.status);
    return json;
  }
  return {
    /** True once signed in and the person's decision adopted; false (with an error event, nothing changed) otherwise. */
    async identify(token: string): Promise<boolean> {
      try {
        await post('v2/identify', { installationId: d.installation(), token });
      } catch (err) {
        d.reportError(err);
        return false;
      }
      await d.store.write('subject', true);
      await d.refresh();
      return true;
    },
    /** Signed out: false (with an error event) when the service could not be told; the link then stays. */
    async forget(): Promise<boolean> {
      try {
        await post('v2/forget', { installationId: d.installation() });
      } catch (err) {
        d.reportError(err);
        return false;
      }
      await d.store.write('subject', undefined);
      return true;
    },
  };
}
