// Checks a ledger export (GET .../receipts/export?format=ledger) and a single receipt proof (GET .../proof)
// against Ed25519 public keys, and names every problem it finds. Needs only ./ledger.mjs (docs/ledger.md).
//
// The file is read as hostile: every count, length and depth in it is checked against what the service can
// write before it is used, memory holds one checkpoint's leaves (never its receipts), and problems are capped.
import { checkpointHash, checkSignature, CHECKPOINT_FIELDS, leafHash, merkleRoot, outsideValidity, rootFromInclusion } from './ledger.mjs';

export const EXPORT_VERSION = 1;

/** What the service can produce (src/ledger/seal.ts, docs/ledger.md); anything beyond is not its export. */
export const LIMITS = Object.freeze({
  /** Receipts in one checkpoint at most (MAX_LEAVES in src/ledger/seal.ts). */
  leaves: 10_000,
  /** An inclusion path in a tree of 10,000 leaves has at most ceil(log2(10,000)) = 14 hashes. */
  pathLength: 14,
  /** A receipt line: a receipt the SDK's 64 KiB body allows, and its path; 1 MiB leaves room. */
  lineBytes: 1 << 20,
  /** Nesting of a line's JSON: a receipt line is four levels deep; room for fields to come. */
  depth: 32,
  /** Ids (uuidv7: 36 characters), key ids (43) and other names. */
  idLength: 100,
  /** Sequences are PostgreSQL integers. */
  sequence: 2 ** 31 - 1,
  /** Problems kept and reported one by one; the rest are counted ("and N more"). */
  problems: 100,
  /** Receipt ids remembered to find one receipt twice: this checkpoint's and the last ones' (ranges overlap only there). */
  recentIds: 20_000,
});

/** The export cannot be read at all (too deep to be the service's): the CLI exits 2 with this one line. */
export class UnreadableExport extends Error {}

/** A line longer than LIMITS.lineBytes, as boundedLines gives it (its text is never held). */
export const LINE_TOO_LONG = Symbol('line too long');

/**
 * The lines of a byte stream, never holding more than `maxBytes` of one line: a longer line is skipped to its
 * end and given as LINE_TOO_LONG. (node:readline holds a whole line, however long.)
 */
export async function* boundedLines(stream, maxBytes = LIMITS.lineBytes) {
  let parts = [];
  let size = 0;
  let tooLong = false;
  const line = () => {
    if (tooLong) return LINE_TOO_LONG;
    const text = Buffer.concat(parts, size).toString('utf8');
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  };
  for await (const chunk of stream) {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      if (!tooLong) {
        if (size + end - start > maxBytes) {
          tooLong = true;
          parts = [];
        } else if (end > start) {
          parts.push(chunk.subarray(start, end));
          size += end - start;
        }
      }
      if (newline === -1) break;
      yield line();
      parts = [];
      size = 0;
      tooLong = false;
      start = newline + 1;
    }
  }
  if (size > 0 || tooLong) yield line();
}

/** How deeply a JSON text nests (brackets outside strings), counted without parsing it. */
function nestingOf(text, limit) {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > limit) return depth;
    } else if (c === 93 || c === 125) depth--;
  }
  return depth;
}

/**
 * JSON.parse, refusing nesting deeper than LIMITS.depth before parsing (the hashing that follows recurses, and
 * a deep enough document would exhaust the stack).
 */
export function parseBounded(text, where) {
  if (nestingOf(text, LIMITS.depth) > LIMITS.depth) {
    throw new UnreadableExport(`${where}: JSON nested deeper than ${LIMITS.depth} levels, which the service never writes`);
  }
  return JSON.parse(text);
}

const HEX64 = /^[0-9a-f]{64}$/;
const isId = (value) => typeof value === 'string' && value.length > 0 && value.length <= LIMITS.idLength;
const isCount = (value, max) => Number.isInteger(value) && value >= 1 && value <= max;

/** Problems, the first LIMITS.problems kept; `more` counts the rest. */
function problemList() {
  const list = [];
  let more = 0;
  return {
    list,
    get more() {
      return more;
    },
    get total() {
      return list.length + more;
    },
    report(code, message, where = {}) {
      if (list.length < LIMITS.problems) list.push({ code, message, ...where });
      else more++;
    },
  };
}

/**
 * A problem: `code` says what kind, `message` says where and what, with the line, checkpoint sequence and
 * receipt id when there is one.
 *   receipt_edited                 a receipt's content is not what its checkpoint sealed
 *   receipt_missing                a checkpoint sealed a leaf that no receipt line carries
 *   receipt_inserted               a receipt line that its checkpoint did not seal
 *   receipts_out_of_order          receipts not in the order their checkpoint sealed them
 *   receipt_duplicated             one receipt id twice in the export
 *   receipt_not_sealed             receipt lines after the last checkpoint
 *   checkpoint_signature_invalid   a checkpoint's signature does not verify (forged or altered checkpoint)
 *   unknown_key                    signed by a key that is not among the keys given
 *   key_not_valid                  signed at a time outside the key's validity (notBefore, notAfter)
 *   key_superseded                 signed by a key that a newer one took over from earlier in this chain
 *   checkpoint_mismatch            count, first or last receipt id, or project differ from the receipts
 *   chain_broken                   `previous` is not the hash of the checkpoint before it
 *   sequence_gap                   checkpoints missing from the chain, or out of sequence
 *   head_missing                   a checkpoint the auditor kept (--head) is not in the export: cut short
 *   head_mismatch                  the export's checkpoint of that sequence has another root
 *   malformed                      a line that is not what the format says, or numbers the service never writes
 *   truncated                      no end line, or totals that differ from what was read
 */

/**
 * Verifies a ledger export given as lines (any iterable or async iterable of strings, or boundedLines of a
 * stream), one checkpoint group at a time: memory holds one checkpoint's leaf hashes and paths, and the last
 * LIMITS.recentIds receipt ids (for duplicates). `options.heads`: checkpoints the auditor kept,
 * [{ sequence, root }], that the export must hold. Throws UnreadableExport for JSON nested too deeply.
 *
 * The answer says what "verified" covers: `project`, `first` and `last` checkpoint read (sequence; the last
 * with root and createdAt), `startsAtFirst` (the export begins at checkpoint 1), and `notes` worth reading
 * even when `ok`.
 */
export async function verifyExport(lines, keys, options = {}) {
  const problems = problemList();
  const report = problems.report;
  const notes = [];
  const heads = new Map((options.heads ?? []).map((head) => [head.sequence, { ...head, found: false }]));
  let header = null;
  let group = []; // this checkpoint's receipt lines: { line, id, leafIndex, path, leaf }
  let overflow = 0; // receipt lines beyond what one checkpoint can seal, counted, not kept
  let previous = null; // the last checkpoint read
  let first = null;
  let lineNumber = 0;
  let checkpoints = 0;
  let receipts = 0;
  let end = null;
  const recent = new Map(); // receipt id -> line, the last LIMITS.recentIds
  const chain = { key: null, since: null, retired: new Map() }; // who signs this project's chain (key_superseded)
  const answer = () => ({
    ok: problems.total === 0,
    problems: problems.list,
    moreProblems: problems.more,
    checkpoints,
    receipts,
    header,
    project: header?.projectId ?? null,
    first: first && { sequence: first.sequence },
    last: previous && { sequence: previous.sequence, root: previous.root, createdAt: previous.createdAt },
    startsAtFirst: first?.sequence === 1,
    heads: [...heads.values()],
    notes,
  });

  for await (const raw of lines) {
    lineNumber++;
    if (raw === LINE_TOO_LONG) {
      report('malformed', `line ${lineNumber}: longer than ${LIMITS.lineBytes} bytes, which no line of the service's export is`, { line: lineNumber });
      continue;
    }
    if (!raw.trim()) continue;
    let entry;
    try {
      entry = parseBounded(raw, `line ${lineNumber}`);
    } catch (error) {
      if (error instanceof UnreadableExport) throw error;
      report('malformed', `line ${lineNumber}: not JSON`, { line: lineNumber });
      continue;
    }
    if (!header) {
      if (entry?.type !== 'ledger') {
        report('malformed', `line ${lineNumber}: expected the ledger header ({"type":"ledger",...}) first`, { line: lineNumber });
        return answer();
      }
      if (entry.version !== EXPORT_VERSION) {
        report('malformed', `line ${lineNumber}: ledger export version ${String(entry.version).slice(0, 20)}; this verifier reads version ${EXPORT_VERSION}`, { line: lineNumber });
        return answer();
      }
      if (!isId(entry.projectId)) {
        report('malformed', `line ${lineNumber}: the header names no project`, { line: lineNumber });
        return answer();
      }
      header = entry;
      continue;
    }
    if (end) report('malformed', `line ${lineNumber}: content after the end line`, { line: lineNumber });
    if (entry?.type === 'receipt') {
      if (!isId(entry.receipt?.id)) {
        report('malformed', `line ${lineNumber}: receipt line without a receipt id`, { line: lineNumber });
        continue;
      }
      receipts++;
      const id = entry.receipt.id;
      if (recent.has(id)) report('receipt_duplicated', `line ${lineNumber}: receipt ${id} already appeared on line ${recent.get(id)}`, { line: lineNumber, receiptId: id });
      else {
        recent.set(id, lineNumber);
        if (recent.size > LIMITS.recentIds) recent.delete(recent.keys().next().value);
      }
      if (group.length >= LIMITS.leaves) {
        overflow++;
        continue;
      }
      // Only what the checks need: the leaf hash stands for the receipt.
      const path = Array.isArray(entry.path) && entry.path.length <= LIMITS.pathLength && entry.path.every((p) => typeof p === 'string' && HEX64.test(p)) ? entry.path : null;
      group.push({ line: lineNumber, id, leafIndex: entry.leafIndex, path: path && path.map((p) => Buffer.from(p, 'hex')), leaf: leafHash(entry.receipt) });
    } else if (entry?.type === 'checkpoint' && entry.checkpoint && typeof entry.checkpoint === 'object') {
      const checkpoint = entry.checkpoint;
      checkpoints++;
      const shape = shapeProblem(checkpoint);
      if (shape) {
        report('malformed', `checkpoint on line ${lineNumber}: ${shape}; its ${group.length + overflow} receipt line(s) cannot be checked`, { line: lineNumber });
      } else {
        if (overflow) {
          report('receipt_inserted', `checkpoint ${checkpoint.sequence} (line ${lineNumber}) follows ${group.length + overflow} receipt lines; no checkpoint seals more than ${LIMITS.leaves}`, {
            line: lineNumber,
            sequence: checkpoint.sequence,
          });
        }
        checkGroup(checkpoint, lineNumber, group, previous, header, keys, chain, report);
        const head = heads.get(checkpoint.sequence);
        if (head) {
          head.found = true;
          if (head.root !== checkpoint.root) {
            report('head_mismatch', `checkpoint ${checkpoint.sequence} (line ${lineNumber}) has root ${checkpoint.root}; the one you kept has root ${head.root}: another history`, {
              line: lineNumber,
              sequence: checkpoint.sequence,
            });
          }
        }
        first ??= checkpoint;
        previous = { ...checkpoint, line: lineNumber };
      }
      group = [];
      overflow = 0;
    } else if (entry?.type === 'end') {
      end = entry;
    } else {
      report('malformed', `line ${lineNumber}: unknown line type ${JSON.stringify(entry?.type)?.slice(0, 40)}`, { line: lineNumber });
    }
  }
  if (!header) report('malformed', 'empty export: no ledger header');
  for (const r of group) {
    report('receipt_not_sealed', `line ${r.line}: receipt ${r.id} is not followed by a checkpoint that seals it`, { line: r.line, receiptId: r.id });
  }
  if (overflow) report('receipt_not_sealed', `${overflow} more receipt line(s) after the last checkpoint`);
  if (!end) report('truncated', `no end line after line ${lineNumber}: the export is incomplete`);
  else if (end.checkpoints !== checkpoints || end.receipts !== receipts) {
    report('truncated', `the end line counts ${String(end.checkpoints).slice(0, 20)} checkpoints and ${String(end.receipts).slice(0, 20)} receipts; the export has ${checkpoints} and ${receipts}`);
  }
  for (const head of heads.values()) {
    if (head.found) continue;
    const stops = previous ? `the export ends at checkpoint ${previous.sequence}` : 'the export holds no checkpoint';
    const why =
      previous && head.sequence < (first?.sequence ?? 0)
        ? `the export starts at checkpoint ${first.sequence}, after it`
        : previous && head.sequence < previous.sequence
          ? 'it is not in the export'
          : `${stops}: it was cut short, or made before that checkpoint`;
    report('head_missing', `checkpoint ${head.sequence} (root ${head.root}), which you kept, is missing: ${why}`, { sequence: head.sequence });
  }
  if (first && first.sequence !== 1) {
    notes.push(`the export starts at checkpoint ${first.sequence}, not 1: checkpoints 1 to ${first.sequence - 1} are not covered`);
  }
  if (header && !checkpoints) notes.push('the export holds no checkpoint: nothing was verified');
  const unbounded = [...new Set([...keys].filter(([, k]) => !k.validity).map(([kid]) => kid))];
  if (unbounded.length) notes.push(`keys given without validity (notBefore/notAfter), so only the chain decides when they may sign: ${unbounded.join(', ')}`);
  return answer();
}

/** Why a checkpoint is not one the service could have written (types and bounds), or null. */
function shapeProblem(checkpoint) {
  const missing = CHECKPOINT_FIELDS.filter((field) => !(field in checkpoint));
  if (missing.length) return `no ${missing.join(', ')}`;
  if (!isCount(checkpoint.sequence, LIMITS.sequence)) return `sequence ${JSON.stringify(checkpoint.sequence)?.slice(0, 40)} is not a positive integer`;
  if (!isCount(checkpoint.count, LIMITS.leaves)) return `count ${JSON.stringify(checkpoint.count)?.slice(0, 40)} is not 1 to ${LIMITS.leaves} (what one checkpoint seals)`;
  if (typeof checkpoint.root !== 'string' || !HEX64.test(checkpoint.root)) return 'root is not 64 hex digits';
  if (checkpoint.previous !== null && (typeof checkpoint.previous !== 'string' || !HEX64.test(checkpoint.previous))) return 'previous is neither null nor 64 hex digits';
  for (const field of ['projectId', 'firstReceiptId', 'lastReceiptId', 'keyId']) if (!isId(checkpoint[field])) return `${field} is not an id`;
  if (typeof checkpoint.createdAt !== 'string' || checkpoint.createdAt.length > 40 || !Number.isFinite(Date.parse(checkpoint.createdAt))) return 'createdAt is not a time';
  if (typeof checkpoint.signature !== 'string' || checkpoint.signature.length > 200) return 'signature is not an Ed25519 signature';
  return null;
}

/** The root a receipt line's leaf and path lead to at its leaf index, or null. */
function rootOf(r, count) {
  if (!r.path || !Number.isInteger(r.leafIndex)) return null;
  return rootFromInclusion(r.leafIndex, count, r.leaf, r.path)?.toString('hex') ?? null;
}

/** One checkpoint (its shape already checked) and the receipt lines before it. */
function checkGroup(checkpoint, line, group, previous, header, keys, chain, report) {
  const seq = checkpoint.sequence;
  const at = { line, sequence: seq };
  const name = `checkpoint ${seq} (line ${line})`;
  const signature = checkSignature(checkpoint, keys);
  if (signature === 'unknown_key') report('unknown_key', `${name}: signed by key ${checkpoint.keyId}, which is not among the trusted keys`, at);
  if (signature === 'bad_signature') {
    report('checkpoint_signature_invalid', `${name}: the signature does not verify with key ${checkpoint.keyId}: the checkpoint was forged or altered`, at);
  }
  if (signature === 'ok') checkKey(checkpoint, name, at, keys, chain, report);
  if (header && checkpoint.projectId !== header.projectId) {
    report('checkpoint_mismatch', `${name}: belongs to project ${checkpoint.projectId}, the export to ${header.projectId}`, at);
  }

  // The chain: sequences one apart, each naming the hash of the one before.
  if (previous) {
    if (seq !== previous.sequence + 1) {
      const missing = seq > previous.sequence + 1 ? `checkpoint${seq - previous.sequence > 2 ? `s ${previous.sequence + 1}-${seq - 1} are` : ` ${previous.sequence + 1} is`} missing` : 'out of sequence';
      report('sequence_gap', `${name} follows checkpoint ${previous.sequence} (line ${previous.line}): ${missing}`, at);
    } else if (checkpoint.previous !== checkpointHash(previous)) {
      report('chain_broken', `${name}: previous is ${checkpoint.previous}, but checkpoint ${previous.sequence} hashes to ${checkpointHash(previous)}`, at);
    }
  } else if (seq === 1 && checkpoint.previous !== null) {
    report('chain_broken', `${name}: the first checkpoint names a previous one (${checkpoint.previous})`, at);
  } else if (seq !== 1 && !header?.from) {
    report('sequence_gap', `${name} is the first of an export from the beginning: checkpoint${seq > 2 ? `s 1-${seq - 1} are` : ' 1 is'} missing`, at);
  }

  // Every receipt line against the signed root: its own leaf and path must lead there.
  const count = checkpoint.count;
  const included = [];
  const failed = [];
  for (const r of group) (rootOf(r, count) === checkpoint.root ? included : failed).push(r);
  const byLeaf = new Map();
  for (const r of included) if (!byLeaf.has(r.leafIndex)) byLeaf.set(r.leafIndex, r);
  for (const r of failed) {
    const where = { line: r.line, sequence: seq, receiptId: r.id };
    // A leaf that no genuine receipt holds, in a group of the sealed size: this line is that leaf, edited.
    const editedLeaf = Number.isInteger(r.leafIndex) && r.leafIndex >= 0 && r.leafIndex < count && !byLeaf.has(r.leafIndex) && group.length <= count;
    if (editedLeaf) {
      report('receipt_edited', `line ${r.line}: receipt ${r.id} was changed after ${name} sealed it: its content does not hash to leaf ${r.leafIndex}`, where);
    } else {
      report('receipt_inserted', `line ${r.line}: receipt ${r.id} is not one of the ${count} receipts ${name} sealed: inserted`, where);
    }
  }
  const editedLeaves = new Set(failed.filter((r) => Number.isInteger(r.leafIndex) && !byLeaf.has(r.leafIndex)).map((r) => r.leafIndex));
  // count is at most LIMITS.leaves (shapeProblem), so this loop and its problems are bounded.
  for (let leaf = 0; leaf < count; leaf++) {
    if (byLeaf.has(leaf) || (editedLeaves.has(leaf) && group.length <= count)) continue;
    const before = byLeaf.get(leaf - 1)?.id;
    const after = byLeaf.get(leaf + 1)?.id;
    const between = before && after ? ` (between receipts ${before} and ${after})` : before ? ` (after receipt ${before})` : after ? ` (before receipt ${after})` : '';
    report('receipt_missing', `${name} sealed ${count} receipts; leaf ${leaf}${between} is missing from the export`, { ...at, leafIndex: leaf });
  }

  // Order: the genuine receipts must come in leaf order (leaves are sealed in receipt id order).
  const isPermutation = included.length === count && byLeaf.size === count;
  if (isPermutation) {
    const moved = included.filter((r, position) => r.leafIndex !== position);
    if (moved.length) {
      const shown = moved.slice(0, 20);
      report(
        'receipts_out_of_order',
        `${name}: receipts out of sealed order: ${shown.map((r) => `${r.id} (line ${r.line}) belongs at leaf ${r.leafIndex}`).join(', ')}${moved.length > shown.length ? `, and ${moved.length - shown.length} more` : ''}`,
        { ...at, receiptIds: shown.map((r) => r.id) },
      );
    }
  } else {
    for (let i = 1; i < included.length; i++) {
      if (included[i].leafIndex < included[i - 1].leafIndex) {
        const [a, b] = [included[i - 1], included[i]];
        report('receipts_out_of_order', `${name}: receipt ${b.id} (leaf ${b.leafIndex}, line ${b.line}) comes after ${a.id} (leaf ${a.leafIndex}, line ${a.line})`, {
          ...at,
          receiptIds: [a.id, b.id],
        });
      }
    }
  }

  // The checkpoint's own description of what it sealed.
  if (isPermutation && failed.length === 0) {
    const ordered = [...included].sort((a, b) => a.leafIndex - b.leafIndex);
    if (checkpoint.firstReceiptId !== ordered[0].id || checkpoint.lastReceiptId !== ordered.at(-1).id) {
      report('checkpoint_mismatch', `${name}: firstReceiptId/lastReceiptId are not its first and last sealed receipts`, at);
    }
    // Belt and braces: the whole tree again, from the receipts in leaf order.
    if (merkleRoot(ordered.map((r) => r.leaf)).toString('hex') !== checkpoint.root) {
      report('checkpoint_mismatch', `${name}: the receipts do not hash to its root`, at);
    }
  }
}

/**
 * The key of a checkpoint whose signature verified: it signed within its validity, and no newer key had taken
 * over this project's chain before it (keys sign a chain in runs: once replaced, a key never signs it again).
 */
function checkKey(checkpoint, name, at, keys, chain, report) {
  const kid = checkpoint.keyId;
  const outside = outsideValidity(keys.get(kid), checkpoint.createdAt);
  if (outside) report('key_not_valid', `${name}: signed by key ${kid} at ${checkpoint.createdAt}, ${outside}`, at);
  if (chain.retired.has(kid)) {
    const { by, sequence } = chain.retired.get(kid);
    report('key_superseded', `${name}: signed by key ${kid}, which key ${by} took over from at checkpoint ${sequence} of this chain: a retired key signing again`, at);
  } else if (chain.key !== kid) {
    if (chain.key) chain.retired.set(chain.key, { by: kid, sequence: checkpoint.sequence });
    chain.key = kid;
  }
}

/** Verifies one answer of GET .../receipts/:receiptId/proof: `{ receipt, proof, checkpoint }`. */
export function verifyProof(answer, keys) {
  const problems = [];
  const { receipt, proof, checkpoint } = answer ?? {};
  if (!receipt || !proof || !checkpoint || typeof checkpoint !== 'object') {
    return { ok: false, problems: [{ code: 'malformed', message: 'expected { receipt, proof, checkpoint } as GET .../receipts/:receiptId/proof answers' }] };
  }
  const shape = shapeProblem(checkpoint);
  if (shape) return { ok: false, problems: [{ code: 'malformed', message: `the checkpoint: ${shape}` }] };
  const name = `checkpoint ${checkpoint.sequence} of project ${checkpoint.projectId}`;
  const signature = checkSignature(checkpoint, keys);
  if (signature === 'unknown_key') problems.push({ code: 'unknown_key', message: `${name}: signed by key ${checkpoint.keyId}, which is not among the trusted keys` });
  if (signature === 'bad_signature') problems.push({ code: 'checkpoint_signature_invalid', message: `${name}: the signature does not verify: forged or altered` });
  if (signature === 'ok') {
    const outside = outsideValidity(keys.get(checkpoint.keyId), checkpoint.createdAt);
    if (outside) problems.push({ code: 'key_not_valid', message: `${name}: signed by key ${checkpoint.keyId} at ${checkpoint.createdAt}, ${outside}` });
  }
  if (proof.treeSize !== checkpoint.count) problems.push({ code: 'checkpoint_mismatch', message: `proof.treeSize ${String(proof.treeSize).slice(0, 20)} is not ${name}'s count ${checkpoint.count}` });
  const pathOk = Array.isArray(proof.path) && proof.path.length <= LIMITS.pathLength && proof.path.every((p) => typeof p === 'string' && HEX64.test(p));
  const root = pathOk && rootFromInclusion(proof.leafIndex, checkpoint.count, leafHash(receipt), proof.path.map((p) => Buffer.from(p, 'hex')));
  if (!root || root.toString('hex') !== checkpoint.root) {
    problems.push({ code: 'receipt_edited', message: `receipt ${String(receipt.id).slice(0, LIMITS.idLength)}: its content and path do not lead to ${name}'s root: not what was sealed` });
  }
  return { ok: problems.length === 0, problems };
}
