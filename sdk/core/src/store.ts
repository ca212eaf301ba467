// What the core keeps in the app's key-value storage, under keys named for the publishable key. Reads never throw:
// a value that cannot be read or parsed, or has the wrong shape, is "nothing stored" and reported (the caller turns
// it into an error event). Writes never reject either: a failed one is reported the same way. Writes to one key leave in the order they were made, whatever the storage does.
import type { KeyValueStorage } from './public';

export type Slot = 'config' | 'decision' | 'installation' | 'queue' | 'dismissed' | 'elsewhere' | 'vendorList' | 'subject';

/** In memory: the documented default, nothing survives a restart. */
export function memoryStorage(): KeyValueStorage {
  const m = new Map<string, string>();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v), removeItem: (k) => void m.delete(k) };
}

export function createStore(storage: KeyValueStorage, publicKey: string, onUnreadable: (slot: Slot, err: unknown) => void, onUnwritable: (slot: Slot, err: unknown) => void) {
  // The key's random part tells two projects in one app apart (a publishable key is no secret).
  const name = (slot: Slot) => `consent:core:${publicKey.slice(-12)}:${slot}`;
  const chains = new Map<Slot, Promise<unknown>>();
  const chain = (slot: Slot, op: () => unknown) => {
    const next = (chains.get(slot) || Promise.resolve()).then(op, op);
    chains.set(slot, next.catch(() => {}));
    return next;
  };
  return {
    /** The parsed value when `valid` accepts it; otherwise undefined (and reported, unless the slot was empty). */
    async read<T>(slot: Slot, valid: (value: unknown) => boolean): Promise<T | undefined> {
      let text: string | null;
      try {
        text = await storage.getItem(name(slot));
      } catch (err) {
        onUnreadable(slot, err);
        return undefined;
      }
      if (text == null) return undefined;
      try {
        const value = JSON.parse(text);
        if (valid(value)) return value as T;
        throw new Error('unexpected shape');
      } catch (err) {
        onUnreadable(slot, err);
        return undefined;
      }
    },
    /** Never rejects: a storage that is full or gone is reported, and the value lives on in memory for this run. */
    write: (slot: Slot, value: unknown): Promise<void> =>
      chain(slot, () => (value === undefined ? storage.removeItem(name(slot)) : storage.setItem(name(slot), JSON.stringify(value)))).then(
        () => {},
        (err) => onUnwritable(slot, err),
      ),
  };
}

export type Store = ReturnType<typeof createStore>;
