/** Prisma's unique-constraint error (P2002), whichever driver adapter raised it. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; cause?: { code?: string }; meta?: { driverAdapterError?: { cause?: { kind?: string } } } };
  return (
    e?.code === 'P2002' ||
    e?.cause?.code === '23505' ||
    e?.meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation'
  );
}
