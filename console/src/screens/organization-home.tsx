// An organization's home (console-core): its projects, and creating one (Admin or above).
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { Link, useLocation } from 'wouter';
import { Empty, ErrorState } from '../components/states';
import { CreateProjectDocument } from '../graphql/generated';
import { useCan, useProjectContext } from '../lib/context';
import { paths, type ScreenProps } from '../lib/screen';

export default function OrganizationHome({ params }: ScreenProps) {
  const { organization, role } = useProjectContext();
  const canCreate = useCan('ADMIN');
  const [, navigate] = useLocation();
  const [result, create] = useMutation(CreateProjectDocument);
  const [name, setName] = useState('');
  if (!organization) return null;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const answer = await create({ organizationId: params.orgId, input: { name } });
    const project = answer.data?.createProject.project;
    if (project) navigate(paths.project(params.orgId, project.id));
  };
  return (
    <section aria-labelledby="screen-title">
      <div className="title-row">
        <h1 id="screen-title">{organization.name}</h1>
        <span className="badge" title="Your role in this organization">
          {role.charAt(0) + role.slice(1).toLowerCase()}
        </span>
      </div>
      <h2>Projects</h2>
      {organization.projects.length === 0 ? (
        <Empty title="No projects yet.">
          <p>{canCreate ? 'A project is one website or app asking its visitors for consent. Create the first one below.' : 'An Admin or Owner of this organization can create one.'}</p>
        </Empty>
      ) : (
        <ul className="cards" aria-label="Projects">
          {organization.projects.map((project) => (
            <li key={project.id} className="card">
              <Link href={paths.project(organization.id, project.id)}>{project.name}</Link>
              <small>{project.slug}</small>
            </li>
          ))}
        </ul>
      )}
      {canCreate && (
        <form onSubmit={submit} className="inline-form" aria-labelledby="new-project">
          <h2 id="new-project">New project</h2>
          <label>
            Project name
            <input name="name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} />
          </label>
          <button type="submit" className="primary" disabled={result.fetching}>
            {result.fetching ? 'Creating…' : 'Create project'}
          </button>
          <ErrorState title="Creating the project failed" error={result.error} />
        </form>
      )}
    </section>
  );
}
