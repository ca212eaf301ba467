// The default preferences sheet: a modal over the app with one switch per purpose, grouped by category, starting
// from the person's current decision. Save records what the switches say; Reject all and Accept all stay equal
// peers. A Modal is its own window on iOS and Android, so screen-reader focus stays inside while it is open
// (accessibilityViewIsModal says so to VoiceOver); react-native-web traps keyboard focus in it and gives focus
// back to what opened it when it closes.
import { useEffect, useState } from 'react';
import { Modal, Pressable, ScrollView, StyleSheet, Switch, Text, useColorScheme, View } from 'react-native';
import type { Purpose } from '@consent/core';
import { useConsent } from './hooks';
import { ActionButton, align, PolicyLink, useDecide } from './parts';
import { groups, texts } from './texts';
import { palette } from './theme';

/** Rendered by the provider (visible when useConsent().showPreferences() was called); in headless mode, place it yourself if you want it. */
export function ConsentPreferences() {
  const consent = useConsent();
  const device = useColorScheme();
  const { config, preferencesVisible, hidePreferences } = consent;
  // The switches start from what isAllowed answers each time the sheet opens, and change only here until saved.
  const [draft, setDraft] = useState<Record<string, boolean>>({});
  const decide = useDecide(hidePreferences);
  useEffect(() => {
    if (!preferencesVisible || !config) return;
    setDraft(Object.fromEntries(config.config.purposes.map((p) => [p.key, p.required || consent.isAllowed(p.key)])));
  }, [preferencesVisible, config]); // eslint-disable-line react-hooks/exhaustive-deps
  if (!config) return null;
  const t = texts(config);
  const p = palette(config, device);

  const row = (purpose: Purpose) => {
    const on = purpose.required || draft[purpose.key] === true;
    return (
      <View key={purpose.key} style={[styles.purpose, { borderColor: p.border }]}>
        <View style={styles.purposeText}>
          <Text style={[styles.purposeName, align(t.rtl), { color: p.text }]}>{purpose.name}</Text>
          {purpose.required && <Text style={[styles.alwaysOn, align(t.rtl), { color: p.muted }]}>{t.alwaysOn}</Text>}
          {!!purpose.description && <Text style={[styles.purposeDescription, align(t.rtl), { color: p.muted }]}>{purpose.description}</Text>}
        </View>
        {/* React Native's Switch has the switch role already; its label is the purpose's name. It keeps its own
            left-to-right drawing (react-native-web places the thumb by margins that a right-to-left parent breaks). */}
        <View style={LEFT_TO_RIGHT}>
          <Switch
            accessibilityLabel={purpose.name}
            accessibilityState={{ checked: on, disabled: purpose.required }}
            value={on}
            disabled={purpose.required}
            onValueChange={(value) => setDraft((d) => ({ ...d, [purpose.key]: value }))}
            trackColor={{ false: p.border, true: p.primary }}
            thumbColor={p.surface}
            ios_backgroundColor={p.border}
            testID={`consent-purpose-${purpose.key}`}
          />
        </View>
      </View>
    );
  };

  return (
    <Modal visible={preferencesVisible} transparent animationType="slide" onRequestClose={hidePreferences} accessibilityLabel={t.dialogTitle}>
      <View style={[styles.backdrop, { backgroundColor: p.backdrop }]}>
        <View
          accessibilityViewIsModal
          testID="consent-preferences"
          style={[styles.sheet, { direction: t.rtl ? 'rtl' : 'ltr', backgroundColor: p.surface, borderTopLeftRadius: p.radius, borderTopRightRadius: p.radius }]}
        >
          <View style={styles.head}>
            <Text accessibilityRole="header" aria-level={2} style={[styles.title, align(t.rtl), { color: p.text }]}>
              {t.dialogTitle}
            </Text>
            <Pressable accessibilityRole="button" accessibilityLabel={t.close} onPress={hidePreferences} style={styles.close} testID="consent-close">
              <Text style={[styles.closeText, { color: p.text }]}>×</Text>
            </Pressable>
          </View>
          <ScrollView style={styles.body} contentContainerStyle={styles.bodyContent}>
            <Text style={[styles.description, align(t.rtl), { color: p.text }]}>{t.description}</Text>
            {consent.signedIn && !!t.signedInScope && (
              <Text testID="consent-signed-in-scope" style={[styles.description, align(t.rtl), { color: p.text }]}>
                {t.signedInScope}
              </Text>
            )}
            <PolicyLink url={t.privacyPolicyUrl} label={t.privacyPolicy} palette={p} rtl={t.rtl} />
            {groups(config).map((group) => (
              <View key={group.name || '-'} style={styles.group}>
                {!!group.name && (
                  <Text accessibilityRole="header" aria-level={3} style={[styles.groupName, align(t.rtl), { color: p.text }]}>
                    {group.name}
                  </Text>
                )}
                {group.purposes.map(row)}
              </View>
            ))}
          </ScrollView>
          <View style={styles.actions}>
            <View style={styles.row}>
              <ActionButton kind="quiet" label={t.rejectAll} palette={p} onPress={() => decide(consent.rejectAll)} testID="consent-sheet-reject-all" />
              <ActionButton kind="quiet" label={t.acceptAll} palette={p} onPress={() => decide(consent.acceptAll)} testID="consent-sheet-accept-all" />
            </View>
            <View style={styles.row}>
              <ActionButton kind="primary" label={t.saveChoices} palette={p} onPress={() => decide(() => consent.save(draft))} testID="consent-save" />
            </View>
          </View>
        </View>
      </View>
    </Modal>
  );
}

// Layout direction (Yoga's `direction`; react-native-web passes it to CSS) is given inline, as in the banner:
// react-native-web's StyleSheet.create does not list it and reports it as invalid.
const LEFT_TO_RIGHT = { direction: 'ltr' } as const;

const styles = StyleSheet.create({
  backdrop: { flex: 1, justifyContent: 'flex-end' },
  sheet: { maxHeight: '92%', paddingTop: 8, paddingBottom: 20, shadowColor: '#000', shadowOpacity: 0.25, shadowRadius: 16, elevation: 16 },
  head: { flexDirection: 'row', alignItems: 'center', paddingHorizontal: 20, gap: 8 },
  title: { flex: 1, fontSize: 19, fontWeight: '700' },
  close: { width: 48, height: 48, marginHorizontal: -12, alignItems: 'center', justifyContent: 'center' },
  closeText: { fontSize: 28, lineHeight: 30 },
  body: { flexGrow: 0, flexShrink: 1 },
  bodyContent: { paddingHorizontal: 20, paddingBottom: 12, gap: 12 },
  description: { fontSize: 15, lineHeight: 21 },
  group: { gap: 4 },
  groupName: { fontSize: 13, fontWeight: '700', textTransform: 'uppercase', letterSpacing: 0.5, marginTop: 8 },
  purpose: { flexDirection: 'row', alignItems: 'center', gap: 12, paddingVertical: 10, borderTopWidth: StyleSheet.hairlineWidth },
  purposeText: { flex: 1, gap: 2 },
  purposeName: { fontSize: 16, fontWeight: '600' },
  alwaysOn: { fontSize: 13, fontStyle: 'italic' },
  purposeDescription: { fontSize: 14, lineHeight: 19 },
  actions: { paddingHorizontal: 20, paddingTop: 12, gap: 12 },
  row: { flexDirection: 'row', gap: 12 },
});
