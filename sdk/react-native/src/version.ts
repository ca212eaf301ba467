/** Sent as the receipt's `source.sdkVersion`. Keep in step with sdk/react-native/package.json (test/react-native-package.test.ts checks it). */
export const REACT_NATIVE_VERSION = '0.1.0';
