// The project webhook (console-screens): its address and switch (Admin), a test send with its result
// (Admin), the signing secret's rotation (Owner only) and the delivery attempts with their status and next
// retry (everyone). Secrets appear once, when the API returns them.
import { TableBox } from '../components/table-box';
import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Empty, ErrorState, QueryState } from '../components/states';
import {
  ProjectWebhookDocument,
  RotateWebhookSecretDocument,
  SaveWebhookDocument,
  SendTestWebhookDocument,
  type ProjectWebhookQuery,
  type SendTestWebhookMutation,
} from '../graphql/generated';
import { useCan } from '../lib/context';
import type { ScreenProps } from '../lib/screen';
import { ConfirmDialog } from './parts/confirm';
import { formatDateTime } from './parts/format';
import { PagerControls, usePager } from './parts/pager';
import { OneTimeSecret } from './parts/secret';
import './parts/screens.css';

type Webhook = NonNullable<ProjectWebhookQuery['project']['webhook']>;

export default function WebhookScreen({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const canConfigure = useCan('ADMIN');
  const isOwner = useCan('OWNER');
  const pager = usePager();
  const [result, refetch] = useQuery({
    query: ProjectWebhookDocument,
    variables: { projectId, after: pager.cursor },
    requestPolicy: 'cache-and-network',
  });
  const [secret, setSecret] = useState<string | null>(null);
  const webhook = result.data?.project.webhook;

  return (
    <section aria-labelledby="screen-title" className="screen">
      <h1 id="screen-title">Webhook</h1>
      <p className="lead">
        After each receipt is stored the service POSTs a <code>consent.updated</code> event to this address, signed with{' '}
        <code>X-Consent-Signature</code> (HMAC-SHA256 of the body with the signing secret), and retries failures for 24 hours.
      </p>
      {secret && <OneTimeSecret label="Signing secret" secret={secret} onDone={() => setSecret(null)} />}
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {() => (
          <>
            {canConfigure ? (
              <WebhookForm projectId={projectId} saved={webhook ?? null} onSecret={setSecret} />
            ) : webhook ? (
              <WebhookSummary webhook={webhook} />
            ) : (
              <Empty title="No webhook configured.">
                <p>An Admin or Owner sets the address that receives consent events.</p>
              </Empty>
            )}
            {webhook && (
              <>
                <h2>Signing secret</h2>
                <p>
                  Current secret starts with <code>{webhook.secretPrefix}…</code>
                </p>
                {isOwner ? <RotateSecret projectId={projectId} onSecret={setSecret} /> : <p className="note">Only Owners rotate the signing secret.</p>}
                {canConfigure && <TestSend projectId={projectId} />}
                <Deliveries webhook={webhook} pager={pager} />
              </>
            )}
          </>
        )}
      </QueryState>
    </section>
  );
}

function WebhookSummary({ webhook }: { webhook: Webhook }) {
  return (
    <dl className="facts">
      <dt>Address</dt>
      <dd>
        <code>{webhook.url}</code>
      </dd>
      <dt>Deliveries</dt>
      <dd>{webhook.enabled ? <span className="badge ok">Enabled</span> : <span className="badge warn">Paused</span>}</dd>
      <dt>Last changed</dt>
      <dd>{formatDateTime(webhook.updatedAt)}</dd>
    </dl>
  );
}

function WebhookForm({ projectId, saved, onSecret }: { projectId: string; saved: Webhook | null; onSecret(secret: string): void }) {
  const [url, setUrl] = useState(saved?.url ?? '');
  const [enabled, setEnabled] = useState(saved?.enabled ?? true);
  const [state, save] = useMutation(SaveWebhookDocument);
  const [status, setStatus] = useState('');
  const savedKey = `${saved?.url}|${saved?.enabled}`;
  useEffect(() => {
    setUrl(saved?.url ?? '');
    setEnabled(saved?.enabled ?? true);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- by value
  }, [savedKey]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setStatus('');
    const done = await save({ projectId, input: { url: url.trim(), enabled } });
    if (done.data) {
      setStatus(saved ? 'Saved.' : 'Webhook created.');
      if (done.data.putWebhook.secret) onSecret(done.data.putWebhook.secret);
    }
  };
  return (
    <form className="stack narrow" onSubmit={submit} aria-labelledby="webhook-form-title" noValidate>
      <h2 id="webhook-form-title">{saved ? 'Endpoint' : 'Set up the webhook'}</h2>
      {!saved && <p>No webhook is configured yet. Enter the HTTPS address of your receiver.</p>}
      <label>
        Endpoint URL
        <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/hooks/consent" required />
      </label>
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        Send events (untick to pause deliveries)
      </label>
      <div className="row">
        <button type="submit" className="primary" disabled={state.fetching || !url.trim()}>
          {state.fetching ? 'Saving…' : saved ? 'Save' : 'Create webhook'}
        </button>
        <span role="status">{status}</span>
      </div>
      <ErrorState title="The webhook could not be saved" error={state.error} />
    </form>
  );
}

function TestSend({ projectId }: { projectId: string }) {
  const [state, send] = useMutation(SendTestWebhookDocument);
  const [delivery, setDelivery] = useState<SendTestWebhookMutation['testWebhook']['delivery'] | null>(null);
  const run = async () => {
    setDelivery(null);
    const done = await send({ projectId });
    if (done.data) setDelivery(done.data.testWebhook.delivery);
  };
  return (
    <div>
      <h2>Test</h2>
      <p>Sends a <code>webhook.test</code> event now and shows what your endpoint answered.</p>
      <div className="row">
        <button type="button" onClick={run} disabled={state.fetching}>
          {state.fetching ? 'Sending…' : 'Send test event'}
        </button>
      </div>
      <div role="status">
        {delivery &&
          (delivery.status === 'succeeded' ? (
            <p className="result ok">
              Delivered: your endpoint answered HTTP {delivery.responseStatus} in {delivery.durationMs} ms.
            </p>
          ) : (
            <p className="result failed">
              Not delivered
              {delivery.responseStatus ? `: your endpoint answered HTTP ${delivery.responseStatus}` : ''}
              {delivery.error ? ` (${delivery.error})` : ''} after {delivery.durationMs} ms.
            </p>
          ))}
      </div>
      <ErrorState title="The test could not be sent" error={state.error} />
    </div>
  );
}

function RotateSecret({ projectId, onSecret }: { projectId: string; onSecret(secret: string): void }) {
  const [open, setOpen] = useState(false);
  const [state, rotate] = useMutation(RotateWebhookSecretDocument);
  const confirm = async () => {
    const done = await rotate({ projectId });
    if (done.data?.rotateWebhookSecret.secret) {
      setOpen(false);
      onSecret(done.data.rotateWebhookSecret.secret);
    }
  };
  return (
    <>
      <button type="button" className="danger" onClick={() => setOpen(true)}>
        Rotate signing secret
      </button>
      <ConfirmDialog open={open} title="Rotate the signing secret?" confirmLabel="Rotate secret" busy={state.fetching} onConfirm={confirm} onCancel={() => setOpen(false)}>
        <p>The next delivery is signed with a new secret. Your receiver must switch to it, or it will reject the events.</p>
        <ErrorState title="The secret could not be rotated" error={state.error} />
      </ConfirmDialog>
    </>
  );
}

function Deliveries({ webhook, pager }: { webhook: Webhook; pager: ReturnType<typeof usePager> }) {
  const deliveries = webhook.deliveries;
  return (
    <>
      <h2>Deliveries</h2>
      {!deliveries?.edges.length && pager.page === 1 ? (
        <Empty title="No delivery yet.">
          <p>Events are sent after receipts are recorded, and when you send a test.</p>
        </Empty>
      ) : (
        <>
          <TableBox>
            <table>
              <caption className="visually-hidden">Webhook deliveries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Attempt</th>
                  <th scope="col">Status</th>
                  <th scope="col">Response</th>
                  <th scope="col">Next retry</th>
                </tr>
              </thead>
              <tbody>
                {deliveries?.edges.map(({ node: d }) => (
                  <tr key={d.id}>
                    <td className="nowrap">{formatDateTime(d.createdAt)}</td>
                    <td>
                      <code>{d.eventType}</code>
                    </td>
                    <td>{d.attempt}</td>
                    <td>{d.status === 'succeeded' ? <span className="badge ok">Succeeded</span> : <span className="badge danger">Failed</span>}</td>
                    <td>
                      {d.responseStatus ? `HTTP ${d.responseStatus}` : 'No response'}, {d.durationMs} ms
                      {d.error && <small>{d.error}</small>}
                    </td>
                    <td>{d.nextRetryAt ? formatDateTime(d.nextRetryAt) : d.status === 'failed' ? (d.eventId ? 'None: retries ended' : 'None (a test)') : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
          <PagerControls pager={pager} nextCursor={deliveries?.pageInfo.hasNextPage ? deliveries.pageInfo.endCursor : null} label="Deliveries" />
        </>
      )}
    </>
  );
}
