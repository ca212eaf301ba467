// Receipt ids and where a receipt with a given id can be (docs/scaling.md, "Partitioning"). `receipts` is
// partitioned by month of created_at and keyed (project_id, created_at, id): an id alone is no key. So a
// receipt's id is a uuidv7 whose time is its created_at to the millisecond (the database checks it in every
// partition), and a lookup that knows only an id takes the receipt's time from it and reads one partition.
import { randomFillSync } from 'node:crypto';
import { V7Generator } from 'uuidv7';
import type { Database } from '../db/database.js';

/**
 * The generator's random numbers, filled from the system's CSPRNG 1,024 at a time: its default buffer holds 8, so
 * every third receipt paid a getRandomValues call (2 µs of the consent POST's CPU in a profile, issue 41).
 */
class BufferedRandom {
  private readonly buffer = new Uint32Array(1024);
  private cursor = this.buffer.length;
  nextUint32(): number {
    if (this.cursor === this.buffer.length) {
      randomFillSync(this.buffer);
      this.cursor = 0;
    }
    return this.buffer[this.cursor++]!;
  }
}

const generator = new V7Generator(new BufferedRandom());
const eventIds = new V7Generator(new BufferedRandom());

/** `uuidv7()` on the buffered random numbers above, for the other ids a receipt makes (its outbox event's). */
export const bufferedUuidv7 = (): string => eventIds.generate().toString();

/** A new receipt's id: a uuidv7 of exactly `createdAt`'s millisecond, in order within that millisecond. */
export function receiptId(createdAt: Date): string {
  const ms = createdAt.getTime();
  // No rollback allowance: after a clock that went back (NTP's, a test's) the id takes the new time instead of
  // keeping the later one. A counter overflow (one in 2^42 ids of a millisecond at most) moves the time on:
  // the next try starts the millisecond afresh.
  for (;;) {
    const id = generator.generateOrResetCore(ms, 0).toString();
    if (uuidv7Time(id) === ms) return id;
  }
}

const UUIDV7_TIME = /^([0-9a-f]{8})-([0-9a-f]{4})-7/;

/** The millisecond a uuidv7 id carries, or null for text that is not one (`receipt_id_time()` in SQL says the same). */
export function uuidv7Time(id: string): number | null {
  const match = UUIDV7_TIME.exec(id);
  return match ? parseInt(match[1]! + match[2]!, 16) : null;
}

/** The receipts recorded before partitioning, as the migration measured them (`receipts_legacy()`). */
interface LegacyReceipts {
  /** Every legacy receipt was created before this (the legacy partition's upper bound). */
  before: number;
  /** Their ids' time is at most this far from their created_at (the old code took the two apart)... */
  skewMs: number;
  /** ...unless their id is not a uuidv7 at all (receipts written by hand, imports): then it says nothing. */
  otherIds: boolean;
}

const legacy = new WeakMap<Database, Promise<LegacyReceipts>>();

/** Reads the legacy partition's figures once per database (the server does at start-up, before any request). */
export function legacyReceipts(db: Database): Promise<LegacyReceipts> {
  let known = legacy.get(db);
  if (!known) {
    known = db
      .query<{ before: Date | string; skew_ms: string | number; other_ids: boolean }>('SELECT before, skew_ms, other_ids FROM receipts_legacy()')
      .then(([row]) => ({ before: new Date(row!.before).getTime(), skewMs: Number(row!.skew_ms), otherIds: row!.other_ids }));
    known.catch(() => legacy.delete(db)); // an outage: ask again next time
    legacy.set(db, known);
  }
  return known;
}

/** Where a receipt can be: `createdAt` between `from` and `to`, both inclusive. */
export interface ReceiptWindow {
  id: string;
  from: Date;
  to: Date;
}

// The range PostgreSQL and JavaScript both hold (a legacy skew of a test's moved clock can be years).
const EARLIEST = Date.UTC(1, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);
const clamp = (ms: number) => new Date(Math.min(LATEST, Math.max(EARLIEST, ms)));

/**
 * The created_at window of the receipt each id names, if there can be one: the id's time exactly for every
 * receipt recorded since partitioning; around it by the measured skew for a legacy one; anywhere in the legacy
 * partition for a legacy id that is not a uuidv7. Ids no receipt can have are left out. A query bounded by its
 * id's window reads one partition (two near the legacy boundary) and never misses a receipt.
 */
export async function receiptWindows(db: Database, ids: readonly string[]): Promise<ReceiptWindow[]> {
  const old = await legacyReceipts(db);
  const windows: ReceiptWindow[] = [];
  for (const id of ids) {
    const time = uuidv7Time(id);
    if (time === null) {
      if (old.otherIds) windows.push({ id, from: clamp(EARLIEST), to: clamp(old.before - 1) });
    } else if (time - old.skewMs >= old.before) {
      // A uuidv7 carries 48 bits of milliseconds (to the year 10889): past what the database holds no receipt was
      // written, and such a Date would reach the database as text it refuses (`+010889-…`), failing the request.
      if (time <= LATEST) windows.push({ id, from: new Date(time), to: new Date(time) });
    } else {
      windows.push({ id, from: clamp(time - old.skewMs), to: clamp(time + old.skewMs) });
    }
  }
  return windows;
}
