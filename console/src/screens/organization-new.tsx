// Creating an organization (console-core): the signed-in user becomes its Owner.
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { useLocation } from 'wouter';
import { ErrorState } from '../components/states';
import { CreateOrganizationDocument } from '../graphql/generated';
import { useProjectContext } from '../lib/context';
import { paths, type ScreenProps } from '../lib/screen';

export default function NewOrganization(_props: ScreenProps) {
  const { organizations } = useProjectContext();
  const [, navigate] = useLocation();
  const [result, create] = useMutation(CreateOrganizationDocument);
  const [name, setName] = useState('');
  const [planId, setPlanId] = useState('free');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const answer = await create({ input: { name, planId } });
    const organization = answer.data?.createOrganization.organization;
    if (organization) navigate(paths.organization(organization.id));
  };
  return (
    <section aria-labelledby="screen-title" className="narrow">
      <h1 id="screen-title">New organization</h1>
      <p>{organizations.length ? 'An organization holds projects and the people who work on them.' : 'Start with your organization: it holds your projects and the people who work on them.'} You will be its Owner.</p>
      <form onSubmit={submit} className="stack">
        <label>
          Organization name
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} autoFocus />
        </label>
        <label>
          Plan
          <select value={planId} onChange={(e) => setPlanId(e.target.value)} aria-describedby="plan-hint">
            <option value="free">Free</option>
            <option value="starter">Starter (start a trial)</option>
            <option value="growth">Growth (start a trial)</option>
          </select>
          <small id="plan-hint">You can change the plan later under Billing.</small>
        </label>
        <ErrorState title="Creating the organization failed" error={result.error} />
        <button type="submit" className="primary" disabled={result.fetching}>
          {result.fetching ? 'Creating…' : 'Create organization'}
        </button>
      </form>
    </section>
  );
}
