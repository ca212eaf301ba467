// Code loaded when first shown, without Suspense. React 19 holds a suspended boundary's content back until
// 300 ms after its fallback appeared (it batches reveals), so with React.lazy every page load of the console
// waited that long before the screen even asked for its data. Here the component shows <Loading /> itself
// and renders the screen as soon as its code has arrived (at once when it already has).
import { useEffect, useState, type ComponentType } from 'react';
import { ErrorState, Loading } from './states';

const CODE_MISSING = new Error('Its code did not arrive: the connection failed, or a new version of the console was deployed. Trying again reloads the page.');

export function lazyComponent<P extends object>(load: () => Promise<{ default: ComponentType<P> }>, loadingLabel?: string): ComponentType<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  const start = () =>
    (loading ??= load().then(
      (module) => (loaded = module.default),
      (error) => {
        loading = undefined; // a later attempt loads again
        throw error;
      },
    ));

  return function LazyComponent(props: P) {
    const [, setArrived] = useState(false);
    const [error, setError] = useState<unknown>(null);
    useEffect(() => {
      if (loaded) return;
      let current = true;
      start().then(
        () => current && setArrived(true),
        (e) => current && setError(e),
      );
      return () => {
        current = false;
      };
    }, []);
    if (loaded) {
      const Component = loaded;
      return <Component {...props} />;
    }
    // The browser keeps a failed module failed until the page reloads; a new deployment's page also has the new chunks.
    if (error) return <ErrorState title="This part of the console could not load" error={CODE_MISSING} retry={() => window.location.reload()} />;
    return <Loading label={loadingLabel} />;
  };
}
