// Signed-in visitors (docs/subjects.md): what the feature does, in the words docs/subjects.md quotes as the
// console's help text; the subject secret's prefix and dates (everyone), its making and rotation, shown once
// (Admin); and the erasure of a subject by its hash (Admin).
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { ErrorState, QueryState } from '../components/states';
import { EraseSubjectDocument, MakeSubjectSecretDocument, ProjectSubjectSecretDocument } from '../graphql/generated';
import { useCan } from '../lib/context';
import type { ScreenProps } from '../lib/screen';
import { ConfirmDialog } from './parts/confirm';
import { formatDateTime } from './parts/format';
import { OneTimeSecret } from './parts/secret';
import './parts/screens.css';

export default function SubjectsScreen({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const canChange = useCan('ADMIN');
  const [result, refetch] = useQuery({ query: ProjectSubjectSecretDocument, variables: { projectId }, requestPolicy: 'cache-and-network' });
  const [secret, setSecret] = useState<string | null>(null);
  const current = result.data?.subjectSecret;

  return (
    <section aria-labelledby="screen-title" className="screen">
      <h1 id="screen-title">Signed-in visitors</h1>
      <p className="lead">
        Let a visitor’s consent decision follow them to every device where they are signed in to your site or app. Your backend signs a
        short-lived token naming the signed-in account with this secret, and your page passes it to <code>client.identify(token)</code>;
        call <code>client.forget()</code> on sign-out. The service keeps only a keyed hash of the account id, never the id itself. The
        secret is shown once: store it in your backend’s configuration. After a rotation the previous secret keeps working for 24 hours.
      </p>
      {secret && <OneTimeSecret label="Subject secret" secret={secret} onDone={() => setSecret(null)} />}
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {() => (
          <>
            <h2>Subject secret</h2>
            {current ? (
              <dl className="facts">
                <dt>Current secret</dt>
                <dd>
                  starts with <code>{current.secretPrefix}…</code>, made {formatDateTime(current.createdAt)}
                </dd>
                <dt>Previous secret</dt>
                <dd>{current.previousValidUntil ? `accepted until ${formatDateTime(current.previousValidUntil)}` : 'none'}</dd>
              </dl>
            ) : (
              <p>No subject secret yet: visitors’ decisions stay with each device.</p>
            )}
            {canChange ? (
              <MakeSecret projectId={projectId} rotating={!!current} onSecret={setSecret} />
            ) : (
              <p className="note">Admins and Owners make and rotate the subject secret.</p>
            )}
            {canChange && <Erase projectId={projectId} />}
          </>
        )}
      </QueryState>
    </section>
  );
}

function MakeSecret({ projectId, rotating, onSecret }: { projectId: string; rotating: boolean; onSecret(secret: string): void }) {
  const [open, setOpen] = useState(false);
  const [state, make] = useMutation(MakeSubjectSecretDocument);
  const run = async () => {
    const done = await make({ projectId });
    if (done.data) {
      setOpen(false);
      onSecret(done.data.rotateSubjectSecret.secret);
    }
  };
  if (!rotating) {
    return (
      <>
        <button type="button" className="primary" onClick={run} disabled={state.fetching}>
          {state.fetching ? 'Making…' : 'Make subject secret'}
        </button>
        <ErrorState title="The secret could not be made" error={state.error} />
      </>
    );
  }
  return (
    <>
      <button type="button" className="danger" onClick={() => setOpen(true)}>
        Rotate subject secret
      </button>
      <ConfirmDialog open={open} title="Rotate the subject secret?" confirmLabel="Rotate secret" busy={state.fetching} onConfirm={run} onCancel={() => setOpen(false)}>
        <p>Tokens signed with the current secret are accepted for 24 more hours. Move your backend to the new secret within that time.</p>
        <ErrorState title="The secret could not be rotated" error={state.error} />
      </ConfirmDialog>
    </>
  );
}

function Erase({ projectId }: { projectId: string }) {
  const [hash, setHash] = useState('');
  const [state, erase] = useMutation(EraseSubjectDocument);
  const [status, setStatus] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setStatus('');
    const done = await erase({ projectId, subjectHash: hash.trim() });
    if (done.data) {
      const n = done.data.deleteSubject.unlinkedInstallations;
      setStatus(`Erased: ${n} installation${n === 1 ? '' : 's'} unlinked. The receipts stay, as evidence.`);
      setHash('');
    }
  };
  return (
    <form className="stack narrow" onSubmit={submit} aria-labelledby="erase-title" noValidate>
      <h2 id="erase-title">Erase a signed-in visitor</h2>
      <p>
        For an erasure request: enter the subject hash shown on one of the person’s receipts. Every device signed in as them is unlinked;
        their receipts keep the hash, so the ledger still verifies.
      </p>
      <label>
        Subject hash
        <input value={hash} onChange={(e) => setHash(e.target.value)} spellCheck={false} required />
      </label>
      <div className="row">
        <button type="submit" className="danger" disabled={state.fetching || !hash.trim()}>
          {state.fetching ? 'Erasing…' : 'Erase'}
        </button>
        <span role="status">{status}</span>
      </div>
      <ErrorState title="The visitor could not be erased" error={state.error} />
    </form>
  );
}
