export function compressBoth(body: Buffer): { br: Buffer; gzip: Buffer };
export function precompressed(): { name: string; writeBundle(output: { dir?: string; file?: string }, bundle: Record<string, unknown>): void };
