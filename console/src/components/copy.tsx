// Copying to the clipboard, and a block of text to paste elsewhere (the install snippet) with a Copy button that
// copies exactly what is shown.
import { useState } from 'react';

/** Copies `text`; when the browser refuses (an insecure origin, a denied prompt) `onRefused` runs, e.g. to select a field for Ctrl+C. */
export function useCopy(text: string, onRefused?: () => void) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      onRefused?.();
      setCopied('no');
    }
  };
  return { copied, copy };
}

/** What the status line says after copying a secret shown in a read-only field. */
export const secretCopyStatus = (copied: 'yes' | 'no' | null): string =>
  copied === 'yes' ? 'Copied to the clipboard.' : copied === 'no' ? 'The browser refused the clipboard: the key is selected, press Ctrl+C.' : '';

export function CopyBlock({ label, text, copyLabel = 'Copy' }: { label: string; text: string; copyLabel?: string }) {
  const { copied, copy } = useCopy(text);
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
