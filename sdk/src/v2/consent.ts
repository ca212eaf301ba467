// One project's consent state: the published version, the visitor's decision for it (stale after a new
// consentHash or after reconsentAfterDays), GPC, and how a new decision is recorded. No DOM here.
import { sdkError } from '../api';
import { readDecision, writeDecision, type Decision } from '../storage';
import type { Api, Purpose, SdkConfig } from './api';
import { SDK_VERSION, type ConsentState } from './public';

/**
 * How optional purposes behave before a decision. Only opt-in exists today; jurisdictions (extensions.md
 * section 6) will pick the mode per visitor, and every place that depends on it asks `initial()`.
 */
export type Mode = 'opt-in' | 'opt-out' | 'notice' | 'none';

const DAY = 86_400_000;
const prefsMarker = (projectId: string) => 'consent:prefs:' + projectId;

export class Consent {
  config?: SdkConfig;
  mode: Mode = 'opt-in';
  /** `gpc`: the decision was made while the browser sent GPC (so its grants of opt-out purposes are explicit). */
  private decision?: Decision & { gpc?: boolean };
  private pending?: Promise<void>;

  constructor(
    private readonly api: Api,
    /** The browser sent Global Privacy Control. */
    readonly gpc: boolean,
    private readonly installation: () => string,
  ) {}

  async load(locale: string): Promise<void> {
    const config = await this.api.getConfig(locale);
    const { projectId, version, experience } = config;
    let stored = readDecision(projectId);
    // Set by preferencesUrl(): the visitor went to the hosted page, so a decision may have been made there.
    // Only then is the service asked (never on every page load); a failure keeps the local decision.
    if (read(prefsMarker(projectId))) {
      try {
        const remote = await this.api.getDecision(this.installation());
        remove(prefsMarker(projectId));
        if (remote?.consentHash === version.consentHash && !(stored && stored.consentHash === remote.consentHash && stored.decidedAt >= remote.createdAt)) {
          stored = { consentHash: remote.consentHash, versionNumber: version.number, choices: remote.choices, decidedAt: remote.createdAt };
          writeDecision(projectId, stored);
        }
      } catch {
        // The next init tries again.
      }
    }
    const days = experience.reconsentAfterDays;
    const expired = days > 0 && !!stored && Date.now() - Date.parse(stored.decidedAt) > days * DAY;
    // A stale decision is ignored, not deleted: only the visitor replaces it.
    this.decision = stored?.consentHash === version.consentHash && !expired ? stored : undefined;
    this.config = config;
  }

  get needsConsent(): boolean {
    return !!this.config && !this.decision && this.mode != 'none';
  }

  get decided(): boolean {
    return !!this.decision;
  }

  /** GPC's opt-out purposes are denied before anything else is considered. */
  gpcDenies(key: string): boolean {
    return this.gpc && this.config!.experience.gpc.optOutPurposes.includes(key);
  }

  /** What an optional purpose is before the visitor decides, by mode. */
  initial(p: Purpose): boolean {
    return this.mode == 'opt-out' && !this.gpcDenies(p.key);
  }

  has(purposeKey: string): boolean {
    const p = this.config?.config.purposes.find((q) => q.key === purposeKey);
    if (!p) return false;
    if (!this.decision) return this.mode != 'opt-in' && (p.required || this.initial(p));
    // Required purposes are recorded as granted; old or hand-edited storage must not say otherwise.
    if (p.required) return true;
    // GPC turned on after the decision: it overrides that decision's grants of the opt-out purposes.
    return this.decision.choices[purposeKey] === true && !(this.gpcDenies(purposeKey) && !this.decision.gpc);
  }

  state(): ConsentState {
    const choices: Record<string, boolean> = {};
    for (const p of this.config?.config.purposes || []) choices[p.key] = this.has(p.key);
    const c = this.config;
    return {
      choices,
      consentHash: c ? c.version.consentHash : null,
      versionNumber: c ? c.version.number : null,
      needsConsent: this.needsConsent,
      locale: c ? c.locale : null,
      gpc: this.gpc,
    };
  }

  /** Remembers that the hosted preferences page was opened for this project (see load). */
  markPreferences(): void {
    if (this.config) write(prefsMarker(this.config.projectId), '1');
  }

  /**
   * Posts one receipt with `grant(purpose)` for each optional purpose (required ones are always true) and,
   * once the service answered 2xx, keeps the decision. A failure changes nothing and rejects.
   */
  decide(grant: (purpose: Purpose) => boolean): Promise<void> {
    if (this.pending) return this.pending;
    if (!this.config) return Promise.reject(sdkError('destroyed', 'this client was destroyed'));
    const { projectId, version, config, locale } = this.config;
    const choices: Record<string, boolean> = {};
    for (const p of config.purposes) choices[p.key] = p.required || grant(p) === true;
    const body = {
      versionId: version.id,
      consentHash: version.consentHash,
      choices,
      installationId: this.installation(),
      timestamp: new Date().toISOString(),
      sdkVersion: SDK_VERSION,
      locale,
      gpc: this.gpc,
    };
    this.pending = this.api
      .postConsent(body)
      .then((receipt) => {
        const decision = { consentHash: version.consentHash, versionNumber: version.number, choices, decidedAt: receipt?.createdAt || body.timestamp, gpc: this.gpc };
        writeDecision(projectId, decision);
        if (this.config) this.decision = decision;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  close(): void {
    this.config = this.decision = undefined;
  }
}

// localStorage may be blocked: see ../storage.ts.
export function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}
export function write(key: string, value: string | null): void {
  try {
    value == null ? localStorage.removeItem(key) : localStorage.setItem(key, value);
  } catch {
    // memory only
  }
}
const remove = (key: string) => write(key, null);
