// Allowed origins of a project (console-screens): which sites may use its publishable keys. Admins add and remove
// origins and flip the enforcement switch, each saved at once (issue 28: no second "Save" to forget); Viewers read them.
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

/**
 * Each change is saved as it is made (adding, removing, the switch): nothing waits behind a second button, so
 * nothing is lost by leaving the screen. The list shown is the saved one.
 */
function OriginsEditor({ projectId, saved }: { projectId: string; saved: { enforce: boolean; origins: string[] } }) {
  const [draft, setDraft] = useState('');
  const [draftError, setDraftError] = useState('');
  const [state, save] = useMutation(UpdateAllowedOriginsDocument);
  const [status, setStatus] = useState('');
  // The switch moves at once and goes back if the save is refused.
  const [enforce, setEnforce] = useState(saved.enforce);
  useEffect(() => setEnforce(saved.enforce), [saved.enforce]);

  const change = async (input: { enforce?: boolean; origins?: string[] }, done: string) => {
    setStatus('');
    const result = await save({ projectId, input: { enforce: saved.enforce, origins: saved.origins, ...input } });
    if (!result.error) setStatus(done);
    return !result.error;
  };
  const add = async (event: FormEvent) => {
    event.preventDefault();
    const origin = normaliseOrigin(draft);
    if (!ORIGIN.test(origin)) return setDraftError('Enter an origin such as https://shop.example (scheme, host and an optional port; no path).');
    if (saved.origins.includes(origin)) return setDraftError(`${origin} is already in the list.`);
    setDraftError('');
    if (await change({ origins: [...saved.origins, origin] }, `Saved: ${origin} is allowed.`)) setDraft('');
  };

  return (
    <div className="stack">
      <label className="check">
        <input
          type="checkbox"
          checked={enforce}
          disabled={state.fetching}
          onChange={async (e) => {
            const on = e.target.checked;
            setEnforce(on);
            if (!(await change({ enforce: on }, on ? 'Saved: only the listed origins are allowed.' : 'Saved: enforcement is off.'))) setEnforce(saved.enforce);
          }}
        />
        Only allow the listed origins (recommended)
      </label>
      {!saved.enforce && <p className="note warn-text">With enforcement off, any website may use this project’s keys.</p>}
      {saved.origins.length ? (
        <ul className="origin-list" aria-label="Allowed origins">
          {saved.origins.map((origin) => (
            <li key={origin}>
              <code>{origin}</code>
              <button
                type="button"
                className="link"
                aria-label={`Remove ${origin}`}
                disabled={state.fetching}
                onClick={() => change({ origins: saved.origins.filter((o) => o !== origin) }, `Saved: ${origin} removed.`)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <Empty title="No origin listed yet.">
          <p>{saved.enforce ? 'Until you add one, the SDK refuses every site.' : 'Add the sites that show the banner.'}</p>
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
            aria-describedby={draftError ? 'origin-error' : 'origin-hint'}
          />
        </label>
        <button type="submit" className="primary" disabled={state.fetching}>
          {state.fetching ? 'Saving…' : 'Add and save'}
        </button>
        <small id="origin-hint" className="form-hint">
          Saved at once: the SDK accepts the origin from the next page view.
        </small>
        {draftError && (
          <p id="origin-error" className="field-error" role="alert">
            {draftError}
          </p>
        )}
      </form>
      <p role="status" className="ok-text">
        {status}
      </p>
      <ErrorState title="The origins could not be saved" error={state.error} />
    </div>
  );
}
