// The layout's way into the inbox (console-screens): a "Notifications" link with the unread count, polled
// (the inbox is poll-based: nothing is pushed). Small and separate from the screen so the layout can import
// it without loading the screen: `<NotificationsLink />` in place of the plain link.
import { useEffect } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { UnreadNotificationsDocument } from '../../graphql/generated';
import { paths } from '../../lib/screen';
import './badge.css';

/** How often the badge asks; reading or marking on the notifications screen refreshes it at once. */
export const UNREAD_POLL_MS = 60_000;

/** The signed-in user's unread notifications (undefined until known), refreshed every minute. */
export function useUnreadCount(): number | undefined {
  const [result, refetch] = useQuery({ query: UnreadNotificationsDocument, requestPolicy: 'cache-and-network' });
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') refetch({ requestPolicy: 'network-only' });
    }, UNREAD_POLL_MS);
    return () => clearInterval(timer);
  }, [refetch]);
  return result.data?.notifications.unreadCount;
}

/** "Notifications" with a badge; the count is part of the link's name for screen readers. */
export function NotificationsLink({ className }: { className?: string }) {
  const unread = useUnreadCount();
  return (
    <Link href={paths.notifications} className={className}>
      Notifications
      {unread ? (
        <span className="unread-badge" data-testid="unread-badge">
          <span aria-hidden="true">{unread > 99 ? '99+' : unread}</span>
          <span className="visually-hidden">, {unread} unread</span>
        </span>
      ) : null}
    </Link>
  );
}
