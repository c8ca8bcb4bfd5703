import { UnavailableError } from '../core/errors.js';
import { afterFolder, compareKeys, validateOp } from './keys.js';
import type { BatchOp, PhysicalStorage, StoredEntry } from './storage.js';

/**
 * The in-memory physical store for tests and throw-away servers: a sorted map. Values are copied on
 * the way in and out, so neither a caller's later writes nor its edits to a returned value can
 * change what is stored — the same guarantee a real store gives.
 */
export class MemoryStorage implements PhysicalStorage {
  readonly kind = 'inmem';
  private readonly values = new Map<string, Uint8Array>();
  /** The keys of `values`, kept sorted with `compareKeys` so `list` can binary-search. */
  private readonly keys: string[] = [];
  private closed = false;

  async get(key: string): Promise<Uint8Array | undefined> {
    this.assertOpen();
    const value = this.values.get(key);
    return value === undefined ? undefined : Uint8Array.from(value);
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    this.assertOpen();
    validateOp({ type: 'put', key, value });
    this.apply({ type: 'put', key, value });
  }

  async delete(key: string): Promise<void> {
    this.assertOpen();
    validateOp({ type: 'delete', key });
    this.apply({ type: 'delete', key });
  }

  async list(prefix: string): Promise<string[]> {
    this.assertOpen();
    const out: string[] = [];
    let i = this.lowerBound(prefix);
    while (i < this.keys.length) {
      const key = this.keys[i]!;
      if (!key.startsWith(prefix)) break;
      const rest = key.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 0) {
        out.push(rest);
        i++;
      } else {
        const folder = rest.slice(0, slash + 1);
        out.push(folder);
        i = this.lowerBound(afterFolder(prefix + folder.slice(0, -1)));
      }
    }
    return out;
  }

  async batch(ops: readonly BatchOp[]): Promise<void> {
    this.assertOpen();
    // Validate everything before touching the map: a bad op must leave nothing half-applied.
    for (const op of ops) validateOp(op);
    for (const op of ops) this.apply(op);
  }

  /** The pairs are taken at the call: values are replaced on write, never changed in place. */
  entries(): AsyncIterable<StoredEntry> {
    this.assertOpen();
    const pairs = this.keys.map((key) => ({ key, value: this.values.get(key)! }));
    return (async function* () {
      for (const { key, value } of pairs) yield { key, value: Uint8Array.from(value) };
    })();
  }

  async replaceAll(entries: AsyncIterable<StoredEntry>): Promise<number> {
    this.assertOpen();
    const next = new Map<string, Uint8Array>();
    for await (const entry of entries) {
      validateOp({ type: 'put', key: entry.key, value: entry.value });
      next.set(entry.key, Uint8Array.from(entry.value));
    }
    this.assertOpen();
    this.values.clear();
    for (const [key, value] of next) this.values.set(key, value);
    this.keys.length = 0;
    this.keys.push(...[...next.keys()].sort(compareKeys));
    return next.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.values.clear();
    this.keys.length = 0;
  }

  private apply(op: BatchOp): void {
    if (op.type === 'put') {
      if (!this.values.has(op.key)) this.keys.splice(this.lowerBound(op.key), 0, op.key);
      this.values.set(op.key, Uint8Array.from(op.value));
    } else if (this.values.delete(op.key)) {
      this.keys.splice(this.lowerBound(op.key), 1);
    }
  }

  /** Index of the first key ≥ `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.keys[mid]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError('storage is closed');
  }
}

