// Types of verify/ledger.mjs for the service's TypeScript (the verifier itself is plain JavaScript).
import type { KeyObject } from 'node:crypto';

export interface SignedCheckpoint {
  projectId: string;
  sequence: number;
  previous: string | null;
  root: string;
  count: number;
  firstReceiptId: string;
  lastReceiptId: string;
  createdAt: string;
  keyId: string;
  signature: string;
}
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid?: string;
}
export const CHECKPOINT_FIELDS: readonly string[];
export function leafHash(receipt: unknown): Buffer;
export function nodeHash(left: Buffer, right: Buffer): Buffer;
export function merkleRoot(leaves: Buffer[]): Buffer;
export function merkleTree(leaves: Buffer[]): { root: Buffer; size: number; path(index: number): Buffer[] };
export function rootFromInclusion(index: number, size: number, leaf: Buffer, path: Buffer[]): Buffer | null;
export function verifyInclusion(receipt: unknown, index: number, size: number, pathHex: string[], rootHex: string): boolean;
export function checkpointMessage(checkpoint: Omit<SignedCheckpoint, 'keyId' | 'signature'>): string;
export function checkpointHash(checkpoint: Omit<SignedCheckpoint, 'keyId' | 'signature'>): string;
export function keyIdOf(jwk: PublicJwk): string;
/** A trusted public key and its validity (ms since the epoch; null: unbounded). */
export interface TrustedKey {
  key: KeyObject;
  notBefore: number | null;
  notAfter: number | null;
  /** Whether the keys document gave notBefore/notAfter at all. */
  validity: boolean;
}
export function readKeys(document: unknown): Map<string, TrustedKey>;
export function checkSignature(checkpoint: SignedCheckpoint, keys: Map<string, TrustedKey>): 'ok' | 'unknown_key' | 'bad_signature';
export function outsideValidity(trusted: TrustedKey, createdAt: string): string | null;
