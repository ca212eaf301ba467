// Types of verify/verify-export.mjs for the service's TypeScript tests.
import type { Readable } from 'node:stream';
import type { TrustedKey } from './ledger.mjs';

export interface Problem {
  code: string;
  message: string;
  line?: number;
  sequence?: number;
  receiptId?: string;
  receiptIds?: string[];
  leafIndex?: number;
}
export interface Head {
  sequence: number;
  root: string;
}
export interface ExportResult {
  ok: boolean;
  problems: Problem[];
  /** Problems found beyond the LIMITS.problems listed. */
  moreProblems: number;
  checkpoints: number;
  receipts: number;
  header: Record<string, unknown> | null;
  project: string | null;
  first: { sequence: number } | null;
  last: { sequence: number; root: string; createdAt: string } | null;
  startsAtFirst: boolean;
  heads: Array<Head & { found: boolean }>;
  notes: string[];
}
export const EXPORT_VERSION: number;
export const LIMITS: Readonly<{
  leaves: number;
  pathLength: number;
  lineBytes: number;
  depth: number;
  idLength: number;
  sequence: number;
  problems: number;
  recentIds: number;
}>;
export class UnreadableExport extends Error {}
export const LINE_TOO_LONG: unique symbol;
export function boundedLines(stream: Readable | AsyncIterable<Buffer>, maxBytes?: number): AsyncGenerator<string | typeof LINE_TOO_LONG>;
export function parseBounded(text: string, where: string): unknown;
export function verifyExport(
  lines: Iterable<string | typeof LINE_TOO_LONG> | AsyncIterable<string | typeof LINE_TOO_LONG>,
  keys: Map<string, TrustedKey>,
  options?: { heads?: Head[] },
): Promise<ExportResult>;
export function verifyProof(answer: unknown, keys: Map<string, TrustedKey>): { ok: boolean; problems: Problem[] };
