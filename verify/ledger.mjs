// The consent ledger's hashes and signatures (docs/ledger.md), in one small file that needs nothing but
// node:crypto and `canonicalize` (RFC 8785 JSON). The verifier (consent-verify) and the service use the same
// code; the service imports it from here, never the other way round, so anyone can check a ledger with this
// folder alone.
//
// Merkle tree as RFC 6962 / RFC 9162 section 2.1: leaf = SHA-256(0x00 || canonical JSON of the receipt as
// exported), node = SHA-256(0x01 || left || right), a tree of n leaves splits at the largest power of two below n.
import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import canonicalize from 'canonicalize';

/** The fields of a checkpoint that are signed and hashed, in the order the docs list them. */
export const CHECKPOINT_FIELDS = ['projectId', 'sequence', 'previous', 'root', 'count', 'firstReceiptId', 'lastReceiptId', 'createdAt'];

const sha256 = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/** The leaf hash of one receipt (its exported JSON object), as 32 bytes. */
export function leafHash(receipt) {
  return sha256(LEAF, Buffer.from(canonicalize(receipt), 'utf8'));
}

/** An inner node of two 32-byte hashes. */
export function nodeHash(left, right) {
  return sha256(NODE, left, right);
}

/**
 * Every level of the tree, leaves first: an odd last node is carried up unhashed, which gives exactly
 * RFC 6962's tree (its split at the largest power of two) without recursion.
 */
function levels(leaves) {
  if (!leaves.length) throw new Error('a Merkle tree needs at least one leaf');
  const all = [leaves];
  while (all.at(-1).length > 1) {
    const below = all.at(-1);
    const above = [];
    for (let i = 0; i < below.length; i += 2) above.push(i + 1 < below.length ? nodeHash(below[i], below[i + 1]) : below[i]);
    all.push(above);
  }
  return all;
}

/** The root of the tree over these leaf hashes. */
export function merkleRoot(leaves) {
  return levels(leaves).at(-1)[0];
}

/** A whole tree, to give every leaf its inclusion path (RFC 9162 2.1.3.1) without hashing it again per leaf. */
export function merkleTree(leaves) {
  const tree = levels(leaves);
  return {
    root: tree.at(-1)[0],
    size: leaves.length,
    /** The audit path of leaf `index`, bottom up. */
    path(index) {
      if (!Number.isInteger(index) || index < 0 || index >= leaves.length) throw new RangeError(`no leaf ${index} in a tree of ${leaves.length}`);
      const path = [];
      let i = index;
      for (let level = 0; level < tree.length - 1; level++) {
        const sibling = i ^ 1;
        // The last node of an odd level has no sibling: it was carried up as it is.
        if (sibling < tree[level].length) path.push(tree[level][sibling]);
        i >>= 1;
      }
      return path;
    },
  };
}

/**
 * The root that a leaf and its inclusion path lead to (RFC 9162 2.1.3.2), or null when the path cannot
 * belong to a leaf at `index` of a tree of `size` (too long, too short, index out of range).
 */
export function rootFromInclusion(index, size, leaf, path) {
  if (!Number.isInteger(index) || !Number.isInteger(size) || index < 0 || index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

/** Whether a receipt with this inclusion path is the leaf `index` of the tree whose root (hex) is given. */
export function verifyInclusion(receipt, index, size, pathHex, rootHex) {
  if (!Array.isArray(pathHex) || !pathHex.every((p) => typeof p === 'string' && /^[0-9a-f]{64}$/.test(p))) return false;
  const root = rootFromInclusion(index, size, leafHash(receipt), pathHex.map((p) => Buffer.from(p, 'hex')));
  return root !== null && root.toString('hex') === rootHex;
}

/** The signed part of a checkpoint (the eight fields), as its canonical JSON text. */
export function checkpointMessage(checkpoint) {
  return canonicalize(Object.fromEntries(CHECKPOINT_FIELDS.map((field) => [field, checkpoint[field] ?? null])));
}

/** What the next checkpoint names as `previous`: hex SHA-256 of this one's signed part. */
export function checkpointHash(checkpoint) {
  return sha256(Buffer.from(checkpointMessage(checkpoint), 'utf8')).toString('hex');
}

/** The key id of an Ed25519 public key given as a JWK: its RFC 7638 thumbprint (base64url SHA-256). */
export function keyIdOf(jwk) {
  return sha256(Buffer.from(canonicalize({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }), 'utf8')).toString('base64url');
}

/** An ISO 8601 time from a keys document as milliseconds; null stays null (no bound). */
function instant(value, what) {
  if (value === undefined || value === null) return null;
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) throw new Error(`keys: ${what} is not a time: ${JSON.stringify(value).slice(0, 100)}`);
  return ms;
}

/**
 * Public keys by key id, from the document at /.well-known/consent-ledger-keys.json (`{ keys: [JWK] }`) or a
 * bare array of JWKs, each with its validity when the document gives one: `notBefore` (when it began signing;
 * null: before the service's records) and `notAfter` (when a newer key took over; null: the current key).
 * `validity` is false for a key given without either field (an older document): only the chain rule applies.
 * A key whose `kid` is not its thumbprint is refused: ids cannot be chosen to mislead.
 */
export function readKeys(document) {
  const list = Array.isArray(document) ? document : document?.keys;
  if (!Array.isArray(list)) throw new Error('keys: expected { "keys": [JWK, ...] }');
  const keys = new Map();
  for (const jwk of list) {
    if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') {
      throw new Error(`keys: not an Ed25519 public key: ${JSON.stringify(jwk).slice(0, 200)}`);
    }
    const kid = keyIdOf(jwk);
    if (jwk.kid !== undefined && jwk.kid !== kid) throw new Error(`keys: kid ${String(jwk.kid).slice(0, 100)} is not the key's thumbprint (${kid})`);
    const notBefore = instant(jwk.notBefore, `notBefore of key ${kid}`);
    const notAfter = instant(jwk.notAfter, `notAfter of key ${kid}`);
    if (notBefore !== null && notAfter !== null && notAfter < notBefore) throw new Error(`keys: key ${kid} retires (notAfter) before it begins (notBefore)`);
    keys.set(kid, {
      key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' }),
      notBefore,
      notAfter,
      validity: 'notBefore' in jwk || 'notAfter' in jwk,
    });
  }
  return keys;
}

/** 'ok', 'unknown_key' or 'bad_signature' for a checkpoint carrying `keyId` and `signature` (base64). */
export function checkSignature(checkpoint, keys) {
  const trusted = typeof checkpoint.keyId === 'string' ? keys.get(checkpoint.keyId) : undefined;
  if (!trusted) return 'unknown_key';
  if (typeof checkpoint.signature !== 'string') return 'bad_signature';
  const ok = verifySignature(null, Buffer.from(checkpointMessage(checkpoint), 'utf8'), trusted.key, Buffer.from(checkpoint.signature, 'base64'));
  return ok ? 'ok' : 'bad_signature';
}

/**
 * Whether a key may have signed at `createdAt` (a checkpoint's, ISO 8601): null when it may, else why not.
 * A key signs from its notBefore until (not including) its notAfter.
 */
export function outsideValidity(trusted, createdAt) {
  const at = typeof createdAt === 'string' ? Date.parse(createdAt) : NaN;
  if (!Number.isFinite(at)) return 'its createdAt is not a time';
  if (trusted.notBefore !== null && at < trusted.notBefore) return `before the key began signing (notBefore ${new Date(trusted.notBefore).toISOString()})`;
  if (trusted.notAfter !== null && at >= trusted.notAfter) return `after the key was retired (notAfter ${new Date(trusted.notAfter).toISOString()})`;
  return null;
}
