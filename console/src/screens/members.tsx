// Placeholder from the scaffold (console-core): console-screens owns and fills this screen.
import { Empty } from '../components/states';
import type { ScreenProps } from '../lib/screen';

export default function Screen(_props: ScreenProps) {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Members</h1>
      <Empty title="This screen is being built." />
    </section>
  );
}
