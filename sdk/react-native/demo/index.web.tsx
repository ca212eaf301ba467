// The demo app on the web, through react-native-web (the test's bundle maps `react-native` to it). The page
// that loads this bundle says what to start with in `window.demoOptions`.
import { AppRegistry } from 'react-native';
import { DemoApp, type DemoOptions } from './App';

const options = (globalThis as unknown as { demoOptions: DemoOptions }).demoOptions;
AppRegistry.registerComponent('Demo', () => () => <DemoApp {...options} />);
AppRegistry.runApplication('Demo', { rootTag: (globalThis as unknown as { document: { getElementById(id: string): unknown } }).document.getElementById('root') });
