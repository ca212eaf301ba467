#!/usr/bin/env node
// consent-verify: checks a consent ledger export or a receipt proof without the service or its database.
//   npx consent-verify <export.ndjson> [--keys keys.json] [--json]
//   npx consent-verify --proof <proof.json> --keys keys.json [--json]
// keys.json: the document at /.well-known/consent-ledger-keys.json, kept by you (docs/ledger.md). Without
// --keys the export's header names where the service publishes its keys, and they are fetched from there.
// Exit code: 0 verified, 1 problems found (each named on its own line), 2 could not run.
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { readKeys } from './ledger.mjs';
import { verifyExport, verifyProof } from './verify-export.mjs';

const USAGE = 'usage: consent-verify <export.ndjson> [--keys keys.json] [--json]\n       consent-verify --proof <proof.json> --keys keys.json [--json]';

function parseArgs(argv) {
  const args = { json: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') args.json = true;
    else if (arg === '--keys' || arg === '--proof') {
      args[arg.slice(2)] = argv[++i];
      if (!args[arg.slice(2)]) throw new Error(`${arg} needs a file`);
    }
    else if (arg === '--help' || arg === '-h') args.help = true;
    else if (!arg.startsWith('--') && !args.file) args.file = arg;
    else throw new Error(`unknown argument ${arg}`);
  }
  if (!args.help && !args.file && !args.proof) throw new Error('name an export file or --proof <file>');
  return args;
}

/** The first line of an export (its header), without reading the rest. */
async function headerOf(file) {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    return JSON.parse(line);
  }
  return null;
}

async function loadKeys(args) {
  if (args.keys) return { keys: readKeys(JSON.parse(readFileSync(args.keys, 'utf8'))), source: args.keys };
  if (args.proof) throw new Error('--proof needs --keys: the public keys you trust');
  const url = (await headerOf(args.file))?.keys;
  if (typeof url !== 'string') throw new Error('the export names no keys address: pass --keys');
  const response = await fetch(url);
  if (!response.ok) throw new Error(`fetching keys from ${url}: HTTP ${response.status}`);
  return { keys: readKeys(await response.json()), source: `${url} (fetched now: prefer keys you keep yourself, --keys)` };
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`consent-verify: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let result;
  let source;
  try {
    const loaded = await loadKeys(args);
    source = loaded.source;
    if (args.proof) result = verifyProof(JSON.parse(readFileSync(args.proof, 'utf8')), loaded.keys);
    else result = await verifyExport(createInterface({ input: createReadStream(args.file), crlfDelay: Infinity }), loaded.keys);
  } catch (error) {
    process.stderr.write(`consent-verify: ${error.message}\n`);
    return 2;
  }
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ ok: result.ok, keys: source, checkpoints: result.checkpoints, receipts: result.receipts, problems: result.problems }, null, 2)}\n`);
  } else {
    for (const problem of result.problems) process.stdout.write(`FAIL ${problem.code}: ${problem.message}\n`);
    const what = args.proof ? `proof of receipt ${JSON.parse(readFileSync(args.proof, 'utf8')).receipt?.id}` : `${result.receipts} receipts in ${result.checkpoints} checkpoints`;
    process.stdout.write(result.ok ? `OK: ${what} verified against keys from ${source}\n` : `${result.problems.length} problem(s) in ${what}\n`);
  }
  return result.ok ? 0 : 1;
}

process.exitCode = await main();
