// Types of verify/verify-export.mjs for the service's TypeScript tests.
import type { KeyObject } from 'node:crypto';

export interface Problem {
  code: string;
  message: string;
  line?: number;
  sequence?: number;
  receiptId?: string;
  receiptIds?: string[];
  leafIndex?: number;
}
export const EXPORT_VERSION: number;
export function verifyExport(
  lines: Iterable<string> | AsyncIterable<string>,
  keys: Map<string, KeyObject>,
): Promise<{ ok: boolean; problems: Problem[]; checkpoints: number; receipts: number; header: Record<string, unknown> | null }>;
export function verifyProof(answer: unknown, keys: Map<string, KeyObject>): { ok: boolean; problems: Problem[] };
