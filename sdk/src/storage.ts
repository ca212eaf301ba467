// localStorage may be missing, blocked (merely reading `window.localStorage` throws SecurityError) or full
// (setItem throws QuotaExceededError). Every access goes through here, so none of that reaches the host
// page: a failed read is "nothing stored", a failed write returns false and the caller keeps the value in
// memory for the page's life.

export interface Decision {
  consentHash: string;
  versionNumber: number;
  choices: Record<string, boolean>;
  decidedAt: string;
}

const INSTALLATION_KEY = 'consent:installationId';
const decisionKey = (projectId: string) => 'consent:' + projectId;

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): boolean {
  try {
    localStorage.setItem(key, value);
    return true;
  } catch {
    return false;
  }
}

export function readDecision(projectId: string): Decision | null {
  try {
    const d = JSON.parse(read(decisionKey(projectId)) as string);
    // Anything else in the slot (another script's data, a hand edit) counts as no decision.
    return typeof d?.consentHash === 'string' && d.choices && typeof d.choices === 'object' ? d : null;
  } catch {
    return null;
  }
}

export function writeDecision(projectId: string, decision: Decision): boolean {
  return write(decisionKey(projectId), JSON.stringify(decision));
}

const ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
// Used when storage is blocked: the same id for every receipt of this page's life (per slot).
const memoryIds: Record<string, string> = {};

/**
 * The visitor's pseudonymous id (service contract: 8–64 of [A-Za-z0-9_-]); created on first use. A `scope` (a
 * project id) keeps an id of its own for that project: the service's own origin serves every operator's hosted
 * page, and one id there would let unrelated operators link a visitor (v2/index.ts).
 */
export function installationId(scope = ''): string {
  const key = INSTALLATION_KEY + scope;
  const stored = read(key);
  if (stored && ID_PATTERN.test(stored)) return stored;
  // 22 characters of a 64-letter alphabet: 132 random bits.
  write(key, (memoryIds[key] ||= Array.from(crypto.getRandomValues(new Uint8Array(22)), (b) => ALPHABET[b & 63]).join('')));
  return memoryIds[key]!;
}
