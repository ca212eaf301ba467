// The default banner: the notice over the bottom of the app while a decision is needed, with Reject all and
// Accept all side by side in the same style and size, and a way into the preferences sheet.
import { useEffect } from 'react';
import { AccessibilityInfo, StyleSheet, Text, useColorScheme, View } from 'react-native';
import { useConsent } from './hooks';
import { ActionButton, align, PolicyLink, useDecide } from './parts';
import { texts } from './texts';
import { palette } from './theme';

export interface ConsentBannerProps {
  /** Space to keep clear below the banner (react-native-safe-area-context's insets.bottom). */
  bottomInset?: number;
}

/** Shown by the provider while a decision is needed; an app in headless mode may place it itself. */
export function ConsentBanner({ bottomInset = 0 }: ConsentBannerProps) {
  const consent = useConsent();
  const device = useColorScheme();
  const config = consent.config;
  const t = config && texts(config);
  const decide = useDecide();
  // A banner that appears is not read out by itself: screen readers are told, as the browser SDK's live region does.
  useEffect(() => {
    if (t) AccessibilityInfo.announceForAccessibility(`${t.title}. ${t.description}`);
  }, [t?.title, t?.description]); // eslint-disable-line react-hooks/exhaustive-deps
  if (!config || !t) return null;
  const p = palette(config, device);
  return (
    <View
      accessibilityRole="summary"
      accessibilityLabelledBy="consent-banner-title"
      testID="consent-banner"
      style={[styles.banner, { direction: t.rtl ? 'rtl' : 'ltr', backgroundColor: p.surface, borderColor: p.border, borderTopLeftRadius: p.radius, borderTopRightRadius: p.radius, paddingBottom: 16 + bottomInset }]}
    >
      {!!t.companyName && <Text style={[styles.company, align(t.rtl), { color: p.muted }]}>{t.companyName}</Text>}
      <Text accessibilityRole="header" aria-level={2} nativeID="consent-banner-title" style={[styles.title, align(t.rtl), { color: p.text }]}>
        {t.title}
      </Text>
      <Text style={[styles.description, align(t.rtl), { color: p.text }]}>{t.description}</Text>
      {/* Signed in (identify()), the person is told the choice follows them (extensions.md section 14). */}
      {consent.signedIn && !!t.signedInScope && (
        <Text testID="consent-signed-in-scope" style={[styles.description, align(t.rtl), { color: p.text }]}>
          {t.signedInScope}
        </Text>
      )}
      <PolicyLink url={t.privacyPolicyUrl} label={t.privacyPolicy} palette={p} rtl={t.rtl} />
      {/* Reading order is the order on screen: Reject all first (at the start edge), then Accept all, then Manage. */}
      {consent.mode === 'opt-in' ? (
        <View style={styles.row}>
          <ActionButton kind="equal" label={t.rejectAll} palette={p} onPress={() => decide(consent.rejectAll)} testID="consent-reject-all" />
          <ActionButton kind="equal" label={t.acceptAll} palette={p} onPress={() => decide(consent.acceptAll)} testID="consent-accept-all" />
        </View>
      ) : (
        // Opt-out: the "Do Not Sell or Share" control and the dismiss button as its equal, one above the other (the
        // control's long label would wrap to four lines beside it); notice: only the dismiss.
        <>
          {consent.mode === 'opt-out' && (
            <View style={styles.row}>
              <ActionButton kind="equal" label={t.doNotSell} palette={p} onPress={() => decide(() => consent.optOut())} testID="consent-do-not-sell" />
            </View>
          )}
          <View style={styles.row}>
            <ActionButton kind="equal" label={t.noticeOk} palette={p} onPress={() => decide(consent.dismiss)} testID="consent-ok" />
          </View>
        </>
      )}
      {consent.mode !== 'notice' && (
        <View style={styles.row}>
          <ActionButton kind="quiet" label={t.manage} palette={p} onPress={consent.showPreferences} testID="consent-manage" />
        </View>
      )}
    </View>
  );
}

const styles = StyleSheet.create({
  // Drawn over the app (zIndex; elevation on Android), anchored to the bottom edge of the screen.
  banner: { position: 'absolute', left: 0, right: 0, bottom: 0, zIndex: 1000, elevation: 12, borderWidth: StyleSheet.hairlineWidth, paddingHorizontal: 20, paddingTop: 20, gap: 12, shadowColor: '#000', shadowOpacity: 0.2, shadowRadius: 12, shadowOffset: { width: 0, height: -2 } },
  company: { fontSize: 13, fontWeight: '600' },
  title: { fontSize: 19, fontWeight: '700' },
  description: { fontSize: 15, lineHeight: 21 },
  row: { flexDirection: 'row', gap: 12 },
});
