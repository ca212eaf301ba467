// Members of an organization (console-screens): Admins and Owners read the list (it holds colleagues'
// e-mail addresses); Owners add registered users, change roles and remove members. The API keeps at least
// one Owner and says so in words, which the screen shows as they are.
import { TableBox } from '../components/table-box';
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Empty, ErrorState, QueryState } from '../components/states';
import {
  AddMemberDocument,
  CancelInvitationDocument,
  ChangeMemberRoleDocument,
  MembersDocument,
  RemoveMemberDocument,
  type MembersQuery,
} from '../graphql/generated';
import { useCan, useProjectContext, type Role } from '../lib/context';
import type { ScreenProps } from '../lib/screen';
import { ConfirmDialog } from './parts/confirm';
import { formatDateTime } from './parts/format';
import './parts/screens.css';

type Member = NonNullable<MembersQuery['organization']['members']>[number];
type Invitation = NonNullable<MembersQuery['organization']['invitations']>[number];

export const ROLES: { value: Role; label: string; says: string }[] = [
  { value: 'OWNER', label: 'Owner', says: 'everything, plus billing, keys, webhook secret and members' },
  { value: 'ADMIN', label: 'Admin', says: 'reads and changes projects and consent' },
  { value: 'VIEWER', label: 'Viewer', says: 'reads only' },
];
const roleLabel = (role: string) => ROLES.find((r) => r.value === role)?.label ?? role;

export default function Members({ params }: ScreenProps) {
  const orgId = params.orgId;
  const isOwner = useCan('OWNER');
  const { user } = useProjectContext();
  const [result, refetch] = useQuery({ query: MembersDocument, variables: { organizationId: orgId } });
  const [removing, setRemoving] = useState<Member | null>(null);
  const [removeState, remove] = useMutation(RemoveMemberDocument);
  const confirmRemove = async () => {
    if (!removing) return;
    const done = await remove({ organizationId: orgId, userId: removing.userId });
    if (!done.error) setRemoving(null);
  };

  return (
    <section aria-labelledby="screen-title" className="screen">
      <h1 id="screen-title">Members</h1>
      <p className="lead">
        {ROLES.map((r) => (
          <span key={r.value} className="role-says">
            <strong>{r.label}</strong>: {r.says}.{' '}
          </span>
        ))}
      </p>
      {isOwner ? <AddMember orgId={orgId} /> : <p className="note">Only Owners add, change and remove members.</p>}
      <QueryState
        result={result}
        retry={() => refetch({ requestPolicy: 'network-only' })}
        isEmpty={(data) => !data.organization.members?.length}
        empty={<Empty title="No member." />}
      >
        {(data) => (
          <TableBox>
            <table>
              <caption className="visually-hidden">Members</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">E-mail</th>
                  <th scope="col">Role</th>
                  <th scope="col">Member since</th>
                  {isOwner && (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody>
                {data.organization.members?.map((m) => (
                  <tr key={m.id}>
                    <td>
                      {m.name}
                      {m.userId === user.id && <small>you</small>}
                    </td>
                    <td>{m.email}</td>
                    <td>{isOwner ? <RoleChanger orgId={orgId} member={m} /> : roleLabel(m.role)}</td>
                    <td className="nowrap">{formatDateTime(m.createdAt)}</td>
                    {isOwner && (
                      <td>
                        <button type="button" className="danger" aria-label={`Remove ${m.name || m.email}`} onClick={() => setRemoving(m)}>
                          Remove
                        </button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
      </QueryState>
      {result.data?.organization.invitations?.length ? (
        <PendingInvitations orgId={orgId} invitations={result.data.organization.invitations} canCancel={isOwner} />
      ) : null}
      <ConfirmDialog
        open={!!removing}
        title={`Remove ${removing?.name || removing?.email}?`}
        confirmLabel="Remove member"
        busy={removeState.fetching}
        onConfirm={confirmRemove}
        onCancel={() => setRemoving(null)}
      >
        <p>
          {removing?.userId === user.id
            ? 'You will lose access to this organization and its projects at once.'
            : `${removing?.email} loses access to this organization and its projects at once.`}
        </p>
        <ErrorState title="The member could not be removed" error={removeState.error} />
      </ConfirmDialog>
    </section>
  );
}

function RoleChanger({ orgId, member }: { orgId: string; member: Member }) {
  const [role, setRole] = useState(member.role);
  const [state, change] = useMutation(ChangeMemberRoleDocument);
  const [status, setStatus] = useState('');
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setStatus('');
    const done = await change({ organizationId: orgId, userId: member.userId, role });
    if (done.error) setRole(member.role);
    else setStatus('Saved.');
  };
  return (
    <form className="role-form" onSubmit={save}>
      <div className="row">
        <label>
          <span className="visually-hidden">Role of {member.name || member.email}</span>
          <select value={role} onChange={(e) => (setRole(e.target.value), setStatus(''))}>
            {ROLES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        {role !== member.role && (
          <button type="submit" disabled={state.fetching}>
            Save<span className="visually-hidden"> role of {member.name || member.email}</span>
          </button>
        )}
        <span role="status">{status}</span>
      </div>
      <ErrorState title="The role could not be changed" error={state.error} />
    </form>
  );
}

function AddMember({ orgId }: { orgId: string }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('VIEWER');
  const [state, add] = useMutation(AddMemberDocument);
  const [status, setStatus] = useState('');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setStatus('');
    const done = await add({ organizationId: orgId, email: email.trim(), role });
    if (done.data) {
      const { invitation } = done.data.addMember;
      setStatus(`${invitation.email} is invited as ${roleLabel(invitation.role)}: they become a member when they accept.`);
      setEmail('');
    }
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-labelledby="add-member-title">
      <h2 id="add-member-title">Invite a member</h2>
      <label>
        E-mail <small>of someone who has signed up</small>
        <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required autoComplete="off" />
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r.value} value={r.value}>
              {r.label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="primary" disabled={state.fetching || !email.trim()}>
        {state.fetching ? 'Inviting…' : 'Invite'}
      </button>
      <span role="status">{status}</span>
      <ErrorState title="The invitation could not be sent" error={state.error} />
    </form>
  );
}

/** Invitations not yet answered: the invitee is not a member until they accept; an Owner may withdraw one. */
function PendingInvitations({ orgId, invitations, canCancel }: { orgId: string; invitations: Invitation[]; canCancel: boolean }) {
  const [state, cancel] = useMutation(CancelInvitationDocument);
  return (
    <section aria-labelledby="pending-invitations-title">
      <h2 id="pending-invitations-title">Pending invitations</h2>
      <TableBox>
        <table>
          <caption className="visually-hidden">Pending invitations</caption>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Invited by</th>
              <th scope="col">Sent</th>
              {canCancel && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {invitations.map((i) => (
              <tr key={i.id}>
                <td>{i.email}</td>
                <td>{roleLabel(i.role)}</td>
                <td>{i.invitedByEmail}</td>
                <td className="nowrap">{formatDateTime(i.createdAt)}</td>
                {canCancel && (
                  <td>
                    <button type="button" aria-label={`Withdraw the invitation of ${i.email}`} disabled={state.fetching} onClick={() => cancel({ organizationId: orgId, id: i.id })}>
                      Withdraw
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      <ErrorState title="The invitation could not be withdrawn" error={state.error} />
    </section>
  );
}
