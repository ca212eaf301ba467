// A block of text to paste elsewhere (the install snippet) with a Copy button that copies exactly what is shown.
import { useState } from 'react';

export function CopyBlock({ label, text, copyLabel = 'Copy' }: { label: string; text: string; copyLabel?: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      setCopied('no');
    }
  };
  return (
    <figure className="snippet">
      <figcaption className="row">
        <span>{label}</span>
        <button type="button" onClick={copy} aria-label={`${copyLabel}: ${label}`}>
          {copyLabel}
        </button>
        <span role="status">{copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Copying was refused by the browser: select the text instead.' : ''}</span>
      </figcaption>
      <pre tabIndex={0} aria-label={label}>
        <code>{text}</code>
      </pre>
    </figure>
  );
}
