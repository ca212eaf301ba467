// The signed-in user's inbox (console-screens): newest first, unread or all, by product; each item links
// to the screen it is about, and can be marked read (one, or all at once). Any role may read its own inbox.
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link } from 'wouter';
import { Empty, ErrorState, QueryState } from '../components/states';
import {
  AcceptInvitationDocument,
  DeclineInvitationDocument,
  MyInvitationsDocument,
  MarkAllNotificationsReadDocument,
  MarkNotificationReadDocument,
  NotificationsDocument,
  type NotificationsQuery,
} from '../graphql/generated';
import { paths, type ScreenProps } from '../lib/screen';
import { formatDateTime } from './parts/format';
import { PagerControls, usePager } from './parts/pager';
import './parts/screens.css';

type Notification = NotificationsQuery['notifications']['notifications'][number];

const PRODUCTS = [
  { value: '', label: 'All products' },
  { value: 'consent', label: 'Consent' },
  { value: 'billing', label: 'Billing' },
];

/** The console screen a notification is about (its `link` is an API-side path; the ids say where). */
export function consoleLink(n: Pick<Notification, 'link' | 'type' | 'organizationId' | 'projectId'>): string | null {
  const org = n.organizationId;
  if (!org) return null;
  // Not a member yet: the invitation is answered here, above the inbox.
  if (n.type === 'organization.invitation') return paths.notifications;
  if (n.type.startsWith('billing.')) return paths.orgScreen(org, 'billing');
  if (!n.projectId) return paths.organization(org);
  const screen =
    n.type === 'consent.version_published' ? 'versions'
    : n.type.startsWith('consent.key_') ? 'keys'
    : n.type === 'consent.first_receipt' ? 'receipts'
    : n.type === 'consent.webhook_failing' ? 'webhook'
    : n.type === 'consent.scan_found_new' ? 'scans'
    : null;
  return screen ? paths.projectScreen(org, n.projectId, screen) : paths.project(org, n.projectId);
}

export default function Notifications(_props: ScreenProps) {
  const [unreadOnly, setUnreadOnly] = useState(false);
  const [product, setProduct] = useState('');
  const pager = usePager();
  const [result, refetch] = useQuery({
    query: NotificationsDocument,
    variables: { cursor: pager.cursor, unread: unreadOnly || undefined, product: product || undefined },
    requestPolicy: 'cache-and-network',
  });
  const [markAllState, markAll] = useMutation(MarkAllNotificationsReadDocument);
  const unread = result.data?.notifications.unreadCount ?? 0;

  return (
    <section aria-labelledby="screen-title" className="screen">
      <div className="title-row">
        <h1 id="screen-title">Notifications</h1>
        {unread > 0 && <span className="badge">{unread} unread</span>}
      </div>
      <Invitations />
      <div className="filters" role="group" aria-label="Filter notifications">
        <label>
          Show
          <select value={unreadOnly ? 'unread' : 'all'} onChange={(e) => (setUnreadOnly(e.target.value === 'unread'), pager.reset())}>
            <option value="all">All</option>
            <option value="unread">Unread only</option>
          </select>
        </label>
        <label>
          Product
          <select value={product} onChange={(e) => (setProduct(e.target.value), pager.reset())}>
            {PRODUCTS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <div className="row">
          <button type="button" onClick={() => markAll({})} disabled={!unread || markAllState.fetching}>
            {markAllState.fetching ? 'Marking…' : 'Mark all as read'}
          </button>
        </div>
      </div>
      <ErrorState title="Could not mark them read" error={markAllState.error} />
      <QueryState
        result={result}
        retry={() => refetch({ requestPolicy: 'network-only' })}
        isEmpty={(data) => !data.notifications.notifications.length && pager.page === 1}
        empty={
          <Empty title={unreadOnly ? 'Nothing unread.' : 'No notification yet.'}>
            <p>Publishing a version, creating a key, a first receipt and billing changes show up here.</p>
          </Empty>
        }
      >
        {(data) => (
          <>
            <ul className="inbox">
              {data.notifications.notifications.map((n) => (
                <NotificationItem key={n.id} notification={n} />
              ))}
            </ul>
            <PagerControls pager={pager} nextCursor={data.notifications.nextCursor} label="Notifications" />
          </>
        )}
      </QueryState>
    </section>
  );
}

function NotificationItem({ notification: n }: { notification: Notification }) {
  const [state, markRead] = useMutation(MarkNotificationReadDocument);
  const href = consoleLink(n);
  return (
    <li className={n.readAt ? 'read' : 'unread'}>
      <div className="inbox-head">
        {!n.readAt && <span className="badge">New</span>}
        <span className="badge muted-badge">{n.product}</span>
        <time dateTime={n.createdAt}>{formatDateTime(n.createdAt)}</time>
      </div>
      <p className="inbox-title">{href ? <Link href={href}>{n.title}</Link> : n.title}</p>
      <p>{n.body}</p>
      {!n.readAt && (
        <button type="button" className="link" onClick={() => markRead({ id: n.id })} disabled={state.fetching}>
          Mark as read<span className="visually-hidden">: {n.title}</span>
        </button>
      )}
      <ErrorState title="Could not mark it read" error={state.error} />
    </li>
  );
}

/**
 * Invitations waiting for the signed-in user's answer: an Owner's addMember makes nobody a member until they
 * accept here (docs/console.md); declining deletes it. Shown only when there is one.
 */
function Invitations() {
  const [result] = useQuery({ query: MyInvitationsDocument, requestPolicy: 'cache-and-network' });
  const [acceptState, accept] = useMutation(AcceptInvitationDocument);
  const [declineState, decline] = useMutation(DeclineInvitationDocument);
  const [status, setStatus] = useState('');
  const invitations = result.data?.invitations ?? [];
  if (!invitations.length && !status) return null;
  const busy = acceptState.fetching || declineState.fetching;
  return (
    <section aria-labelledby="invitations-title" className="invitations">
      <h2 id="invitations-title">Invitations</h2>
      <ul>
        {invitations.map((i) => (
          <li key={i.id}>
            <p>
              <strong>{i.invitedByName}</strong> ({i.invitedByEmail}) invites you to <strong>{i.organizationName}</strong> as {i.role}.{' '}
              <small>{formatDateTime(i.createdAt)}</small>
            </p>
            <div className="row">
              <button
                type="button"
                className="primary"
                disabled={busy}
                aria-label={`Accept the invitation to ${i.organizationName}`}
                onClick={async () => {
                  const done = await accept({ id: i.id });
                  if (!done.error) setStatus(`You are now a member of ${i.organizationName}.`);
                }}
              >
                Accept
              </button>
              <button
                type="button"
                disabled={busy}
                aria-label={`Decline the invitation to ${i.organizationName}`}
                onClick={async () => {
                  const done = await decline({ id: i.id });
                  if (!done.error) setStatus(`Invitation to ${i.organizationName} declined.`);
                }}
              >
                Decline
              </button>
            </div>
          </li>
        ))}
      </ul>
      <span role="status">{status}</span>
      <ErrorState title="The invitation could not be answered" error={acceptState.error ?? declineState.error} />
    </section>
  );
}
