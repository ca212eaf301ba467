// Size budget of the browser SDK. Run from the repo root after building it:
//   npx rollup -c sdk/rollup.config.mjs && node bench/sdk-budget.mjs
// Prints the minified, gzipped and brotli sizes of SDK v1 (sdk/dist/consent.js, .mjs) and v2 (sdk/dist/v2/)
// and, as anchors, of two well-known consent libraries. Exits 1 when v2's consent.js is over its budget
// (8 KiB min+gzip, extensions.md section 4); missing anchors are only mentioned. v2/gpp.js (the IAB GPP API,
// loaded only in opt-out jurisdictions, extensions.md section 6) is listed beside it, outside that budget;
// v2/stub.js (at most 1 KiB) and v2/tcf.js (at most 24 KiB), the IAB TCF files of section 11, each have their own.
// The anchors are not dependencies of the project; fetch their npm tarballs into a scratch folder and name it:
//   mkdir -p /tmp/anchors && (cd /tmp/anchors && npm pack vanilla-cookieconsent klaro)
//   node bench/sdk-budget.mjs --anchors /tmp/anchors
// (installed copies, e.g. `npm i --no-save vanilla-cookieconsent klaro`, are found too).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const BUDGET = 8 * 1024; // bytes of v2 consent.js, minified and gzipped, everything included
// extensions.md section 11: stub.js (loaded synchronously before the core on TCF pages) and tcf.js (the TCF CMP).
// stub.js also holds the integrations' first-view defaults (section 12), within the same 1 KiB (docs/tcf.md).
const BUDGETS = { 'v2/stub.js': 1024, 'v2/tcf.js': 24 * 1024 };
const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(join(root, 'package.json'));

const sizes = (file) => {
  const bytes = readFileSync(file);
  return { min: bytes.length, gz: gzipSync(bytes, { level: 9 }).length, br: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length };
};
const rows = [];

for (const name of ['v2/consent.js', 'v2/consent.mjs', 'v2/gpp.js', 'v2/stub.js', 'v2/tcf.js', 'v2/more.js', 'v2/integrations.js', 'consent.js', 'consent.mjs']) {
  const file = join(root, 'sdk/dist', name);
  if (!existsSync(file)) {
    console.error(`${file} is missing: build it first with npx rollup -c sdk/rollup.config.mjs`);
    process.exit(1);
  }
  rows.push({ name: `@consent/sdk ${name.startsWith('v2/') ? name : 'v1/' + name}`, ...sizes(file) });
}
const sdk = rows[0];

// Each library's main minified bundle. Ours and klaro.js carry their CSS inside; cookieconsent ships it
// apart, so its CSS is listed too and added into a total.
const ANCHORS = {
  'vanilla-cookieconsent': ['dist/cookieconsent.umd.js', 'dist/cookieconsent.css'],
  klaro: ['dist/klaro.js'],
};
// `--anchors DIR`: a folder of `npm pack` tarballs, unpacked next to themselves on first use.
const packed = {};
const anchorsArg = process.argv.indexOf('--anchors');
if (anchorsArg > 0) {
  const folder = process.argv[anchorsArg + 1];
  for (const tgz of readdirSync(folder).filter((f) => f.endsWith('.tgz'))) {
    const dir = join(folder, tgz.slice(0, -4));
    if (!existsSync(join(dir, 'package/package.json'))) {
      mkdirSync(dir, { recursive: true });
      execFileSync('tar', ['xzf', join(folder, tgz), '-C', dir]);
    }
    const { name } = JSON.parse(readFileSync(join(dir, 'package/package.json'), 'utf8'));
    packed[name] = join(dir, 'package');
  }
}

const missing = [];
for (const [pkg, files] of Object.entries(ANCHORS)) {
  let dir = packed[pkg];
  try {
    dir ??= dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    missing.push(pkg);
    continue;
  }
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const found = files.filter((f) => existsSync(join(dir, f))).map((f) => ({ name: `${pkg}@${version} ${f}`, ...sizes(join(dir, f)) }));
  rows.push(...found);
  if (found.length > 1) {
    const sum = (k) => found.reduce((s, r) => s + r[k], 0);
    rows.push({ name: `${pkg}@${version} total`, min: sum('min'), gz: sum('gz'), br: sum('br') });
  }
}

const width = Math.max(...rows.map((r) => r.name.length));
const kib = (n) => (n / 1024).toFixed(1).padStart(6) + ' KiB';
console.log(`${'bundle'.padEnd(width)}  ${'minified'.padStart(10)}  ${'gzipped'.padStart(10)}  ${'brotli'.padStart(10)}  gz vs v2 consent.js`);
for (const r of rows) {
  console.log(`${r.name.padEnd(width)}  ${kib(r.min)}  ${kib(r.gz)}  ${kib(r.br)}  ${(r.gz / sdk.gz).toFixed(2).padStart(6)}x`);
}
if (missing.length) {
  console.log(`\nanchors not installed (${missing.join(', ')}); to compare, see --anchors at the top of this file`);
}

const gpp = rows[2];
console.log(`\nv2 gpp.js (opt-out jurisdictions only, loaded after consent.js): ${gpp.gz} B gzipped (${gpp.br} B brotli)`);
let over = false;
for (const [name, budget] of Object.entries(BUDGETS)) {
  const row = rows.find((r) => r.name.endsWith(' ' + name));
  const line = `v2 ${name.slice(3)}: ${row.gz} B gzipped (${row.br} B brotli), budget ${budget} B`;
  over ||= row.gz > budget;
  console.log(row.gz > budget ? `OVER BUDGET ${line}` : `within budget: ${line}`);
}
const verdict = `v2 consent.js: ${sdk.gz} B gzipped (${sdk.br} B brotli), budget ${BUDGET} B`;
if (sdk.gz > BUDGET || over) {
  console.error(`\nOVER BUDGET ${verdict}`);
  process.exit(1);
}
console.log(`\nwithin budget: ${verdict}`);
