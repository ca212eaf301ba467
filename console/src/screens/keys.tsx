// Publishable keys of a project (console-screens): the list for everyone, create (the secret shown once,
// with a copy button) and revoke after a confirmation for Owners only, as the API allows.
import { TableBox } from '../components/table-box';
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Empty, ErrorState, QueryState } from '../components/states';
import { CreateApiKeyDocument, ProjectApiKeysDocument, RevokeApiKeyDocument, type ProjectApiKeysQuery } from '../graphql/generated';
import { useCan } from '../lib/context';
import type { ScreenProps } from '../lib/screen';
import { ConfirmDialog } from './parts/confirm';
import { formatDateTime } from './parts/format';
import { PagerControls, usePager } from './parts/pager';
import { KeyCreatedDialog } from './parts/key-created';
import { consentModeOn, integrationTypes, tcfOn } from '../lib/snippet';
import './parts/screens.css';

type ApiKey = NonNullable<ProjectApiKeysQuery['project']['apiKeys']>['edges'][number]['node'];

export default function Keys({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const isOwner = useCan('OWNER');
  const pager = usePager();
  const [result, refetch] = useQuery({ query: ProjectApiKeysDocument, variables: { projectId, after: pager.cursor } });
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [revokeState, revoke] = useMutation(RevokeApiKeyDocument);
  const [revokeError, setRevokeError] = useState<unknown>(null);

  const confirmRevoke = async () => {
    if (!revoking) return;
    const done = await revoke({ projectId, keyId: revoking.id });
    if (done.error) setRevokeError(done.error);
    else setRevoking(null);
  };

  return (
    <section aria-labelledby="screen-title" className="screen">
      <h1 id="screen-title">API keys</h1>
      <p className="lead">
        Publishable keys let your sites load the published consent configuration and record receipts. They are meant to be
        public in a page; revoke one when a site should stop using it.
      </p>
      {isOwner ? (
        <CreateKey projectId={projectId} onCreated={setCreated} />
      ) : (
        <p className="note">Only Owners create and revoke keys.</p>
      )}
      {created && (
        <KeyCreatedDialog name={created.name} secret={created.secret} googleConsentMode={consentModeOn(result.data?.project.consent)}
          integrations={integrationTypes(result.data?.project.consent)} tcf={tcfOn(result.data?.project.consent)}
          onDone={() => setCreated(null)} />
      )}
      <QueryState
        result={result}
        retry={() => refetch({ requestPolicy: 'network-only' })}
        isEmpty={(data) => !data.project.apiKeys?.edges.length && pager.page === 1}
        empty={
          <Empty title="No key yet.">
            <p>{isOwner ? 'Create one above and put it in your site’s SDK snippet.' : 'An Owner of the organization creates keys.'}</p>
          </Empty>
        }
      >
        {(data) => (
          <>
            <TableBox>
              <table>
                <caption className="visually-hidden">Publishable keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Status</th>
                    {isOwner && (
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {data.project.apiKeys?.edges.map(({ node: key }) => (
                    <tr key={key.id}>
                      <td>{key.name || <span className="muted">Unnamed</span>}</td>
                      <td>
                        <code>{key.prefix}…</code>
                      </td>
                      <td className="nowrap">{formatDateTime(key.createdAt)}</td>
                      <td className="nowrap">{key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}</td>
                      <td>
                        {key.revokedAt ? (
                          <span className="badge danger">Revoked {formatDateTime(key.revokedAt)}</span>
                        ) : (
                          <span className="badge ok">Active</span>
                        )}
                      </td>
                      {isOwner && (
                        <td>
                          {!key.revokedAt && (
                            <button
                              type="button"
                              className="danger"
                              aria-label={`Revoke ${key.name || key.prefix}`}
                              onClick={() => (setRevokeError(null), setRevoking(key))}
                            >
                              Revoke
                            </button>
                          )}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
            <PagerControls pager={pager} nextCursor={data.project.apiKeys?.pageInfo.hasNextPage ? data.project.apiKeys.pageInfo.endCursor : null} label="Keys" />
          </>
        )}
      </QueryState>
      <ConfirmDialog
        open={!!revoking}
        title={`Revoke “${revoking?.name || revoking?.prefix}”?`}
        confirmLabel="Revoke key"
        busy={revokeState.fetching}
        onConfirm={confirmRevoke}
        onCancel={() => setRevoking(null)}
      >
        <p>
          Sites using <code>{revoking?.prefix}…</code> stop loading the consent banner and recording receipts at once. This
          cannot be undone: create a new key instead.
        </p>
        <ErrorState title="The key could not be revoked" error={revokeError} />
      </ConfirmDialog>
    </section>
  );
}

function CreateKey({ projectId, onCreated }: { projectId: string; onCreated(created: { name: string; secret: string }): void }) {
  const [name, setName] = useState('');
  const [state, create] = useMutation(CreateApiKeyDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    // Unnamed: the field is left out (the API refuses a null name).
    const done = await create({ projectId, name: name.trim() || undefined });
    if (done.data) {
      onCreated({ name: done.data.createApiKey.apiKey.name || done.data.createApiKey.apiKey.prefix, secret: done.data.createApiKey.secret });
      setName('');
    }
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <label>
        Name <small>where the key is used, e.g. “Shop storefront”</small>
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={120} />
      </label>
      <button type="submit" className="primary" disabled={state.fetching}>
        {state.fetching ? 'Creating…' : 'Create key'}
      </button>
      <ErrorState title="The key could not be created" error={state.error} />
    </form>
  );
}
