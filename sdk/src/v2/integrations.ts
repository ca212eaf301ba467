// integrations.js (global `ConsentIntegrations`): the vendors' consent APIs (extensions.md section 12,
// docs/integrations.md), loaded by more.js only where the configuration lists integrations. Defaults where
// stub.js did not write them, then an update after every decision and at init for a returning visitor.
import type { SdkConfig } from './api';
import { integrationDefaults, STORED_TYPES, UPDATES, type States } from './integrations-vendors';

/** Always granted, as Consent Mode's security_storage (src/consent/integrations.ts says why). */
const ALWAYS = ['functional'];

export function apply(config: SdkConfig, settled: boolean, has: (purposeKey: string) => boolean): void {
  const integrations = config.experience.integrations || [];
  const types = integrations.map((integration) => integration.type);
  try {
    // The next page's stub.js writes these defaults even without the script tag's attribute.
    localStorage.setItem(STORED_TYPES, types.join(' '));
  } catch {
    // the attribute alone then
  }
  integrationDefaults(types);
  if (!settled) return;
  for (const { type, signals } of integrations) {
    const states: States = {};
    // A signal is granted when every purpose listed for it is; none listed: denied.
    for (const [signal, keys] of Object.entries(signals)) states[signal] = ALWAYS.includes(signal) || (keys.length > 0 && keys.every(has));
    UPDATES[type]?.(states, config.mode);
  }
}
