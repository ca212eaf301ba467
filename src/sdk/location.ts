import type { Config } from '../config.js';

// The visitor's location as a CDN or proxy resolved it (docs/jurisdictions.md). Read per request from
// the configured headers and never stored; src/consent/regions.ts turns the values into a location code.

export interface GeoHeaders {
  country?: string | undefined;
  region?: string | undefined;
}

/** The configured headers' values (first of a repeated one), or undefined when GEO_COUNTRY_HEADER is unset. */
export function geoHeaders(geo: Config['geo'], header: (name: string) => string | string[] | undefined): GeoHeaders | undefined {
  if (!geo.countryHeader) return undefined;
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  return { country: first(header(geo.countryHeader)), region: geo.regionHeader ? first(header(geo.regionHeader)) : undefined };
}

/** The configured header names, for `Vary`: the answer depends on them. */
export const geoHeaderNames = (geo: Config['geo']) => [geo.countryHeader, geo.regionHeader].filter((name): name is string => !!name);
