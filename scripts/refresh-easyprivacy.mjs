#!/usr/bin/env node
// Refreshes the scanner's snapshot of EasyPrivacy (GPL-3.0+ or CC BY-SA 3.0+, The EasyList authors):
//   node scripts/refresh-easyprivacy.mjs [<url or local file>] [<date of the copy, YYYY-MM-DD>]
// Without arguments it reads the copy Debian's webext-ublock-origin-chromium package installs (the only source
// reachable where the network is only the npm and Debian registries); elsewhere pass
// https://easylist.to/easylist/easyprivacy.txt. Writes src/scanner/catalogue/easyprivacy.txt and EASYPRIVACY.json
// after checking the list's title. The service itself never fetches it.
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';

const DEBIAN_COPY = '/usr/share/chromium/extensions/ublock-origin/assets/thirdparties/easylist/easyprivacy.txt';
const dir = new URL('../src/scanner/catalogue/', import.meta.url);

const source = process.argv[2] ?? DEBIAN_COPY;
const remote = /^https?:/.test(source);
const text = remote ? await (await fetch(source)).text() : readFileSync(source, 'utf8');
if (!/^! Title: EasyPrivacy$/m.test(text.slice(0, 2000))) {
  console.error(`${source} is not EasyPrivacy (no "! Title: EasyPrivacy" in its header)`);
  process.exit(1);
}
// The list's own "Last modified" where it has one; a bundled copy has a placeholder, so the file's date.
const modified = /^! Last modified: (\d{1,2} \w{3} \d{4})/m.exec(text)?.[1];
const date = process.argv[3] ?? (modified ? new Date(`${modified} UTC`).toISOString().slice(0, 10) : remote ? new Date().toISOString().slice(0, 10) : statSync(source).mtime.toISOString().slice(0, 10));
writeFileSync(new URL('easyprivacy.txt', dir), text);
const snapshot = {
  source: `EasyPrivacy (easylist.to), ${source === DEBIAN_COPY ? `Debian's webext-ublock-origin-chromium, ${source}` : source}`,
  licence: 'GPL-3.0-or-later or CC-BY-SA-3.0 (LICENSE-easyprivacy beside this file)',
  date,
  sha256: createHash('sha256').update(text).digest('hex'),
};
writeFileSync(new URL('EASYPRIVACY.json', dir), `${JSON.stringify(snapshot, null, 2)}\n`);
console.log(`EasyPrivacy written (${text.split('\n').length} lines), dated ${date}; LICENSE-easyprivacy names the source: update it if the source changed`);
