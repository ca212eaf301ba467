// What the banner and the preferences sheet share: the buttons, the privacy-policy link and the texts' style.
import { useRef } from 'react';
import { Linking, Pressable, StyleSheet, Text, type TextStyle } from 'react-native';
import type { Palette } from './theme';

/**
 * `equal`: Accept all and Reject all, filled with the operator's colour, the same size and weight, so that
 * rejecting is as easy as accepting. `primary`: the sheet's Save. `quiet`: everything else (Manage, the
 * sheet's Accept all and Reject all, which are peers of each other under Save).
 */
export type ButtonKind = 'equal' | 'primary' | 'quiet';

export function ActionButton(props: { label: string; kind: ButtonKind; palette: Palette; onPress(): void; testID?: string }) {
  const { label, kind, palette: p, onPress, testID } = props;
  const filled = kind !== 'quiet';
  return (
    <Pressable
      accessibilityRole="button"
      accessibilityLabel={label}
      onPress={onPress}
      testID={testID}
      style={({ pressed }) => [
        styles.button,
        { borderRadius: p.radius, borderColor: filled ? p.primary : p.border, backgroundColor: filled ? p.primary : p.surface, opacity: pressed ? 0.8 : 1 },
      ]}
    >
      <Text style={[styles.buttonText, { color: filled ? p.onPrimary : p.text }]}>{label}</Text>
    </Pressable>
  );
}

/** The project's privacy policy, opened in the system browser; left out when the project has no http(s) address. */
export function PolicyLink(props: { url: string; label: string; palette: Palette; rtl: boolean }) {
  const { url, label, palette: p, rtl } = props;
  if (!url) return null;
  return (
    <Pressable accessibilityRole="link" accessibilityLabel={label} accessibilityHint={url} onPress={() => void Linking.openURL(url)} style={styles.link} testID="consent-privacy-policy">
      <Text style={[styles.linkText, align(rtl), { color: p.scheme === 'dark' ? p.text : p.primary }]}>{label}</Text>
    </Pressable>
  );
}

/**
 * Runs a decision once at a time: a second tap while the first is being stored records nothing twice. The core
 * reports every failure to onError (useConsent().error) and stores what it can; a decision it could not take at
 * all leaves the banner or sheet open.
 */
export function useDecide(done?: () => void): (action: () => Promise<void>) => void {
  const busy = useRef(false);
  return (action) => {
    if (busy.current) return;
    busy.current = true;
    action()
      .then(() => done?.(), () => {})
      .finally(() => (busy.current = false));
  };
}

/** Text in the config's direction: right-to-left languages read from the right edge (iOS also needs writingDirection). */
export function align(rtl: boolean): TextStyle {
  return rtl ? { textAlign: 'right', writingDirection: 'rtl' } : { textAlign: 'left', writingDirection: 'ltr' };
}

const styles = StyleSheet.create({
  // 48 points high at least: the touch target Android's guidelines ask for (iOS asks for 44).
  button: { flexGrow: 1, flexBasis: 0, minHeight: 48, paddingHorizontal: 16, paddingVertical: 12, borderWidth: 1, alignItems: 'center', justifyContent: 'center' },
  buttonText: { fontSize: 16, fontWeight: '600', textAlign: 'center' },
  // A 44-point touch target that does not look like a gap of its own under the text above it.
  link: { alignSelf: 'stretch', minHeight: 44, marginTop: -8, justifyContent: 'center' },
  linkText: { fontSize: 15, textDecorationLine: 'underline' },
});
