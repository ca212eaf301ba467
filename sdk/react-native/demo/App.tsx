// A small shop app with the consent banner: what the package's README describes, and what the browser test of
// the React Native package clicks (test/e2e/react-native.test.ts renders it through react-native-web).
import AsyncStorage from '@react-native-async-storage/async-storage';
import { useEffect } from 'react';
import { Pressable, StyleSheet, Text, View } from 'react-native';
import { ConsentProvider, useConsent, useFirebaseConsent, useIsAllowed } from '../src';

export interface DemoOptions {
  publicKey: string;
  apiBaseUrl: string;
  locale?: string;
  /** The app draws its own banner from useConsent() instead of the package's. */
  headless?: boolean;
  /** A full disk when a decision is stored (the test of the sheet's "could not be saved"). */
  refuseDecisionWrites?: boolean;
  /** The person signed in: the token the app's backend signed (docs/subjects.md), handed to identify() once ready. */
  subjectToken?: string;
}

// AsyncStorage, refusing to store a decision when asked to.
const fullDisk = {
  getItem: (key: string) => AsyncStorage.getItem(key),
  setItem: (key: string, value: string) => (key.endsWith(':decision') ? Promise.reject(new Error('disk full')) : AsyncStorage.setItem(key, value)),
  removeItem: (key: string) => AsyncStorage.removeItem(key),
};

export function DemoApp({ publicKey, apiBaseUrl, locale, headless, refuseDecisionWrites, subjectToken }: DemoOptions) {
  return (
    <ConsentProvider
      publicKey={publicKey}
      apiBaseUrl={apiBaseUrl}
      storage={refuseDecisionWrites ? fullDisk : AsyncStorage}
      locale={locale}
      headless={headless}
      source={{ appId: 'com.acme.shop', appVersion: '1.4.0' }}
    >
      <Shop />
      {subjectToken && <SignIn token={subjectToken} />}
      {headless && <OwnBanner />}
    </ConsentProvider>
  );
}

function Shop() {
  const analytics = useIsAllowed('analytics');
  const { ready, showPreferences, pendingReceipts, error } = useConsent();
  // What the app would pass to React Native Firebase's analytics().setConsent().
  const firebase = useFirebaseConsent();
  return (
    <View style={styles.shop} accessibilityRole="none">
      <Text accessibilityRole="header" style={styles.heading}>
        Acme shop
      </Text>
      <Text style={styles.text}>Stoneware mugs, thrown and glazed in our workshop. Each one holds about 350 ml.</Text>
      <Text style={styles.text} testID="analytics-status">
        {!ready ? 'Loading…' : analytics ? 'Analytics: on' : 'Analytics: off'}
      </Text>
      <Text style={styles.text} testID="firebase-status">
        {firebase ? `Firebase: ${Object.entries(firebase).map(([signal, granted]) => `${signal}=${granted}`).join(' ')}` : 'Firebase: not yet'}
      </Text>
      <Text style={styles.text} testID="pending">
        Pending receipts: {pendingReceipts}
      </Text>
      {error && (
        <Text style={styles.text} testID="last-error">
          Last error: {error.code}
        </Text>
      )}
      <Pressable accessibilityRole="button" onPress={showPreferences} style={styles.button} testID="open-privacy-settings">
        <Text style={styles.buttonText}>Privacy settings</Text>
      </Pressable>
    </View>
  );
}

/** After the person signs in, the app hands the core their subject token (as an app's sign-in screen would). */
function SignIn({ token }: { token: string }) {
  const { core, ready } = useConsent();
  useEffect(() => {
    if (core && ready) void core.identify(token);
  }, [core, ready, token]);
  return null;
}

/** Headless mode: the app's own words and layout, the state and actions from the hook. */
function OwnBanner() {
  const { shouldShowBanner, rejectAll, acceptAll, config } = useConsent();
  if (!shouldShowBanner || !config) return null;
  return (
    <View style={styles.own} testID="own-banner">
      <Text style={styles.text}>{config.config.notice.title}</Text>
      <View style={styles.ownRow}>
        <Pressable accessibilityRole="button" onPress={() => void rejectAll()} style={styles.button}>
          <Text style={styles.buttonText}>No thanks</Text>
        </Pressable>
        <Pressable accessibilityRole="button" onPress={() => void acceptAll()} style={styles.button}>
          <Text style={styles.buttonText}>Fine</Text>
        </Pressable>
      </View>
    </View>
  );
}

const styles = StyleSheet.create({
  shop: { flex: 1, padding: 24, gap: 16, backgroundColor: '#fafaf7' },
  heading: { fontSize: 28, fontWeight: '700', color: '#1f4e79' },
  text: { fontSize: 16, lineHeight: 22, color: '#222222' },
  button: { alignSelf: 'flex-start', minHeight: 48, justifyContent: 'center', paddingHorizontal: 16, borderRadius: 8, backgroundColor: '#1f4e79' },
  buttonText: { color: '#ffffff', fontSize: 16, fontWeight: '600' },
  own: { padding: 24, gap: 12, backgroundColor: '#fff3cd' },
  ownRow: { flexDirection: 'row', gap: 12 },
});
