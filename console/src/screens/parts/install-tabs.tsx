// The install screen's snippets by where the SDK runs: a website (the script tags) or an app (React Native). Tabs
// as the WAI-ARIA pattern has them: a tablist of buttons, arrow keys move between them, one panel shown.
import { useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { CopyBlock } from '../../components/copy';
import { reactNativeInstall, reactNativeSnippet } from '../../lib/snippet';

export interface InstallTab {
  id: string;
  label: string;
  panel: ReactNode;
}

export function InstallTabs({ label, tabs }: { label: string; tabs: InstallTab[] }) {
  const [selected, setSelected] = useState(tabs[0]!.id);
  const base = useId();
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  const onKeyDown = (event: KeyboardEvent, index: number) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (!step) return;
    event.preventDefault();
    const next = (index + step + tabs.length) % tabs.length;
    setSelected(tabs[next]!.id);
    buttons.current[next]?.focus();
  };
  return (
    <div className="install-tabs">
      <div role="tablist" aria-label={label} className="tabs">
        {tabs.map((tab, index) => (
          <button
            key={tab.id}
            ref={(element) => {
              buttons.current[index] = element;
            }}
            type="button"
            role="tab"
            id={`${base}-tab-${tab.id}`}
            aria-selected={selected === tab.id}
            aria-controls={`${base}-panel-${tab.id}`}
            tabIndex={selected === tab.id ? 0 : -1}
            onClick={() => setSelected(tab.id)}
            onKeyDown={(event) => onKeyDown(event, index)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      {tabs.map((tab) => (
        <div key={tab.id} role="tabpanel" id={`${base}-panel-${tab.id}`} aria-labelledby={`${base}-tab-${tab.id}`} hidden={selected !== tab.id}>
          {tab.panel}
        </div>
      ))}
    </div>
  );
}

/** The "App (React Native)" tab's panel: install the packages, wrap the app in the provider with this key. */
export function ReactNativePanel({ publicKey, keyNote }: { publicKey: string; keyNote: ReactNode }) {
  return (
    <>
      <p>
        In a React Native app (iOS and Android), install the package and its storage, then wrap the app once at its root. It uses the same key
        and service as your site; its receipts show the app and platform they came from. {keyNote}
      </p>
      <CopyBlock label="Install the packages" text={reactNativeInstall} />
      <CopyBlock label="App.tsx (React Native)" text={reactNativeSnippet({ origin: window.location.origin, publicKey })} />
      <p className="muted">
        Decisions are stored on the device before they are sent and sent again until the service has them, each once. Apps send no Origin header,
        so Allowed origins do not apply to them.
      </p>
    </>
  );
}
