// The consent editor (console-core): categories, purposes, notice, experience, live preview, publish.
import { Empty } from '../components/states';
import type { ScreenProps } from '../lib/screen';

export default function ConsentEditor(_props: ScreenProps) {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Consent</h1>
      <Empty title="The editor is being built." />
    </section>
  );
}
