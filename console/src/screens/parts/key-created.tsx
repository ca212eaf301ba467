// The one moment the console knows a publishable key in full: right after it is created. A modal dialog shows the
// key and the install snippet filled in with it, ready to paste (Copy copies exactly what is shown), until the
// operator says they have stored them.
import { useEffect, useId, useRef } from 'react';
import { CopyBlock, secretCopyStatus, useCopy } from '../../components/copy';
import { installSnippet } from '../../lib/snippet';
import { InstallTabs, ReactNativePanel } from './install-tabs';

export function KeyCreatedDialog({
  name,
  secret,
  googleConsentMode,
  integrations,
  tcf,
  onDone,
}: {
  name: string;
  secret: string;
  googleConsentMode: boolean;
  integrations?: string[];
  /** IAB TCF on: stub.js with data-tcf first (lib/snippet.ts). */
  tcf?: boolean;
  onDone(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  // No clipboard permission: the field is selected for Ctrl+C.
  const { copied, copy } = useCopy(secret, () => input.current?.select());
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const snippet = installSnippet({ origin: window.location.origin, publicKey: secret, googleConsentMode, integrations, tcf });
  return (
    <dialog ref={ref} aria-labelledby={`${id}-title`} className="key-created" onCancel={(event) => (event.preventDefault(), onDone())}>
      <h2 id={`${id}-title`} className="dialog-title">
        Key “{name}” created
      </h2>
      <p>Copy it now: the full key is shown only this once. The snippet below already holds it.</p>
      <div className="row">
        <label className="secret-field">
          Publishable key
          <input ref={input} readOnly value={secret} onFocus={(event) => event.currentTarget.select()} spellCheck={false} />
        </label>
        <button type="button" onClick={copy}>
          Copy key
        </button>
      </div>
      <p role="status" className="muted">
        {secretCopyStatus(copied)}
      </p>
      <h3>Install snippet, ready to paste</h3>
      <InstallTabs
        label="Where the SDK runs"
        tabs={[
          {
            id: 'web',
            label: 'Website',
            panel: (
              <>
                <p>
                  Paste it into every page of your site, before other tags{googleConsentMode ? ' (Google Consent Mode is on: the script tag says so)' : ''}.
                  List the site’s origin under Allowed origins too.
                </p>
                <CopyBlock label="Install snippet" text={snippet} copyLabel="Copy snippet" />
              </>
            ),
          },
          { id: 'react-native', label: 'App (React Native)', panel: <ReactNativePanel publicKey={secret} keyNote="The snippet below already holds this key." /> },
        ]}
      />
      <div className="row dialog-actions">
        <button type="button" className="primary" onClick={onDone} autoFocus>
          I have stored it
        </button>
      </div>
    </dialog>
  );
}
