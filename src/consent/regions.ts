import { getCodes } from 'country-list';

// Region data for jurisdiction rules and visitor locations (docs/jurisdictions.md). Only codes:
// the service never turns an address into a place; a CDN or proxy does that and sends the codes.

/** ISO 3166-1 alpha-2, as the country-list package ships them, plus XK (Kosovo): user-assigned, yet what CDNs send. */
const COUNTRIES: ReadonlySet<string> = new Set([...getCodes(), 'XK']);

/** The 27 EU members and Iceland, Liechtenstein and Norway: where the GDPR applies. */
export const EEA_COUNTRIES: readonly string[] = [
  'AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU', 'IE',
  'IS', 'IT', 'LI', 'LT', 'LU', 'LV', 'MT', 'NL', 'NO', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK',
];
const EEA: ReadonlySet<string> = new Set(EEA_COUNTRIES);

/** ISO 3166-2:US: the 50 states, DC and the six outlying areas (their codes without `US-`). */
export const US_SUBDIVISIONS: readonly string[] = [
  'AK', 'AL', 'AR', 'AZ', 'CA', 'CO', 'CT', 'DE', 'FL', 'GA', 'HI', 'IA', 'ID', 'IL', 'IN', 'KS', 'KY',
  'LA', 'MA', 'MD', 'ME', 'MI', 'MN', 'MO', 'MS', 'MT', 'NC', 'ND', 'NE', 'NH', 'NJ', 'NM', 'NV', 'NY',
  'OH', 'OK', 'OR', 'PA', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VA', 'VT', 'WA', 'WI', 'WV', 'WY',
  'DC', 'AS', 'GU', 'MP', 'PR', 'UM', 'VI',
];
const US_STATES: ReadonlySet<string> = new Set(US_SUBDIVISIONS);

export const isCountryCode = (code: string) => COUNTRIES.has(code);
export const isEeaCountry = (code: string) => EEA.has(code);
export const isUsSubdivision = (code: string) => US_STATES.has(code);

/** A location code's country: `US-CA` → `US`, `DE` → `DE`. */
export const countryOf = (location: string) => location.slice(0, 2);

/**
 * The visitor's location code from a CDN's country and region values: `DE`, `US`, or `US-CA` when
 * the country is the US and the region names one of its subdivisions (`CA` or `US-CA`, any case).
 * Null when there is no usable location: no country, a value that is not an assigned country code
 * (Cloudflare's `XX` and `T1` included), or a US region that is not a subdivision. Regions of other
 * countries are not used: no rule can name them.
 */
export function locationCode(country: string | undefined, region: string | undefined): string | null {
  const code = country?.trim().toUpperCase();
  if (!code || code.length !== 2 || !COUNTRIES.has(code)) return null;
  if (code !== 'US') return code;
  let state = region?.trim().toUpperCase();
  if (!state) return 'US';
  if (state.startsWith('US-')) state = state.slice(3);
  return US_STATES.has(state) ? `US-${state}` : null;
}

/** A location code as written (`DE`, `us-ca`): the same checks, null when it is not one. */
export function parseLocationCode(value: string | undefined): string | null {
  if (!value || value.length > 6) return null;
  const [country, region, extra] = value.split('-');
  if (extra !== undefined || (region !== undefined && country?.toUpperCase() !== 'US') || region === '') return null;
  return locationCode(country, region);
}
