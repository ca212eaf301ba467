// Checks a ledger export (GET .../receipts/export?format=ledger) and a single receipt proof (GET .../proof)
// against Ed25519 public keys, and names every problem it finds. Needs only ./ledger.mjs (docs/ledger.md).
import { checkpointHash, checkSignature, CHECKPOINT_FIELDS, leafHash, merkleRoot, verifyInclusion } from './ledger.mjs';

export const EXPORT_VERSION = 1;

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
 *   checkpoint_mismatch            count, first or last receipt id, or project differ from the receipts
 *   chain_broken                   `previous` is not the hash of the checkpoint before it
 *   sequence_gap                   checkpoints missing from the chain, or out of sequence
 *   malformed                      a line that is not what the format says
 *   truncated                      no end line, or totals that differ from what was read
 */

/**
 * Verifies a ledger export given as lines (any iterable or async iterable of strings), one checkpoint group
 * at a time: memory holds one checkpoint's receipts and the ids seen (for duplicates).
 */
export async function verifyExport(lines, keys) {
  const problems = [];
  const report = (code, message, where = {}) => problems.push({ code, message, ...where });
  let header = null;
  let group = []; // receipt lines since the last checkpoint
  let previous = null; // the last checkpoint read
  let lineNumber = 0;
  let checkpoints = 0;
  let receipts = 0;
  let end = null;
  const seen = new Map(); // receipt id -> line

  for await (const raw of lines) {
    lineNumber++;
    if (!raw.trim()) continue;
    let entry;
    try {
      entry = JSON.parse(raw);
    } catch {
      report('malformed', `line ${lineNumber}: not JSON`, { line: lineNumber });
      continue;
    }
    if (lineNumber === 1 || !header) {
      if (entry?.type !== 'ledger') {
        report('malformed', `line ${lineNumber}: expected the ledger header ({"type":"ledger",...}) first`, { line: lineNumber });
        return { ok: false, problems, checkpoints, receipts, header };
      }
      if (entry.version !== EXPORT_VERSION) {
        report('malformed', `line ${lineNumber}: ledger export version ${entry.version}; this verifier reads version ${EXPORT_VERSION}`, { line: lineNumber });
        return { ok: false, problems, checkpoints, receipts, header };
      }
      header = entry;
      continue;
    }
    if (end) report('malformed', `line ${lineNumber}: content after the end line`, { line: lineNumber });
    if (entry?.type === 'receipt') {
      if (!entry.receipt || typeof entry.receipt.id !== 'string') {
        report('malformed', `line ${lineNumber}: receipt line without a receipt id`, { line: lineNumber });
        continue;
      }
      const id = entry.receipt.id;
      if (seen.has(id)) report('receipt_duplicated', `line ${lineNumber}: receipt ${id} already appeared on line ${seen.get(id)}`, { line: lineNumber, receiptId: id });
      else seen.set(id, lineNumber);
      group.push({ line: lineNumber, ...entry });
      receipts++;
    } else if (entry?.type === 'checkpoint' && entry.checkpoint) {
      checkGroup(entry.checkpoint, lineNumber, group, previous, header, keys, report);
      previous = { ...entry.checkpoint, line: lineNumber };
      group = [];
      checkpoints++;
    } else if (entry?.type === 'end') {
      end = entry;
    } else {
      report('malformed', `line ${lineNumber}: unknown line type ${JSON.stringify(entry?.type)}`, { line: lineNumber });
    }
  }
  if (!header) report('malformed', 'empty export: no ledger header');
  for (const r of group) {
    report('receipt_not_sealed', `line ${r.line}: receipt ${r.receipt.id} is not followed by a checkpoint that seals it`, { line: r.line, receiptId: r.receipt.id });
  }
  if (!end) report('truncated', `no end line after line ${lineNumber}: the export is incomplete`);
  else if (end.checkpoints !== checkpoints || end.receipts !== receipts) {
    report('truncated', `the end line counts ${end.checkpoints} checkpoints and ${end.receipts} receipts; the export has ${checkpoints} and ${receipts}`);
  }
  return { ok: problems.length === 0, problems, checkpoints, receipts, header };
}

/** One checkpoint and the receipt lines before it. */
function checkGroup(checkpoint, line, group, previous, header, keys, report) {
  const seq = checkpoint.sequence;
  const at = { line, sequence: seq };
  const name = `checkpoint ${seq} (line ${line})`;
  for (const field of CHECKPOINT_FIELDS) {
    if (!(field in checkpoint)) report('malformed', `${name}: no ${field}`, at);
  }
  const signature = checkSignature(checkpoint, keys);
  if (signature === 'unknown_key') report('unknown_key', `${name}: signed by key ${checkpoint.keyId}, which is not among the trusted keys`, at);
  if (signature === 'bad_signature') {
    report('checkpoint_signature_invalid', `${name}: the signature does not verify with key ${checkpoint.keyId}: the checkpoint was forged or altered`, at);
  }
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
  for (const r of group) {
    const ok = Number.isInteger(r.leafIndex) && verifyInclusion(r.receipt, r.leafIndex, count, r.path, checkpoint.root);
    (ok ? included : failed).push(r);
  }
  const byLeaf = new Map();
  for (const r of included) if (!byLeaf.has(r.leafIndex)) byLeaf.set(r.leafIndex, r);
  for (const r of failed) {
    const id = r.receipt.id;
    const where = { line: r.line, sequence: seq, receiptId: id };
    // A leaf that no genuine receipt holds, in a group of the sealed size: this line is that leaf, edited.
    const editedLeaf = Number.isInteger(r.leafIndex) && r.leafIndex >= 0 && r.leafIndex < count && !byLeaf.has(r.leafIndex) && group.length <= count;
    if (editedLeaf) {
      report('receipt_edited', `line ${r.line}: receipt ${id} was changed after ${name} sealed it: its content does not hash to leaf ${r.leafIndex}`, where);
    } else {
      report('receipt_inserted', `line ${r.line}: receipt ${id} is not one of the ${count} receipts ${name} sealed: inserted`, where);
    }
  }
  const editedLeaves = new Set(failed.filter((r) => Number.isInteger(r.leafIndex) && !byLeaf.has(r.leafIndex)).map((r) => r.leafIndex));
  for (let leaf = 0; leaf < count; leaf++) {
    if (byLeaf.has(leaf) || (editedLeaves.has(leaf) && group.length <= count)) continue;
    const before = byLeaf.get(leaf - 1)?.receipt.id;
    const after = byLeaf.get(leaf + 1)?.receipt.id;
    const between = before && after ? ` (between receipts ${before} and ${after})` : before ? ` (after receipt ${before})` : after ? ` (before receipt ${after})` : '';
    report('receipt_missing', `${name} sealed ${count} receipts; leaf ${leaf}${between} is missing from the export`, { ...at, leafIndex: leaf });
  }

  // Order: the genuine receipts must come in leaf order (leaves are sealed in receipt id order).
  const positions = included.map((r) => r.leafIndex);
  const isPermutation = included.length === count && byLeaf.size === count;
  if (isPermutation) {
    const moved = included.filter((r, position) => r.leafIndex !== position);
    if (moved.length) {
      report(
        'receipts_out_of_order',
        `${name}: receipts out of sealed order: ${moved.map((r) => `${r.receipt.id} (line ${r.line}) belongs at leaf ${r.leafIndex}`).join(', ')}`,
        { ...at, receiptIds: moved.map((r) => r.receipt.id) },
      );
    }
  } else {
    for (let i = 1; i < positions.length; i++) {
      if (positions[i] < positions[i - 1]) {
        const [a, b] = [included[i - 1], included[i]];
        report('receipts_out_of_order', `${name}: receipt ${b.receipt.id} (leaf ${b.leafIndex}, line ${b.line}) comes after ${a.receipt.id} (leaf ${a.leafIndex}, line ${a.line})`, {
          ...at,
          receiptIds: [a.receipt.id, b.receipt.id],
        });
      }
    }
  }

  // The checkpoint's own description of what it sealed.
  if (isPermutation && failed.length === 0) {
    const ordered = [...included].sort((a, b) => a.leafIndex - b.leafIndex);
    if (checkpoint.firstReceiptId !== ordered[0].receipt.id || checkpoint.lastReceiptId !== ordered.at(-1).receipt.id) {
      report('checkpoint_mismatch', `${name}: firstReceiptId/lastReceiptId are not its first and last sealed receipts`, at);
    }
    // Belt and braces: the whole tree again, from the receipts in leaf order.
    if (merkleRoot(ordered.map((r) => leafHash(r.receipt))).toString('hex') !== checkpoint.root) {
      report('checkpoint_mismatch', `${name}: the receipts do not hash to its root`, at);
    }
  }
}

/** Verifies one answer of GET .../receipts/:receiptId/proof: `{ receipt, proof, checkpoint }`. */
export function verifyProof(answer, keys) {
  const problems = [];
  const { receipt, proof, checkpoint } = answer ?? {};
  if (!receipt || !proof || !checkpoint) {
    return { ok: false, problems: [{ code: 'malformed', message: 'expected { receipt, proof, checkpoint } as GET .../receipts/:receiptId/proof answers' }] };
  }
  const name = `checkpoint ${checkpoint.sequence} of project ${checkpoint.projectId}`;
  const signature = checkSignature(checkpoint, keys);
  if (signature === 'unknown_key') problems.push({ code: 'unknown_key', message: `${name}: signed by key ${checkpoint.keyId}, which is not among the trusted keys` });
  if (signature === 'bad_signature') problems.push({ code: 'checkpoint_signature_invalid', message: `${name}: the signature does not verify: forged or altered` });
  if (proof.treeSize !== checkpoint.count) problems.push({ code: 'checkpoint_mismatch', message: `proof.treeSize ${proof.treeSize} is not ${name}'s count ${checkpoint.count}` });
  if (!verifyInclusion(receipt, proof.leafIndex, checkpoint.count, proof.path, checkpoint.root)) {
    problems.push({ code: 'receipt_edited', message: `receipt ${receipt.id}: its content and path do not lead to ${name}'s root: not what was sealed` });
  }
  return { ok: problems.length === 0, problems };
}
