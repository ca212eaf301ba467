#!/usr/bin/env node
// Refreshes the scanner's snapshot of the Open Cookie Database (Apache-2.0) from its upstream repository:
//   node scripts/refresh-cookie-database.mjs [<csv url or local file>]
// Writes src/scanner/catalogue/open-cookie-database.csv and SNAPSHOT.json (today's date, the source given),
// after checking that the header is the one src/scanner/catalogue.ts reads. Needs network access to the
// source (or a local copy of the CSV); the service itself never fetches it.
import { readFileSync, writeFileSync } from 'node:fs';

const DEFAULT_SOURCE = 'https://raw.githubusercontent.com/jkwakman/Open-Cookie-Database/master/open-cookie-database.csv';
const HEADER = 'ID,Platform,Category,Cookie / Data Key name,Domain,Description,Retention period,Data Controller,User Privacy & GDPR Rights Portals,Wildcard match';
const dir = new URL('../src/scanner/catalogue/', import.meta.url);

const source = process.argv[2] ?? DEFAULT_SOURCE;
const csv = /^https?:/.test(source) ? await (await fetch(source)).text() : readFileSync(source, 'utf8');
const header = csv.split(/\r?\n/, 1)[0]?.replace(/^\uFEFF/, '');
if (header !== HEADER) {
  console.error(`Unexpected header in ${source}:\n  ${header}\nexpected:\n  ${HEADER}\n(update src/scanner/catalogue.ts first)`);
  process.exit(1);
}
writeFileSync(new URL('open-cookie-database.csv', dir), csv);
const snapshot = {
  source: `Open Cookie Database, ${source}`,
  licence: 'Apache-2.0 (LICENSE-open-cookie-database beside this file)',
  commit: process.env.OCD_COMMIT ?? 'unknown (fetched from the default branch)',
  date: new Date().toISOString().slice(0, 10),
};
writeFileSync(new URL('SNAPSHOT.json', dir), `${JSON.stringify(snapshot, null, 2)}\n`);
console.log(`${csv.split(/\r?\n/).length - 2} entries written; SNAPSHOT.json dated ${snapshot.date}`);
