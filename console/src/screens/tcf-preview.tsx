// The TCF screen's preview: the real tcf.js (loaded by stub.js, beside consent.js) in the consent preview's frame
// (console/preview.html), fed the draft's SDK v2 answer with the TCF settings being edited and the vendor-list
// answer those settings would get (TcfVendorList.sdkAnswer). Nothing reaches the SDK API; nothing is recorded.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { ErrorState, Loading } from '../components/states';
import { ConsentPreviewDocument, TcfPreviewListDocument } from '../graphql/generated';
import type { Experience } from '../lib/consent-model';
import type { TcfSettings } from '../lib/tcf-model';

const SETTLE_MS = 350;

export default function TcfPreview({ projectId, experience, tcf, listVersion }: { projectId: string; experience: Experience; tcf: TcfSettings; listVersion: number | null }) {
  const [layer, setLayer] = useState<'first' | 'second'>('first');
  const [draft] = useQuery({ query: ConsentPreviewDocument, variables: { projectId, locale: null }, requestPolicy: 'cache-and-network' });
  const server = draft.data?.consentPreview as { locale: string; experience: Record<string, unknown> } | undefined;
  const [list, refetchList] = useQuery({
    query: TcfPreviewListDocument,
    pause: !server || !tcf.enabled,
    variables: { projectId, vendors: tcf.vendors, googleAtps: tcf.googleAtps, language: server?.locale ?? null },
  });
  // A list fetched since (turning TCF on fetches it): read again rather than keep the cached "none held".
  useEffect(() => {
    if (listVersion !== null) refetchList({ requestPolicy: 'network-only' });
  }, [listVersion, refetchList]);
  const vendorList = list.data?.tcfVendorList?.sdkAnswer;
  const ready = !!server && tcf.enabled && !!vendorList;
  // The SDK's config reads cmpId as a number: an empty field is previewed with a placeholder id.
  const answer = useMemo(
    () => server && { ...server, experience: { ...server.experience, googleConsentMode: experience.googleConsentMode, tcf: { ...tcf, cmpId: tcf.cmpId ?? 2 } } },
    [server, experience.googleConsentMode, tcf],
  );

  const [frameKey, setFrameKey] = useState(0);
  const serialized = ready ? JSON.stringify([answer, vendorList]) : '';
  useEffect(() => {
    if (!serialized) return;
    const timer = setTimeout(() => setFrameKey((k) => k + 1), SETTLE_MS);
    return () => clearTimeout(timer);
  }, [serialized, layer]);

  const frame = useRef<HTMLIFrameElement>(null);
  const latest = useRef({ answer, vendorList, layer });
  latest.current = { answer, vendorList, layer };
  useEffect(() => {
    const listener = (event: MessageEvent) => {
      if (event.origin !== window.location.origin || event.source !== frame.current?.contentWindow) return;
      if ((event.data as { type?: string })?.type !== 'consent-preview-ready' || !latest.current.answer) return;
      frame.current!.contentWindow!.postMessage(
        { type: 'consent-preview', answer: latest.current.answer, preferences: latest.current.layer === 'second', tcfVendorList: latest.current.vendorList },
        window.location.origin,
      );
    };
    window.addEventListener('message', listener);
    return () => window.removeEventListener('message', listener);
  }, []);

  return (
    <div className="preview">
      <div className="row preview-controls">
        <h2 id="preview-title">TCF preview</h2>
        <div className="segmented" role="group" aria-label="Which layer">
          <button type="button" aria-pressed={layer === 'first'} onClick={() => setLayer('first')}>
            First layer
          </button>
          <button type="button" aria-pressed={layer === 'second'} onClick={() => setLayer('second')}>
            Second layer
          </button>
        </div>
      </div>
      {(draft.error || list.error) && <ErrorState title="The preview could not be built" error={draft.error ?? list.error} />}
      {!tcf.enabled ? (
        <p className="state empty">Tick “Show the IAB TCF banner” to preview it.</p>
      ) : list.data && !list.data.tcfVendorList ? (
        <p className="state empty">No Global Vendor List is held yet: the banner needs one.</p>
      ) : !ready ? (
        !draft.error && !list.error && <Loading label="Building the preview…" />
      ) : (
        <iframe
          key={frameKey}
          ref={frame}
          className="preview-frame tcf-frame"
          title={`Preview of the TCF banner, ${layer} layer, with the real SDK`}
          src="/console/preview.html"
          sandbox="allow-scripts allow-same-origin"
        />
      )}
      <p className="hint">The SDK’s TCF banner as visitors in the EEA get it, with the settings as edited (saved or not). Choices made here are not recorded.</p>
    </div>
  );
}
