// gpp.js: the IAB Global Privacy Platform for opt-out jurisdictions, a separate file (dist/v2/gpp.js, global
// `ConsentGpp`) that the core loads only there (gpp-stub.ts), so the core keeps its size budget. Encoding and
// the `__gpp` CMP API (ping, addEventListener, removeEventListener, hasSection, getSection, getField) are the
// IAB Tech Lab's own library, @iabgpp/cmpapi (Apache-2.0); this file only says what goes into the string.
import { CmpApi, CmpDisplayStatus, CmpStatus, GppModel, Sections, SignalStatus, TcfEuV2, UsNat } from '@iabgpp/cmpapi';
import type { GppSettings, SdkConfig } from './api';
import { locatorProxy } from './locator';

/**
 * What goes into the string: the config answer (its jurisdiction code, `US-CA`, and the operator's MSPA
 * settings, experience.gpp), whether the visitor opted out (Consent.optedOut: some opt-out purpose denied)
 * and whether the browser sends GPC.
 */
type Input = [config: Pick<SdkConfig, 'jurisdiction' | 'experience'>, optedOut: boolean, gpc: boolean];

export interface GppApi {
  /** The GPP string for this state (nothing published). */
  encode(...input: Input): string;
  /** Publishes the state through `__gpp` (the first call takes the stub's queue over) and returns its string. */
  publish(shown: boolean, ...input: Input): string;
  /** On IAB TCF pages (tcf.ts): publishes the TC string as the `tcfeuv2` section and returns the GPP string. */
  publishTcf(tcString: string, shown: boolean): string;
}

// The CMP API wants a CMP id registered with the IAB; the service has none (TCF is out of scope), so 0.
const CMP_ID = 0;
const CMP_VERSION = 2;

/**
 * The US sections to encode, the one in force first. `national` (the default): usnat, with the state's own section
 * riding along where the IAB defines one (`US-CA` → usca). `state` (experience.gpp.sections): the state's own
 * section alone where there is one, usnat elsewhere. Which states have a section is the IAB library's list.
 */
function sectionsFor(code: string | undefined, sections: GppSettings['sections']): [name: string, id: number][] {
  const state = code && /^US-[A-Z]{2}$/.test(code) ? 'us' + code.slice(3).toLowerCase() : '';
  const own = [...Sections.SECTION_ID_NAME_MAP].find(([, name]) => name == state);
  const usnat: [string, number] = [UsNat.NAME, UsNat.ID];
  if (!own) return [usnat];
  return sections == 'state' ? [[own[1], own[0]]] : [usnat, [own[1], own[0]]];
}

/**
 * The fields, by name, of every US section (each section has its own subset; the rest keep the library's
 * default, 0 = not applicable, e.g. sensitive data and known-child consents, which the SDK does not collect).
 * 1 = yes (notice given, opted out), 2 = no. The banner is the notice of sale, sharing and targeted
 * advertising with its opt-out control, so those notices are 1. MSPA modes are 0 unless the transaction is
 * covered; then the operator's mode is 1 and the other 2 (mspaMode "none" on a covered transaction: both 2).
 */
function fields(mspa: SdkConfig['experience']['gpp'], optedOut: boolean, gpc: boolean): Record<string, number | boolean> {
  const out = optedOut ? 1 : 2;
  // Absent in an answer from a service before GPP: not covered.
  const covered = mspa?.mspaCoveredTransaction;
  return {
    SharingNotice: 1,
    SaleOptOutNotice: 1,
    SharingOptOutNotice: 1,
    TargetedAdvertisingOptOutNotice: 1,
    SaleOptOut: out,
    SharingOptOut: out,
    TargetedAdvertisingOptOut: out,
    MspaCoveredTransaction: covered ? 1 : 2,
    MspaOptOutOptionMode: covered ? (mspa!.mspaMode == 'opt-out-option' ? 1 : 2) : 0,
    MspaServiceProviderMode: covered ? (mspa!.mspaMode == 'service-provider' ? 1 : 2) : 0,
    Gpc: gpc,
  };
}

export function encode(...[config, optedOut, gpc]: Input): string {
  const m = new GppModel();
  const values = fields(config.experience.gpp, optedOut, gpc);
  for (const [section] of sectionsFor(config.jurisdiction?.code, config.experience.gpp?.sections)) {
    // Creates the section; then only the fields it has.
    m.setFieldValue(section, 'MspaCoveredTransaction', values.MspaCoveredTransaction);
    for (const [name, value] of Object.entries(values)) if (m.hasField(section, name)) m.setFieldValue(section, name, value);
  }
  return m.encode();
}

let api: CmpApi | undefined;

/** The first publication takes the stub over (its queue is replayed by the caller, once the string is set). */
function start(): unknown[][] {
  const w = window as unknown as { __gpp?: (...args: unknown[]) => unknown };
  let queued: unknown[][] = [];
  if (!api) {
    // The library replays the stub's queue as it starts, before it has a string; so the queue is taken here
    // and replayed below, once the string and statuses are set. The stub's listeners ("events", answered by
    // our stub and by the IAB's) the library adopts itself, under the listenerIds the stub gave them.
    const stub = w.__gpp;
    try {
      queued = [...((stub?.() as unknown[][]) || [])];
    } catch {
      // not a stub
    }
    w.__gpp = (command?: unknown) => (command == 'events' && stub?.('events')) || [];
    api = new CmpApi(CMP_ID, CMP_VERSION);
    // Frames (ads in iframes of other origins) find this window by the `__gppLocator` frame (the library has no
    // such part): the proxy the TCF stub uses too.
    locatorProxy('__gpp');
  }
  return queued;
}

/**
 * Sets the string and the statuses, with events only for what changed: a new string is bracketed by
 * `signalStatus` "not ready" and "ready", with `sectionChange` for each of `sections` whose encoding changed.
 */
function announce(string: string, sections: [name: string, id: number][], applicable: number[], shown: boolean, queued: unknown[][]): string {
  const display = shown ? CmpDisplayStatus.VISIBLE : CmpDisplayStatus.HIDDEN;
  // Before the first string the status is already "not ready" (the stub said so): nothing to announce.
  const changing = api!.getGppString() != string;
  if (changing && api!.getSignalStatus() == SignalStatus.READY) api!.setSignalStatus(SignalStatus.NOT_READY);
  const before = sections.map(([name]) => api!.hasSection(name) && api!.getSectionString(name));
  api!.setGppString(string);
  api!.setSupportedAPIs(sections.map(([name, id]) => `${id}:${name}`));
  api!.setApplicableSections(applicable);
  if (api!.getCmpDisplayStatus() != display) api!.setCmpDisplayStatus(display);
  if (api!.getCmpStatus() != CmpStatus.LOADED) api!.setCmpStatus(CmpStatus.LOADED);
  sections.forEach(([name], i) => before[i] != api!.getSectionString(name) && api!.fireSectionChange(name));
  if (api!.getSignalStatus() != SignalStatus.READY) api!.setSignalStatus(SignalStatus.READY);
  const w = window as unknown as { __gpp: (...args: unknown[]) => unknown };
  for (const args of queued) w.__gpp(...args);
  return string;
}

/**
 * Publishes through the IAB library. Events go out only for what changed, so a listener hears each change once:
 * a new string is bracketed by `signalStatus` "not ready" and "ready" (GPP CMP API: not ready while the CMP
 * updates its data), with `sectionChange` for each section whose encoding changed in between; the display
 * status when it changes; `cmpStatus` "loaded" once.
 */
export function publish(shown: boolean, ...input: Input): string {
  // The first section is the one in force (usnat in the national approach; the state's own with `state`).
  const sections = sectionsFor(input[0].jurisdiction?.code, input[0].experience.gpp?.sections);
  return announce(encode(...input), sections, [sections[0]![1]], shown, start());
}

/** The IAB TCF EU v2 section (id 2): the TC string itself, the same decision as `__tcfapi` answers. */
export function publishTcf(tcString: string, shown: boolean): string {
  const queued = start();
  const m = new GppModel();
  m.decodeSection(TcfEuV2.NAME, tcString);
  return announce(m.encode(), [[TcfEuV2.NAME, TcfEuV2.ID]], [TcfEuV2.ID], shown, queued);
}
