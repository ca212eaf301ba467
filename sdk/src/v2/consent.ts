// One project's consent state: the published version, the mode of the visitor's jurisdiction, the visitor's
// decision for it (stale after a new consentHash, after reconsentAfterDays, or when made under another mode:
// see applies), GPC, and how a new decision is recorded. No DOM here.
import { sdkError } from '../api';
import { readDecision, writeDecision, type Decision } from '../storage';
import type { Action, Api, Mode, Purpose, SdkConfig } from './api';
import { SDK_VERSION, type ConsentState } from './public';

/**
 * A stored decision. `gpc`: made while the browser sent GPC (so its grants of opt-out purposes are explicit);
 * `mode`: the mode it was made under (absent: before jurisdictions, so opt-in); `action`: what the visitor did.
 */
export type Stored = Decision & { gpc?: boolean; mode?: Mode; action?: Action };

const DAY = 86_400_000;
/** Set by preferencesUrl(): a decision may have been made on the hosted page (integrations.js asks /decision). */
export const prefsMarker = (projectId: string) => 'consent:prefs:' + projectId;
/** "<mode> <consentHash>" once the visitor dismissed the opt-out or notice banner without deciding. */
const noticeMarker = (projectId: string) => 'consent:notice:' + projectId;

/**
 * Whether a decision made under `made` still stands under `now`. Opt-out and notice grant optional purposes
 * by default, so any recorded decision is at least as strict and stands. Opt-in needs a decision whose grants
 * were asked for under opt-in: one made where purposes started granted (a move from California to Germany)
 * is set aside and the banner asks. `none` likewise applies only its own decisions. Set aside is not deleted.
 */
export const applies = (made: Mode = 'opt-in', now: Mode) => made == now || now == 'opt-out' || now == 'notice';

/**
 * What hasConsent (and the core's isAllowed) answers for a purpose under a mode and the decision in force. Before a
 * decision, by mode: opt-in grants nothing; none only what is required; opt-out and notice all but what GPC denies.
 */
export function allowed(p: Purpose | undefined, m: Mode, decision: Stored | undefined, gpcDenies: (p: Purpose) => boolean): boolean {
  if (!p) return false;
  if (!decision) return m != 'opt-in' && (p.required || ((m == 'opt-out' || m == 'notice') && !gpcDenies(p)));
  // Required purposes are recorded as granted; old or hand-edited storage must not say otherwise.
  if (p.required) return true;
  // GPC turned on after the decision: it overrides that decision's grants of the opt-out purposes.
  return decision.choices[p.key] === true && !(gpcDenies(p) && !decision.gpc);
}

/** What "Do Not Sell or Share" denies (Consent.optOut). */
export const optOutOf = (c: SdkConfig, p: Purpose) => (c.experience.gpc.optOutPurposes.length ? c.experience.gpc.optOutPurposes.includes(p.key) : !p.required);
/** Some opt-out purpose is denied in `choices` (Consent.optedOut; the core's GPP string too). */
export const optedOut = (c: SdkConfig, choices: Record<string, boolean>) => c.config.purposes.some((p) => optOutOf(c, p) && !choices[p.key]);

/** The banner shows (ConsentState.needsConsent). A decision the SDK recorded for GPC alone is no answer. */
export const needsBanner = (m: Mode, decision: Stored | undefined, dismissed: boolean): boolean =>
  m != 'none' && (m == 'opt-in' ? !decision : !dismissed && (!decision || decision.action == 'gpc'));

export class Consent {
  config?: SdkConfig;
  private decision?: Stored;
  private dismissed = false;
  private pending?: Promise<void>;
  /** Set in opt-out jurisdictions (index.ts): the GPP string for a set of choices, never rejects. */
  gppFor?: (choices: Record<string, boolean>) => Promise<string | undefined>;
  /** Runs between the configuration's arrival and the first read of the stored state (index.ts). */
  ready?: (config: SdkConfig) => Promise<void>;

  constructor(
    /** The service's SDK API (tcf.ts reads the vendor list through it and adds its strings to receipts). */
    readonly api: Api,
    /** The browser sent Global Privacy Control. */
    readonly gpc: boolean,
    /** The installation id receipts are filed under, for the given project. */
    readonly installation: (projectId: string) => string,
  ) {}

  get mode(): Mode {
    return this.config?.mode || 'opt-in';
  }

  async load(locale: string): Promise<void> {
    const config = await this.api.getConfig(locale);
    // integrations.js, where needed, brings state made elsewhere in before it is read: the decision made on the
    // hosted preferences page or another site (/decision), the cookie shared across subdomains (index.ts).
    await this.ready?.(config);
    const { projectId, version, experience, mode } = config;
    const stored: Stored | null = readDecision(projectId);
    const days = experience.reconsentAfterDays;
    const expired = days > 0 && !!stored && Date.now() - Date.parse(stored.decidedAt) > days * DAY;
    // A stale decision is ignored, not deleted: only the visitor replaces it.
    this.decision = stored?.consentHash === version.consentHash && !expired && applies(stored.mode, mode) ? stored : undefined;
    this.dismissed = read(noticeMarker(projectId)) == mode + ' ' + version.consentHash;
    this.config = config;
  }

  /** The banner shows (see ConsentState.needsConsent). A decision the SDK recorded for GPC alone is no answer. */
  get needsConsent(): boolean {
    return !!this.config && needsBanner(this.mode, this.decision, this.dismissed);
  }

  /** The page follows the state (Consent Mode update, cookies of denied purposes removed): always but opt-in undecided. */
  get settled(): boolean {
    return !!this.decision || this.mode != 'opt-in';
  }

  /**
   * What "Do Not Sell or Share" denies, and GPC in opt-out mode: the experience's gpc.optOutPurposes, or every
   * optional purpose when that list is empty.
   */
  optOut(p: Purpose): boolean {
    return optOutOf(this.config!, p);
  }

  /** GPC's opt-out purposes are denied before anything else is considered. */
  gpcDenies(p: Purpose): boolean {
    return this.gpc && (this.mode == 'opt-out' ? this.optOut(p) : this.config!.experience.gpc.optOutPurposes.includes(p.key));
  }

  has(purposeKey: string): boolean {
    return allowed(this.config?.config.purposes.find((q) => q.key === purposeKey), this.mode, this.decision, (p) => this.gpcDenies(p));
  }

  /** Some opt-out purpose is denied in `choices`: what GPP calls opted out of sale, sharing and targeted ads. */
  optedOut(choices: Record<string, boolean>): boolean {
    return optedOut(this.config!, choices);
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
      mode: this.mode,
      jurisdiction: c?.jurisdiction?.code || null,
    };
  }

  /** Remembers that the hosted preferences page was opened for this project (see load). */
  markPreferences(): void {
    if (this.config) write(prefsMarker(this.config.projectId), '1');
  }

  /** The visitor dismissed the opt-out or notice banner: it stays away for this mode and consentHash. */
  dismiss(): void {
    const c = this.config;
    if (c) write(noticeMarker(c.projectId), c.mode + ' ' + c.version.consentHash);
    this.dismissed = true;
  }

  /**
   * In opt-out mode, GPC is an opt-out request: recorded (action "gpc") when no decision was made under GPC
   * yet, that is without a decision or with one from before the browser sent it. The state does not change
   * (has() already denies); the receipt is the evidence, with its GPP string.
   */
  recordGpc(): Promise<void> | undefined {
    if (this.mode == 'opt-out' && this.gpc && !this.decision?.gpc) return this.decide((p) => this.has(p.key), 'gpc');
  }

  /**
   * Posts one receipt with `grant(purpose)` for each optional purpose (required ones are always true) and,
   * once the service answered 2xx, keeps the decision. A failure changes nothing and rejects.
   */
  decide(grant: (purpose: Purpose) => boolean, action: Action): Promise<void> {
    if (this.pending) return this.pending;
    if (!this.config) return Promise.reject(sdkError('destroyed', 'this client was destroyed'));
    const { projectId, version, config, locale, jurisdiction, mode } = this.config;
    const choices: Record<string, boolean> = {};
    for (const p of config.purposes) choices[p.key] = p.required || grant(p) === true;
    const send = async () => {
      const body = {
        versionId: version.id,
        consentHash: version.consentHash,
        choices,
        installationId: this.installation(projectId),
        timestamp: new Date().toISOString(),
        sdkVersion: SDK_VERSION,
        locale,
        gpc: this.gpc,
        jurisdiction: jurisdiction?.code,
        action,
        gpp: await this.gppFor?.(choices),
        source: { sdk: 'browser' as const, sdkVersion: SDK_VERSION, platform: 'web' as const },
      };
      const receipt = await this.api.postConsent(body);
      const decision = { consentHash: version.consentHash, versionNumber: version.number, choices, decidedAt: receipt?.createdAt || body.timestamp, gpc: this.gpc, mode, action };
      writeDecision(projectId, decision);
      if (this.config) this.decision = decision;
    };
    this.pending = send().finally(() => {
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
