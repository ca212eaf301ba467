// The page's window, as stub.js's files (stub.ts) and what they share with tcf.js and integrations.js use it: one
// binding in the bundle (stub.js has at most 1 KiB min+gzip), untyped because the globals it carries are the
// vendors' and the IAB's, whatever shape their scripts gave them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const w = window as any;
