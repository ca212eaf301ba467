// The demo app on the web, through react-native-web (the test's bundle maps `react-native` to it). The page
// that loads this bundle says what to start with in `window.demoOptions`.
import { AppRegistry, type RootTag } from 'react-native';
import { DemoApp, type DemoOptions } from './App';

const options = (globalThis as unknown as { demoOptions: DemoOptions }).demoOptions;
AppRegistry.registerComponent('Demo', () => () => <DemoApp {...options} />);
// react-native-web takes the root element where React Native takes a native view's tag.
const root = (globalThis as unknown as { document: { getElementById(id: string): unknown } }).document.getElementById('root');
AppRegistry.runApplication('Demo', { rootTag: root as RootTag, initialProps: {} });
