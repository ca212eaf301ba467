// EEA (EU 27, Iceland, Liechtenstein, Norway), the UK and Switzerland: where gdprApplies is true. Its own module so the
// headless core (sdk/core) can ask without loading the IAB's library.
const GDPR = 'AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO GB UK CH';
/** The jurisdiction the service placed the visitor in (`DE`, `US-CA`), or null when it does not know: then true. */
export const gdprApplies = (code?: string | null) => !code || GDPR.split(' ').includes(code.split('-')[0]!);
