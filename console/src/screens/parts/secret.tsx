// A secret the API returns once (a publishable key, a webhook signing secret): shown in a read-only field
// with a copy button until the operator says they have stored it.
import { useId, useRef } from 'react';
import { secretCopyStatus, useCopy } from '../../components/copy';

export function OneTimeSecret({ label, secret, onDone }: { label: string; secret: string; onDone(): void }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  // No clipboard permission: the field is selected for Ctrl+C.
  const { copied, copy } = useCopy(secret, () => input.current?.select());
  return (
    <div className="secret card" role="region" aria-labelledby={`${id}-title`}>
      <p id={`${id}-title`} className="secret-title">
        {label}
      </p>
      <p>Copy it now and keep it somewhere safe: it is shown only this once.</p>
      <div className="row">
        <label className="secret-field">
          <span className="visually-hidden">{label}</span>
          <input ref={input} readOnly value={secret} onFocus={(event) => event.currentTarget.select()} spellCheck={false} />
        </label>
        <button type="button" className="primary" onClick={copy}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
      <p role="status" className="muted">
        {secretCopyStatus(copied)}
      </p>
    </div>
  );
}
