// A project's home (console-core): the go-live checklist and the SDK snippet. Filled after the scaffold.
import { useProjectContext } from '../lib/context';
import type { ScreenProps } from '../lib/screen';

export default function ProjectHome(_props: ScreenProps) {
  const { project } = useProjectContext();
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">{project?.name}</h1>
    </section>
  );
}
