import type { Prisma, PrismaClient } from '../generated/prisma/client.js';

/** Prisma outside a transaction (the pool) or inside one (one connection): reads that work on either take this. */
export type Db = PrismaClient | Prisma.TransactionClient;

/**
 * Independent reads, at once on the pool (each borrows a connection of its own) and one after another inside
 * a transaction. A transaction is one connection, which answers one query at a time anyway; sending it a
 * second while the first runs is what node-postgres deprecates ("client.query() when the client is already
 * executing a query") and pg@9 removes. A transaction client is the one without `$connect`.
 */
export async function readTogether<const T extends readonly unknown[]>(
  db: Db,
  reads: { readonly [K in keyof T]: () => PromiseLike<T[K]> },
): Promise<T> {
  if ('$connect' in db) return (await Promise.all(reads.map((read) => read()))) as unknown as T;
  const results: unknown[] = [];
  for (const read of reads) results.push(await read());
  return results as unknown as T;
}
