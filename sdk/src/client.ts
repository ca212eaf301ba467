// One project's consent state: the published version, the visitor's decision for it, and how a new
// decision is recorded. No DOM here; ui.ts draws it and index.ts wires the two together.
import { sdkError, type Api, type Purpose, type SdkConfig } from './api';
import { SDK_VERSION, type ConsentState } from './public';
import { installationId, readDecision, writeDecision, type Decision } from './storage';

export class Consent {
  config?: SdkConfig;
  /** Only ever a decision for the current version's consentHash. */
  private decision?: Decision;
  private pending?: Promise<void>;

  constructor(private readonly api: Api) {}

  async load(): Promise<void> {
    const config = await this.api.getConfig();
    const stored = readDecision(config.projectId);
    // Re-prompting is decided by consentHash alone: a publish that only changed branding keeps the hash,
    // so the decision still applies. A stale decision is ignored, not deleted: only the visitor replaces it.
    this.decision = stored?.consentHash === config.version.consentHash ? stored : undefined;
    this.config = config;
  }

  get needsConsent(): boolean {
    return !!this.config && !this.decision;
  }

  has(purposeKey: string): boolean {
    const purpose = this.config?.config.purposes.find((p) => p.key === purposeKey);
    // Required purposes are recorded as granted; old or hand-edited storage must not say otherwise.
    return !!(purpose && this.decision && (purpose.required || this.decision.choices[purposeKey] === true));
  }

  state(): ConsentState {
    const choices: Record<string, boolean> = {};
    for (const p of this.config?.config.purposes || []) choices[p.key] = this.has(p.key);
    const version = this.config?.version;
    return {
      choices,
      consentHash: version ? version.consentHash : null,
      versionNumber: version ? version.number : null,
      needsConsent: this.needsConsent,
    };
  }

  /**
   * Posts one receipt with `grant(purpose)` for each optional purpose (required ones are always true) and,
   * once the service answered 2xx, keeps the decision in storage, or in memory when storage is blocked.
   * A failure changes nothing: the previous decision (or none) stays, and the caller reports the error.
   */
  decide(grant: (purpose: Purpose) => boolean): Promise<void> {
    // A second click while the first receipt is in flight joins it instead of posting another.
    if (this.pending) return this.pending;
    if (!this.config) return Promise.reject(sdkError('destroyed', 'this client was destroyed'));
    const { projectId, version, config } = this.config;
    const choices: Record<string, boolean> = {};
    for (const p of config.purposes) choices[p.key] = p.required || grant(p) === true;
    const body = {
      versionId: version.id,
      consentHash: version.consentHash,
      choices,
      installationId: installationId(),
      timestamp: new Date().toISOString(),
      sdkVersion: SDK_VERSION,
    };
    this.pending = this.api
      .postConsent(body)
      .then((receipt) => {
        const decision = {
          consentHash: version.consentHash,
          versionNumber: version.number,
          choices,
          decidedAt: receipt?.createdAt || body.timestamp,
        };
        writeDecision(projectId, decision);
        if (this.config) this.decision = decision;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  /** After this, the client answers as if it had never loaded. */
  close(): void {
    this.config = this.decision = undefined;
  }
}
