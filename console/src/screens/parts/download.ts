// Downloads of the console (evidence, receipts and audit-log exports) are REST routes. The console's cookie
// counts only on a request carrying `X-Consent-Console: 1` (docs/console-sessions.md), which a plain link
// cannot send, so the file is fetched with the header and saved from a Blob under the server's file name.
// The whole file passes through memory: fine for the console; for millions of receipts use the REST route
// with a bearer token (docs/console.md, "Downloads").
import { useState } from 'react';
import { CONSOLE_HEADERS } from '../../lib/client';
import { ApiError } from '../../lib/rest';

/** The file name of a `Content-Disposition: attachment; filename="…"` header. */
export function attachmentName(disposition: string | null): string | null {
  const match = disposition && /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  return match ? decodeURIComponent(match[1]!) : null;
}

/** Fetches `path` (same origin, with the console header) and saves the answer as a file. */
export async function downloadFile(path: string, fallbackName: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(path, { credentials: 'same-origin', headers: { ...CONSOLE_HEADERS } });
  } catch {
    throw new ApiError('The service cannot be reached. Check your connection and try again.', 'network', 0);
  }
  if (!response.ok) {
    const json = (await response.json().catch(() => ({}))) as { error?: string; code?: string; details?: unknown };
    throw new ApiError(json.error ?? `The service answered ${response.status}`, json.code ?? 'error', response.status, json.details);
  }
  const name = attachmentName(response.headers.get('Content-Disposition')) ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started reading the Blob by now; give it time before releasing the memory.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return name;
}

/** A query string of the defined values only. */
export function query(values: Record<string, string | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value) params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * A download button's state: which download runs (`busy`, the key given to `download`, or null), the last
 * error for an ErrorState, and a status line naming the saved file.
 */
export function useDownload() {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState('');
  const download = async (key: string, path: string, fallbackName: string) => {
    setBusy(key);
    setError(null);
    setStatus('');
    try {
      setStatus(`Downloaded ${await downloadFile(path, fallbackName)}.`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  return { busy, error, status, download };
}
