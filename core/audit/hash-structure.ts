/**
 * The HMAC pass of an audit entry: a deep copy of a request's or response's data with every
 * string replaced by its hash. A body can hold millions of strings (a 32 MiB batch), and every
 * client shares one event loop, so the copy is made in slices: the walk and the hashing each check
 * the clock every few hundred values and give the loop a turn once a slice has run for
 * SLICE_MS. Data that fits one slice — nearly every request — is done at once, without a turn and
 * without a promise. The walk keeps its own stack, so no depth of nesting overflows the call stack.
 */
import type { Hmac } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import { AuditHmac } from './salt.js';

/** How long one slice of the pass may run before the event loop gets a turn, in ms. */
const SLICE_MS = 4;
/** Values walked or hashed between two looks at the clock. */
const CHECK_EVERY = 256;
/** Strings hashed in one call of `AuditHmac.many`. */
const HASH_CHUNK = 1024;
/** A string longer than this (UTF-16 code units) is hashed on its own, fed to the HMAC in pieces this long. */
const LARGE_STRING = 256 * 1024;

/**
 * A deep copy of `value` with every string replaced by its HMAC; numbers, booleans and
 * object keys stay as they are. As in Vault, a string is left raw when the nearest object key
 * above it is in `nonHmacKeys` — for `{"a": ["x"]}` that is `a`; for `{"a": {"b": "x"}}` it is `b`.
 * Values JSON would render differently are first turned into what JSON would write (a Date into
 * its ISO text, bytes into base64, a bigint into its digits, unhashed), so the copy holds plain
 * JSON data only. Without `hmac` (a device that logs raw) strings are copied as they are.
 *
 * Returns the copy itself when it was made within one slice, else a promise of it.
 */
export function hashStructureSliced(value: unknown, hmac: AuditHmac | undefined, nonHmacKeys: readonly string[] = []): unknown {
  const pass = new HashPass(value, hmac, nonHmacKeys);
  return pass.finished() ? pass.result() : pass.resume();
}

/** The same copy made in one go, for small values whose size is known (auth metadata, tests). */
export function hashStructure(value: unknown, hmac: AuditHmac | undefined, nonHmacKeys: readonly string[] = []): unknown {
  const pass = new HashPass(value, hmac, nonHmacKeys, Infinity);
  pass.finished();
  return pass.result();
}

type Container = Record<string, unknown> | unknown[];

/** A container being copied: its source's children (an array's items, an object's entries) and the next one to copy. */
interface Frame {
  readonly out: Container;
  readonly items: readonly unknown[] | undefined;
  readonly entries: ReadonlyArray<readonly [string, unknown]> | undefined;
  /** The nearest object key above an array's items. */
  readonly key: string | undefined;
  next: number;
}

class HashPass {
  private readonly skip: ReadonlySet<string>;
  /** The containers whose children are still being copied, innermost last. */
  private readonly stack: Frame[] = [];
  /** Strings to hash, with where each hash goes. */
  private readonly strings: string[] = [];
  private readonly stringTargets: Container[] = [];
  private readonly stringSlots: Array<string | number> = [];
  private hashed = 0;
  /** A large string being fed to its HMAC: how far. */
  private large: { readonly hmac: Hmac; at: number } | undefined;
  private readonly root: unknown[] = [undefined];
  private sliceStart = 0;

  constructor(
    value: unknown,
    private readonly hmac: AuditHmac | undefined,
    nonHmacKeys: readonly string[],
    private readonly sliceMs = SLICE_MS,
  ) {
    this.skip = new Set(nonHmacKeys);
    this.copy(value, this.root, 0, undefined);
  }

  result(): unknown {
    return this.root[0];
  }

  /** Works until done (true) or until the slice is used up (false). */
  finished(): boolean {
    this.sliceStart = performance.now();
    return this.walk() && this.hash();
  }

  async resume(): Promise<unknown> {
    for (;;) {
      await turn();
      if (this.finished()) return this.result();
    }
  }

  private sliceUsed(): boolean {
    return performance.now() - this.sliceStart > this.sliceMs;
  }

  private walk(): boolean {
    const stack = this.stack;
    let count = 0;
    while (stack.length > 0) {
      if (++count % CHECK_EVERY === 0 && this.sliceUsed()) return false;
      const frame = stack[stack.length - 1]!;
      if (frame.items) {
        if (frame.next === frame.items.length) {
          stack.pop();
          continue;
        }
        const i = frame.next++;
        const item = frame.items[i];
        // JSON writes null for what it cannot write in an array.
        if (item !== undefined && typeof item !== 'function' && typeof item !== 'symbol') this.copy(item, frame.out, i, frame.key);
      } else {
        const entries = frame.entries!;
        if (frame.next === entries.length) {
          stack.pop();
          continue;
        }
        const [k, v] = entries[frame.next++]!;
        this.copy(v, frame.out, k, k);
      }
    }
    return true;
  }

  /** Puts the copy of `node` at `target[slot]`: at once for scalars; a container is created and its children copied by `walk`. */
  private copy(node: unknown, target: Container, slot: string | number, key: string | undefined): void {
    const put = (value: unknown) => ((target as Record<string | number, unknown>)[slot] = value);
    if (typeof node === 'string') {
      if (this.hmac && !(key !== undefined && this.skip.has(key))) {
        // A placeholder keeps the key's place in the object's order until the hash arrives.
        put(null);
        this.strings.push(node);
        this.stringTargets.push(target);
        this.stringSlots.push(slot);
      } else {
        put(node);
      }
      return;
    }
    if (node === null || typeof node === 'number' || typeof node === 'boolean') return void put(node);
    if (typeof node === 'bigint') return void put(node.toString());
    if (node instanceof Uint8Array) return this.copy(Buffer.from(node.buffer, node.byteOffset, node.byteLength).toString('base64'), target, slot, key);
    if (Array.isArray(node)) {
      const out: unknown[] = new Array(node.length).fill(null);
      put(out);
      this.stack.push({ out, items: node, entries: undefined, key, next: 0 });
      return;
    }
    if (typeof node === 'object') {
      const json = (node as { toJSON?: () => unknown }).toJSON;
      if (typeof json === 'function') return this.copy(json.call(node), target, slot, key);
      const entries = Object.entries(node).filter(([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol');
      const out: Record<string, unknown> = {};
      put(out);
      this.stack.push({ out, items: undefined, entries, key, next: 0 });
      return;
    }
    // undefined, functions and symbols: JSON drops them (only reachable at the top).
    put(undefined);
  }

  private hash(): boolean {
    const hmac = this.hmac!;
    const { strings, stringTargets, stringSlots } = this;
    const set = (i: number, hash: string) => ((stringTargets[i] as Record<string | number, unknown>)[stringSlots[i]!] = hash);
    while (this.hashed < strings.length) {
      if (strings[this.hashed]!.length > LARGE_STRING) {
        if (!this.feedLarge(hmac, strings[this.hashed]!)) return false;
        set(this.hashed, AuditHmac.identified(this.large!.hmac));
        this.large = undefined;
        this.hashed++;
      } else {
        let end = this.hashed;
        while (end < strings.length && end - this.hashed < HASH_CHUNK && strings[end]!.length <= LARGE_STRING) end++;
        const hashes = hmac.many(strings.slice(this.hashed, end));
        for (let i = this.hashed; i < end; i++) set(i, hashes[i - this.hashed]!);
        this.hashed = end;
      }
      if (this.hashed < strings.length && this.sliceUsed()) return false;
    }
    return true;
  }

  /** Feeds a large string to its HMAC in pieces; false when the slice ran out first (it goes on from there). */
  private feedLarge(hmac: AuditHmac, text: string): boolean {
    const large = (this.large ??= { hmac: hmac.incremental(), at: 0 });
    while (large.at < text.length) {
      let end = Math.min(text.length, large.at + LARGE_STRING);
      // Never cut between the two halves of a surrogate pair: each piece is encoded as UTF-8 alone.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      large.hmac.update(text.slice(large.at, end), 'utf8');
      large.at = end;
      if (large.at < text.length && this.sliceUsed()) return false;
    }
    return true;
  }
}
