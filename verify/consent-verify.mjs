#!/usr/bin/env node
// consent-verify: checks a consent ledger export or a receipt proof without the service or its database.
//   npx consent-verify <export.ndjson> --keys keys.json [--head <sequence>:<root>]... [--json]
//   npx consent-verify <export.ndjson> --keys-url https://…/.well-known/consent-ledger-keys.json [...]
//   npx consent-verify --proof <proof.json> --keys keys.json [--json]
// The keys are always the auditor's choice: a file you keep (--keys) or an address you name (--keys-url). The
// export's header names an address too, but the header is not signed: whoever wrote the file would choose the
// keys that check it, so it is never used (docs/ledger.md).
// Exit code: 0 verified, 1 problems found (each named on its own line), 2 could not run.
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { readKeys } from './ledger.mjs';
import { boundedLines, parseBounded, verifyExport, verifyProof } from './verify-export.mjs';

const USAGE = [
  'usage: consent-verify <export.ndjson> (--keys keys.json | --keys-url <url>) [--head <sequence>:<root>]... [--json]',
  '       consent-verify --proof <proof.json> (--keys keys.json | --keys-url <url>) [--json]',
].join('\n');

const NO_KEYS =
  'no keys given: pass --keys <file> (the keys document you keep) or --keys-url <url> (an address you choose). ' +
  "The export's header names a keys address, but the header is not signed: keys fetched from it would let whoever " +
  'wrote the file choose the keys that check it';

/** A keys document or a proof: small JSON files (the service's are a few KB). */
const MAX_DOCUMENT_BYTES = 1 << 20;

function parseArgs(argv) {
  const args = { json: false, heads: [] };
  const valueOf = (i, what) => {
    const value = argv[i + 1];
    if (!value || value.startsWith('--')) throw new Error(`${argv[i]} needs ${what}`);
    return value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') args.json = true;
    else if (arg === '--help' || arg === '-h') args.help = true;
    else if (arg === '--keys' || arg === '--proof') args[arg.slice(2)] = valueOf(i++, 'a file');
    else if (arg === '--keys-url') args.keysUrl = valueOf(i++, 'an address');
    else if (arg === '--head') args.heads.push(parseHead(valueOf(i++, '<sequence>:<root>')));
    else if (!arg.startsWith('--') && !args.file) args.file = arg;
    else throw new Error(`unknown argument ${arg}`);
  }
  if (args.help) return args;
  if (!args.file && !args.proof) throw new Error('name an export file or --proof <file>');
  if (args.file && args.proof) throw new Error('name an export file or --proof <file>, not both');
  if (args.keys && args.keysUrl) throw new Error('give the keys once: --keys <file> or --keys-url <url>');
  if (!args.keys && !args.keysUrl) throw new Error(NO_KEYS);
  if (args.proof && args.heads.length) throw new Error('--head applies to an export, not to --proof');
  return args;
}

/** `--head 42:<64 hex>`: a checkpoint the auditor kept (e.g. from the ledger.checkpoint webhook). */
function parseHead(text) {
  const match = /^(\d{1,10}):([0-9a-f]{64})$/.exec(text);
  if (!match || Number(match[1]) < 1) throw new Error(`--head ${text}: expected <sequence>:<root>, a checkpoint's sequence and its 64 hex digit root`);
  return { sequence: Number(match[1]), root: match[2] };
}

function readDocument(file, what) {
  const size = statSync(file).size;
  if (size > MAX_DOCUMENT_BYTES) throw new Error(`${what} ${file}: ${size} bytes; the service's are a few KB`);
  return parseBounded(readFileSync(file, 'utf8'), `${what} ${file}`);
}

/** The keys document at an address the auditor named, read up to MAX_DOCUMENT_BYTES; redirects are refused. */
async function fetchKeys(address) {
  let url;
  try {
    url = new URL(address);
  } catch {
    throw new Error(`--keys-url ${address}: not an address`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`--keys-url ${address}: only http and https`);
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(30_000), headers: { accept: 'application/json' } });
  if (response.status >= 300 && response.status < 400) {
    throw new Error(`--keys-url ${url}: redirects to ${response.headers.get('location')}; give the address you trust itself`);
  }
  if (!response.ok) throw new Error(`--keys-url ${url}: HTTP ${response.status}`);
  const chunks = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > MAX_DOCUMENT_BYTES) throw new Error(`--keys-url ${url}: more than ${MAX_DOCUMENT_BYTES} bytes; the service's keys document is a few KB`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return { document: parseBounded(text, `--keys-url ${url}`), url: url.href, origin: url.origin };
}

/** The auditor's keys, and where they came from (said in the answer). */
async function loadKeys(args) {
  if (args.keys) {
    const file = resolve(args.keys);
    return { keys: readKeys(readDocument(file, '--keys')), from: { file }, said: `the file ${file}` };
  }
  const { document, url, origin } = await fetchKeys(args.keysUrl);
  return { keys: readKeys(document), from: { url, origin }, said: `${origin} (fetched now from ${url}, the address you gave)` };
}

function print(args, result, keys) {
  if (args.json) {
    const { header: _header, ...answer } = result;
    process.stdout.write(`${JSON.stringify({ ...answer, keys: keys.from }, null, 2)}\n`);
    return;
  }
  const out = [];
  for (const problem of result.problems) out.push(`FAIL ${problem.code}: ${problem.message}`);
  if (result.moreProblems) out.push(`… and ${result.moreProblems} more problem(s) not shown`);
  if (args.proof) {
    const { receiptId, checkpoint } = result;
    const what = `proof of receipt ${String(receiptId).slice(0, 100)} in checkpoint ${String(checkpoint.sequence).slice(0, 20)} of project ${String(checkpoint.projectId).slice(0, 100)}`;
    out.push(result.ok ? `OK: ${what} verified against keys from ${keys.said}` : `${result.problems.length} problem(s) in ${what}`);
  } else {
    const what = `${result.receipts} receipts in ${result.checkpoints} checkpoints`;
    const total = result.problems.length + result.moreProblems;
    out.push(result.ok ? `OK: ${what} verified` : `${total} problem(s) in ${what}`);
    out.push(`  project:     ${result.project ?? '(none)'}`);
    if (result.last) {
      out.push(`  checkpoints: ${result.first.sequence} to ${result.last.sequence}${result.startsAtFirst ? '' : ` (not from 1: checkpoints 1 to ${result.first.sequence - 1} are not in this export)`}`);
      out.push(`  last:        checkpoint ${result.last.sequence}, root ${result.last.root}, sealed ${result.last.createdAt}`);
    }
    out.push(`  keys:        ${keys.said}`);
    for (const head of result.heads) {
      if (head.found) out.push(`  head:        checkpoint ${head.sequence} is in the export${result.problems.some((p) => p.code === 'head_mismatch' && p.sequence === head.sequence) ? ' with another root' : ' with the root you kept'}`);
    }
    for (const note of result.notes) out.push(`note: ${note}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
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
  let keys;
  try {
    keys = await loadKeys(args);
    if (args.proof) {
      const proof = readDocument(args.proof, '--proof');
      const { projectId, sequence, root, createdAt } = proof?.checkpoint ?? {};
      // What the proof covers: one receipt, in one checkpoint.
      result = { ...verifyProof(proof, keys.keys), receiptId: proof?.receipt?.id ?? null, checkpoint: { projectId, sequence, root, createdAt } };
    } else {
      result = await verifyExport(boundedLines(createReadStream(args.file)), keys.keys, { heads: args.heads });
    }
  } catch (error) {
    // One line, never a stack: what could not be read, and why.
    process.stderr.write(`consent-verify: ${String(error?.message ?? error).split('\n')[0]}\n`);
    return 2;
  }
  print(args, result, keys);
  return result.ok ? 0 : 1;
}

process.exitCode = await main();
