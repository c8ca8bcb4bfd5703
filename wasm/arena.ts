/**
 * The loader's view of the module's linear memory: one arena from the module's heap base, sized up
 * front for the largest batch, so a normal batch never grows memory (a grow costs far more than a
 * batch, bench/README.md "The arena", and detaches every view). A batch that needs more is cut into
 * arena-sized chunks.
 */

const PAGE = 65536;

/** The parts of WebAssembly.Memory the loader uses. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** Rounds up to a multiple of 16 (v128 kernels prefer aligned tables and scratch). */
export function align16(n: number): number {
  return (n + 15) & ~15;
}

/** Writes entries of the kernels' 32-byte descriptor table (wasm/assembly/layout.ts). */
export const Entry = {
  SIZE: 32,
  IN: 0,
  IN_LEN: 1,
  OUT: 2,
  A: 3,
  A_LEN: 4,
  B: 5,
  B_LEN: 6,
  STATUS: 7,
} as const;

/**
 * A Buffer over part of another Buffer's memory. Node's own Buffers are instances of an internal
 * Uint8Array subclass whose prototype is Buffer.prototype; this is the same construction, so the
 * results are Buffers (instanceof, Buffer.isBuffer, every Buffer method). It exists because
 * `subarray` and `Buffer.from(arrayBuffer, offset, length)` cost about as much per view as the
 * SHA-256 kernel spends on a 64-byte item, and this a fraction of it (bench/README.md, "The
 * arena").
 */
class ResultView extends Uint8Array {}
Object.setPrototypeOf(ResultView.prototype, Buffer.prototype as Buffer);

/** A Buffer over `length` bytes of `buffer` from `offset`, made as cheaply as the arena's results (see ResultView). */
export function bufferView(buffer: ArrayBuffer, offset: number, length: number): Buffer {
  return new ResultView(buffer, offset, length) as unknown as Buffer;
}

export class Arena {
  /** First usable byte. */
  readonly base: number;
  /** Usable bytes from `base`. */
  readonly capacity: number;
  u8!: Uint8Array;
  u32!: Uint32Array;
  /** The same memory as a Buffer, for encoding out of it without a view per call. */
  private bytes!: Buffer;
  private buffer: ArrayBuffer | undefined;

  constructor(private readonly memory: WasmMemory, heapBase: number, capacity: number) {
    this.base = align16(heapBase);
    this.capacity = align16(capacity);
    this.ensure(this.base + this.capacity);
  }

  /** Makes [0, end) addressable, growing memory only if needed. */
  ensure(end: number): void {
    const have = this.memory.buffer.byteLength;
    if (end > have) this.memory.grow(Math.ceil((end - have) / PAGE));
    this.refresh();
  }

  /** Re-creates the views if memory grew (a kernel may grow it as a guard). */
  refresh(): void {
    const buffer = this.memory.buffer;
    if (this.buffer !== buffer) {
      this.buffer = buffer;
      this.u8 = new Uint8Array(buffer);
      this.u32 = new Uint32Array(buffer);
      this.bytes = Buffer.from(buffer);
    }
  }

  /** Sets field `field` of entry `index` of the table at `table`. */
  set(table: number, index: number, field: number, value: number): void {
    this.u32[(table >>> 2) + index * 8 + field] = value;
  }

  get(table: number, index: number, field: number): number {
    return this.u32[(table >>> 2) + index * 8 + field]!;
  }

  /**
   * Copies `inputs[run[k]]` back to back from `at` and points field `field` (and `field + 1`, its
   * length) of entry k of the table at `table` to it; returns the address after the last one.
   */
  putAll(table: number, field: number, run: readonly number[], inputs: readonly Uint8Array[], at: number): number {
    const { u8, u32 } = this;
    let p = at;
    for (let k = 0, e = (table >>> 2) + field; k < run.length; k++, e += 8) {
      const input = inputs[run[k]!]!;
      u32[e] = p;
      u32[e + 1] = input.length;
      u8.set(input, p);
      p += input.length;
    }
    return p;
  }

  /** Sets field `field` of entries 0..count-1 of the table at `table` to `from`, `from + step`, … */
  setSpaced(table: number, field: number, count: number, from: number, step: number): void {
    const u32 = this.u32;
    for (let k = 0, e = (table >>> 2) + field; k < count; k++, e += 8) u32[e] = from + k * step;
  }

  /** Copies `bytes` to `at` and returns the address after them. */
  put(at: number, bytes: Uint8Array): number {
    this.u8.set(bytes, at);
    return at + bytes.length;
  }

  /** Standard base64 (with padding) of [from, to). */
  base64(from: number, to: number): string {
    return this.bytes.toString('base64', from, to);
  }

  /** One copy of [from, to) out of the arena. */
  copyOut(from: number, to: number): Buffer {
    return Buffer.from(this.u8.subarray(from, to));
  }

  /**
   * Copies `run.length` results of `size` bytes each, laid out back to back from `from`, out of the
   * arena in one copy, and stores result k as a view into that copy at `results[run[k]]`.
   */
  deliver(from: number, size: number, run: readonly number[], results: Buffer[]): void {
    const { buffer } = this.u8.slice(from, from + run.length * size);
    for (let k = 0; k < run.length; k++) results[run[k]!] = bufferView(buffer, k * size, size);
  }

  /** Zeroes [from, to): keys, plaintexts, keystream and results never outlive their batch here. */
  wipe(from: number, to: number): void {
    this.u8.fill(0, from, to);
  }
}

/**
 * Copies byte arrays to consecutive arena addresses, joining those that lie back to back in one
 * buffer into one copy: a batch's plaintexts, decoded into one Buffer, go in with one native call
 * instead of one each (bench/README.md, "The arena"). `flush` before the kernel reads them.
 */
export class Gather {
  private source: ArrayBufferLike | undefined;
  private from = 0;
  private end = 0;
  private at = 0;

  constructor(private readonly u8: Uint8Array) {}

  /** Copies `bytes` to `at`, now or with the copies it continues; returns the address after them. */
  put(at: number, bytes: Uint8Array): number {
    const length = bytes.length;
    if (bytes.buffer === this.source && bytes.byteOffset === this.end && at === this.at + (this.end - this.from)) {
      this.end += length;
      return at + length;
    }
    this.flush();
    this.source = bytes.buffer;
    this.from = bytes.byteOffset;
    this.end = this.from + length;
    this.at = at;
    return at + length;
  }

  flush(): void {
    if (this.source !== undefined && this.end > this.from) this.u8.set(new Uint8Array(this.source, this.from, this.end - this.from), this.at);
    this.source = undefined;
  }
}

/** A run of item indices processed in one kernel call, and the arena bytes it needs. */
export interface Run {
  readonly items: readonly number[];
  readonly bytes: number;
}

/**
 * Cuts `items` (indices) into consecutive runs whose arena cost (`fixedCost` plus each item's
 * `costOf`) fits `capacity`. A single item larger than the arena gets a run of its own; the caller
 * grows memory for it.
 */
export function chunk(items: readonly number[], capacity: number, fixedCost: number, costOf: (i: number) => number): Run[] {
  const runs: Run[] = [];
  let start = 0;
  let used = fixedCost;
  for (let k = 0; k < items.length; k++) {
    const cost = costOf(items[k]!);
    if (k > start && used + cost > capacity) {
      runs.push({ items: items.slice(start, k), bytes: used });
      start = k;
      used = fixedCost;
    }
    used += cost;
  }
  // A batch that fits (the usual case) is one run over `items` itself, not a copy.
  if (items.length > start) runs.push({ items: start === 0 ? items : items.slice(start), bytes: used });
  return runs;
}
