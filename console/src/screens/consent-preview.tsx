// The live preview: the real SDK v2 (/sdk/v2/consent.js) in a frame of the console's own origin
// (console/preview.html), fed the answer GET /api/sdk/v2/config would give for the draft. The service builds
// that answer for the saved draft (consentPreview: locales, UI strings); the texts and settings being edited
// are laid over it here, so the preview follows the form as the operator types.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { ErrorState, Loading } from '../components/states';
import { ConsentPreviewDocument } from '../graphql/generated';
import { localConfig, type DraftForm, type Experience } from '../lib/consent-model';
import { Link } from 'wouter';
import { useProjectContext } from '../lib/context';
import { paths } from '../lib/screen';

const SETTLE_MS = 350;

interface ServerAnswer {
  locale: string;
  locales: string[];
  ui: Record<string, string>;
  experience: Record<string, unknown>;
  [field: string]: unknown;
}

export default function Preview({ projectId, form, experience, version }: { projectId: string; form: DraftForm; experience: Experience; version: string }) {
  const [locale, setLocale] = useState('');
  const [view, setView] = useState<'banner' | 'preferences'>('banner');
  const [result, refetch] = useQuery({ query: ConsentPreviewDocument, variables: { projectId, locale: locale || null }, requestPolicy: 'cache-and-network' });
  useEffect(() => refetch({ requestPolicy: 'network-only' }), [version, refetch]);
  const server = result.data?.consentPreview as ServerAnswer | undefined;

  const answer = useMemo(() => {
    if (!server) return null;
    const shown = server.locale;
    const { defaultLocale: _d, translations, ...settings } = experience;
    return {
      ...server,
      config: localConfig(form, experience, shown),
      ui: { ...server.ui, ...(translations[shown]?.ui ?? {}) },
      experience: { ...server.experience, ...settings },
    };
  }, [server, form, experience]);

  // Reload the frame once the form has settled: each render starts from a visitor without a decision.
  const [frameKey, setFrameKey] = useState(0);
  const serialized = answer ? JSON.stringify(answer) : '';
  useEffect(() => {
    if (!serialized) return;
    const timer = setTimeout(() => setFrameKey((k) => k + 1), SETTLE_MS);
    return () => clearTimeout(timer);
  }, [serialized, view]);

  const frame = useRef<HTMLIFrameElement>(null);
  const latest = useRef({ answer, view });
  latest.current = { answer, view };
  useEffect(() => {
    const listener = (event: MessageEvent) => {
      if (event.origin !== window.location.origin || event.source !== frame.current?.contentWindow) return;
      if ((event.data as { type?: string })?.type !== 'consent-preview-ready' || !latest.current.answer) return;
      frame.current!.contentWindow!.postMessage(
        { type: 'consent-preview', answer: latest.current.answer, preferences: latest.current.view === 'preferences' },
        window.location.origin,
      );
    };
    window.addEventListener('message', listener);
    return () => window.removeEventListener('message', listener);
  }, []);

  const locales = server?.locales ?? [experience.defaultLocale];
  return (
    <div className="preview">
      <div className="row preview-controls">
        <h2 id="preview-title">Live preview</h2>
        <label>
          <span className="visually-hidden">Preview language</span>
          <select value={locale || server?.locale || ''} onChange={(e) => setLocale(e.target.value)} aria-label="Preview language">
            {locales.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <div className="segmented" role="group" aria-label="What to preview">
          <button type="button" aria-pressed={view === 'banner'} onClick={() => setView('banner')}>
            Banner
          </button>
          <button type="button" aria-pressed={view === 'preferences'} onClick={() => setView('preferences')}>
            Preferences
          </button>
        </div>
      </div>
      {result.error && <ErrorState title="The preview could not be built" error={result.error} retry={() => refetch({ requestPolicy: 'network-only' })} />}
      {!answer && !result.error && <Loading label="Building the preview…" />}
      {answer && form.purposes.length === 0 && <p className="hint">Add a purpose to see it in the banner.</p>}
      {(experience.tcf as { enabled?: boolean } | undefined)?.enabled && <TcfNote projectId={projectId} />}
      {answer && (
        <iframe
          key={frameKey}
          ref={frame}
          className="preview-frame"
          title="Preview of the consent banner with the real SDK"
          src="/console/preview.html"
          sandbox="allow-scripts allow-same-origin"
        />
      )}
      <p className="hint">The SDK v2 as your visitors get it, with the draft. Choices made here are not recorded.</p>
    </div>
  );
}

/** With IAB TCF on, visitors where GDPR applies get tcf.js's two layers instead: previewed on their own screen. */
function TcfNote({ projectId }: { projectId: string }) {
  const { organization } = useProjectContext();
  return (
    <p className="hint" role="note">
      IAB TCF is on: visitors in the EEA, the UK and Switzerland see the TCF banner instead of this one.{' '}
      {organization && <Link href={paths.projectScreen(organization.id, projectId, 'consent/tcf')}>Preview it on the IAB TCF screen</Link>}
    </p>
  );
}
