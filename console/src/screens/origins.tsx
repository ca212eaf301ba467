// Allowed origins of a project (console-screens): which sites may use its publishable keys. Admins edit the
// list and the enforcement switch and save both at once; Viewers read them.
import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Empty, ErrorState, QueryState } from '../components/states';
import { ProjectAllowedOriginsDocument, UpdateAllowedOriginsDocument } from '../graphql/generated';
import { useCan } from '../lib/context';
import type { ScreenProps } from '../lib/screen';
import './parts/screens.css';

/** What the API accepts (docs: scheme://host[:port], `*.` for subdomains); the API has the last word. */
const ORIGIN = /^https?:\/\/(\*\.)?[a-z0-9.-]+(:\d{1,5})?$/i;

/** A pasted address becomes its origin: "https://shop.example/path" → "https://shop.example". */
export function normaliseOrigin(text: string): string {
  const trimmed = text.trim().replace(/\/+$/, '');
  if (trimmed.includes('*')) return trimmed.toLowerCase();
  try {
    const url = new URL(trimmed);
    return url.origin === 'null' ? trimmed : url.origin;
  } catch {
    return trimmed;
  }
}

export default function Origins({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const canEdit = useCan('ADMIN');
  const [result, refetch] = useQuery({ query: ProjectAllowedOriginsDocument, variables: { projectId } });
  return (
    <section aria-labelledby="screen-title" className="screen">
      <h1 id="screen-title">Allowed origins</h1>
      <p className="lead">
        The SDK answers only pages on these origins when enforcement is on (the default). List every site that loads the
        banner, for example <code>https://shop.example</code>, or <code>https://*.example.com</code> for its subdomains.
      </p>
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {(data) =>
          canEdit ? (
            <OriginsEditor projectId={projectId} saved={data.project.allowedOrigins!} />
          ) : (
            <OriginsView value={data.project.allowedOrigins!} />
          )
        }
      </QueryState>
    </section>
  );
}

function OriginsView({ value }: { value: { enforce: boolean; origins: string[] } }) {
  return (
    <div className="stack">
      <p>
        Enforcement:{' '}
        {value.enforce ? <span className="badge ok">On</span> : <span className="badge warn">Off: any site may use the keys</span>}
      </p>
      {value.origins.length ? (
        <ul className="origin-list" aria-label="Allowed origins">
          {value.origins.map((origin) => (
            <li key={origin}>
              <code>{origin}</code>
            </li>
          ))}
        </ul>
      ) : (
        <Empty title="No origin listed yet.">
          <p>An Admin or Owner adds the sites that show the banner.</p>
        </Empty>
      )}
      <p className="note">Admins and Owners change this list.</p>
    </div>
  );
}

function OriginsEditor({ projectId, saved }: { projectId: string; saved: { enforce: boolean; origins: string[] } }) {
  const [enforce, setEnforce] = useState(saved.enforce);
  const [origins, setOrigins] = useState(saved.origins);
  const [draft, setDraft] = useState('');
  const [draftError, setDraftError] = useState('');
  const [state, save] = useMutation(UpdateAllowedOriginsDocument);
  const [status, setStatus] = useState('');
  // A save (here or elsewhere) refreshes the saved value: start again from it.
  const savedKey = JSON.stringify(saved);
  useEffect(() => {
    setEnforce(saved.enforce);
    setOrigins(saved.origins);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- by value: a refetch makes a new object
  }, [savedKey]);

  const changed = enforce !== saved.enforce || origins.join('\n') !== saved.origins.join('\n');

  const add = (event: FormEvent) => {
    event.preventDefault();
    const origin = normaliseOrigin(draft);
    if (!ORIGIN.test(origin)) return setDraftError('Enter an origin such as https://shop.example (scheme, host and an optional port; no path).');
    if (origins.includes(origin)) return setDraftError(`${origin} is already in the list.`);
    setOrigins([...origins, origin]);
    setDraft('');
    setDraftError('');
    setStatus('');
  };
  const submit = async () => {
    setStatus('');
    const done = await save({ projectId, input: { enforce, origins } });
    if (!done.error) setStatus('Saved.');
  };

  return (
    <div className="stack">
      <label className="check">
        <input type="checkbox" checked={enforce} onChange={(e) => (setEnforce(e.target.checked), setStatus(''))} />
        Only allow the listed origins (recommended)
      </label>
      {!enforce && <p className="note warn-text">With enforcement off, any website may use this project’s keys.</p>}
      {origins.length ? (
        <ul className="origin-list" aria-label="Allowed origins">
          {origins.map((origin) => (
            <li key={origin}>
              <code>{origin}</code>
              <button type="button" className="link" aria-label={`Remove ${origin}`} onClick={() => (setOrigins(origins.filter((o) => o !== origin)), setStatus(''))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <Empty title="No origin listed yet.">
          <p>{enforce ? 'Until you add one, the SDK refuses every site.' : 'Add the sites that show the banner.'}</p>
        </Empty>
      )}
      <form className="inline-form" onSubmit={add} aria-labelledby="add-origin-title" noValidate>
        <h2 id="add-origin-title">Add an origin</h2>
        <label>
          Origin
          <input
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            placeholder="https://shop.example"
            inputMode="url"
            aria-invalid={draftError ? true : undefined}
            aria-describedby={draftError ? 'origin-error' : undefined}
          />
        </label>
        <button type="submit">Add</button>
        {draftError && (
          <p id="origin-error" className="field-error" role="alert">
            {draftError}
          </p>
        )}
      </form>
      <div className="row">
        <button type="button" className="primary" onClick={submit} disabled={!changed || state.fetching}>
          {state.fetching ? 'Saving…' : 'Save changes'}
        </button>
        {changed && <span className="muted">Unsaved changes</span>}
        <span role="status">{status}</span>
      </div>
      <ErrorState title="The origins could not be saved" error={state.error} />
    </div>
  );
}
