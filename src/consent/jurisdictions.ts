import { z } from 'zod';
import { countryOf, isCountryCode, isEeaCountry, isUsSubdivision } from './regions.js';

// Jurisdiction rules and GPP settings of the experience (extensions.md section 6, docs/jurisdictions.md):
// which consent mode applies where. First matching rule wins; a rule with `*` also matches an unknown location.

export const JURISDICTION_MODES = ['opt-in', 'opt-out', 'notice', 'none'] as const;
export type JurisdictionMode = (typeof JURISDICTION_MODES)[number];

export const JURISDICTION_LIMITS = { rules: 50, regionsPerRule: 100, id: 40 } as const;

export interface JurisdictionRule {
  id: string;
  regions: string[];
  mode: JurisdictionMode;
}

/**
 * The rules that apply when a project sets none (docs/jurisdictions.md says why each state is here).
 * The service's own: they grow as new state laws come into force; a project that sets rules pins its own.
 */
export const DEFAULT_JURISDICTIONS: readonly Readonly<JurisdictionRule>[] = Object.freeze([
  // GDPR and its UK and Swiss counterparts: consent before anything optional.
  { id: 'eea-uk-ch', regions: ['EEA', 'UK', 'CH'], mode: 'opt-in' },
  // US states with a comprehensive consumer privacy law in force by 2026: a right to opt out of sale,
  // sharing and targeted advertising, not prior consent.
  {
    id: 'us-state-privacy',
    regions: [
      'US-CA', 'US-CO', 'US-CT', 'US-DE', 'US-MD', 'US-MT', 'US-NE', 'US-NH', 'US-NJ', 'US-OR', 'US-TX', 'US-VA', 'US-UT',
      'US-IA', 'US-IN', 'US-KY', 'US-MN', 'US-RI', 'US-TN',
    ],
    mode: 'opt-out',
  },
  // Everywhere else, and an unknown location: the strictest.
  { id: 'default', regions: ['*'], mode: 'opt-in' },
] satisfies JurisdictionRule[]);

export interface GppSettings {
  mspaCoveredTransaction: boolean;
  mspaMode: 'none' | 'opt-out-option' | 'service-provider';
  sections?: 'national' | 'state';
}

export const DEFAULT_GPP: Readonly<GppSettings> = Object.freeze({ mspaCoveredTransaction: false, mspaMode: 'none' });

const GROUPS = new Set(['EEA', 'US', 'UK', '*']);

/** A region token of a rule: `*`, `EEA`, `US`, `UK` (GB), a country (`DE`) or a US subdivision (`US-CA`). */
export function isRegionToken(token: string): boolean {
  if (GROUPS.has(token)) return true;
  if (token.length === 2) return isCountryCode(token);
  return token.startsWith('US-') && isUsSubdivision(token.slice(3));
}

const ruleInput = z
  .object({
    id: z
      .string()
      .min(1, 'At least 1 character')
      .max(JURISDICTION_LIMITS.id, `At most ${JURISDICTION_LIMITS.id} characters`)
      .regex(/^[a-z0-9_-]+$/, 'Only a-z, 0-9, - and _'),
    regions: z
      .array(
        z.string().superRefine((token, ctx) => {
          if (!isRegionToken(token)) {
            ctx.addIssue({ code: 'custom', message: `Unknown region ${JSON.stringify(token)}: an ISO 3166-1 country (DE), a US state (US-CA), EEA, US, UK or *` });
          }
        }),
      )
      .min(1, 'At least one region')
      .max(JURISDICTION_LIMITS.regionsPerRule, `At most ${JURISDICTION_LIMITS.regionsPerRule} regions`),
    mode: z.enum(JURISDICTION_MODES),
  })
  .strict();

/** `jurisdictions` of the experience: ids unique, nothing after a rule that matches everywhere. */
export const jurisdictionsInput = z
  .array(ruleInput)
  .max(JURISDICTION_LIMITS.rules, `At most ${JURISDICTION_LIMITS.rules} rules`)
  .superRefine((rules, ctx) => {
    const ids = new Set<string>();
    let catchAll: string | undefined;
    rules.forEach((rule, i) => {
      if (ids.has(rule.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `Duplicate rule id ${rule.id}` });
      ids.add(rule.id);
      if (catchAll !== undefined) {
        ctx.addIssue({ code: 'custom', path: [i], message: `Never reached: rule ${catchAll} before it matches everywhere (*)` });
      }
      if (catchAll === undefined && rule.regions.includes('*')) catchAll = rule.id;
    });
  });

export const gppInput = z
  .object({
    mspaCoveredTransaction: z.boolean().default(DEFAULT_GPP.mspaCoveredTransaction),
    mspaMode: z.enum(['none', 'opt-out-option', 'service-provider']).default(DEFAULT_GPP.mspaMode),
    // Optional, not defaulted, so experiences saved without it keep their bytes and hashes: absent is national.
    sections: z
      .enum(['national', 'state'])
      .optional()
      .describe(
        'national (absent): usnat, with the state’s own section beside it; state: a visitor in a US state with its own GPP section gets that section in place of usnat (usnat where the state has none)',
      ),
  })
  .strict();

function tokenMatches(token: string, location: string | null): boolean {
  if (token === '*') return true;
  if (location === null) return false;
  switch (token) {
    case 'EEA':
      return isEeaCountry(countryOf(location));
    case 'US':
      return countryOf(location) === 'US';
    case 'UK':
      return location === 'GB';
    default:
      return token === location;
  }
}

export interface Placement {
  /** The location and the id of the rule that matched it (null when none did); null without a location. */
  jurisdiction: { code: string; rule: string | null } | null;
  mode: JurisdictionMode;
}

/**
 * The first rule matching a location code (or null: unknown), in the project's rules or the defaults.
 * No rule at all matching is opt-in, the strictest, with no rule to name.
 */
export function placeLocation(rules: readonly JurisdictionRule[] | undefined, location: string | null): Placement {
  const effective = rules?.length ? rules : DEFAULT_JURISDICTIONS;
  const rule = effective.find((candidate) => candidate.regions.some((token) => tokenMatches(token, location)));
  return {
    jurisdiction: location === null ? null : { code: location, rule: rule?.id ?? null },
    mode: rule?.mode ?? 'opt-in',
  };
}
