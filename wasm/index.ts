/**
 * Keywarden's crypto core: batch AES-GCM, HMAC, SHA-2/SHA-3 and HKDF over a constant-time
 * AssemblyScript WASM module (wasm/assembly, built into build/wasm/keywarden.wasm), with node:crypto
 * for the items where it is faster. This is the only typed entry point; other code (the transit
 * engine) calls `await WasmCrypto.load()` once and then the batch methods.
 *
 * Each batch method is a single entry point that picks, per item, a batch kernel or a per-item
 * node:crypto call, by item size and count (wasm/dispatch.ts, thresholds from
 * bench/wasm-crypto.bench.ts). The kernels: WASM (hashes, HMAC, HKDF; AES-GCM with bitsliced AES)
 * and, for AES-GCM under one key, hybrid (one native AES-ECB call over all counter blocks, GHASH,
 * XOR and tag in WASM). A batch crosses the JS↔WASM boundary once (hybrid: counters, the native
 * call, then GHASH/XOR/tag), through a table of 32-byte entries in an arena sized up front.
 * Results come back in input order.
 *
 * Results of one batch are views into one Buffer copied out of the arena, so keeping one result
 * keeps that batch's output buffer alive. The arena is zeroed after every batch.
 */
import { createCipheriv, randomFillSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Arena, Entry, Gather, align16, chunk, type WasmMemory } from './arena.js';
import { encodeRuns } from './base64.js';
import { DISPATCH_RULES, planBatch, type BatchPath, type BatchPlan, type CryptoPath, type DispatchRule } from './dispatch.js';
import { ecbCipherName, gcmCipherName, nodeGcmOpen, nodeGcmSeal, nodeHash, nodeHkdfSha256, nodeHmac } from './node-paths.js';

export { DISPATCH_RULES, planBatch, type BatchPath, type BatchPlan, type CryptoPath, type DispatchRule, type Primitive } from './dispatch.js';
export { encodeRuns } from './base64.js';
export { bufferView } from './arena.js';

/** Hash functions of `hashBatch` and `hash`. */
export type HashAlgorithm = 'sha224' | 'sha256' | 'sha384' | 'sha512' | 'sha3-224' | 'sha3-256' | 'sha3-384' | 'sha3-512';
/** Hash functions of `hmacBatch`. */
export type HmacAlgorithm = 'sha256' | 'sha384' | 'sha512';

/** One AES-GCM encryption: a 12-byte nonce unique under the key, the plaintext, optional AAD. */
export interface GcmSealItem {
  readonly nonce: Uint8Array;
  readonly plaintext: Uint8Array;
  readonly aad?: Uint8Array;
}

/** One AES-GCM decryption: the 12-byte nonce, ciphertext‖tag (16-byte tag), optional AAD. */
export interface GcmOpenItem {
  readonly nonce: Uint8Array;
  readonly ciphertext: Uint8Array;
  readonly aad?: Uint8Array;
}

/** One AES-GCM encryption whose nonce comes from a block of nonces (gcmSealBase64). */
export interface GcmTextItem {
  readonly plaintext: Uint8Array;
  readonly aad?: Uint8Array | undefined;
}

/**
 * Where runGcm's results go: each item's view (null for a failed open) through `deliver`, or, when
 * sealing with the nonces of one block, each item's base64 of nonce ‖ ciphertext ‖ tag in `texts`.
 */
type GcmOutput =
  | { readonly kind: 'views'; readonly deliver: (i: number, out: Buffer | null) => void }
  | { readonly kind: 'base64'; readonly nonces: Uint8Array; readonly texts: string[] };

/** Per-call options of the batch methods. */
export interface BatchOptions {
  /** Sends every item through one path instead of dispatching by size (tests, benchmarks). */
  readonly path?: CryptoPath;
}

/** Options of `WasmCrypto.load`. */
export interface LoadOptions {
  /** Bytes of linear memory reserved for batches; larger batches are cut into chunks. Default 32 MiB (10,000 × 1 KB GCM items). */
  readonly arenaBytes?: number;
  /** Runs every kernel on small batches first so V8 tiers it up (default true; costs a few ms). */
  readonly warmUp?: boolean;
  /** The compiled module; default build/wasm/keywarden.wasm of this package. */
  readonly wasmPath?: string | URL;
}

/** The module's exports (wasm/assembly/index.ts); pointers and lengths are u32. */
interface Kernels {
  readonly memory: WasmMemory;
  heapBase(): number;
  hashBatch(alg: number, table: number, n: number, scratch: number): void;
  hmacBatch(alg: number, table: number, n: number, sharedKey: number, scratch: number): void;
  hkdfSha256Batch(table: number, n: number, salt: number, saltLen: number, outLen: number, sharedIkm: number, scratch: number): void;
  gcmCounters(table: number, n: number, ctr: number, perItemKey: number): number;
  gcmSeal(table: number, n: number, ks: number, perItemKey: number, hashKey: number): void;
  gcmOpen(table: number, n: number, ks: number, perItemKey: number, hashKey: number): void;
  gcmWasm(open: number, table: number, n: number, keys: number, keyLen: number, perItemKey: number, scratch: number): void;
  keyCacheForget(): void;
  /** Where the key cache lies (tests read it through `memory`). */
  keyCacheRegion(): number;
  keyCacheSize(): number;
}

/** Algorithm ids of wasm/assembly/layout.ts, and digest sizes. */
const HASHES: Readonly<Record<HashAlgorithm, { readonly id: number; readonly size: number }>> = {
  sha224: { id: 1, size: 28 },
  sha256: { id: 2, size: 32 },
  sha384: { id: 3, size: 48 },
  sha512: { id: 4, size: 64 },
  'sha3-224': { id: 5, size: 28 },
  'sha3-256': { id: 6, size: 32 },
  'sha3-384': { id: 7, size: 48 },
  'sha3-512': { id: 8, size: 64 },
};

/**
 * The global WebAssembly object, typed locally: the project's lib settings (ES2023, no DOM) do not
 * declare it, and Node 20's types do not either.
 */
const wasmRuntime = (globalThis as unknown as {
  WebAssembly: { instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: object } }> };
}).WebAssembly;

const DEFAULT_ARENA = 32 * 1024 * 1024;
const GCM_TAG = 16;
const GCM_NONCE = 12;
/** Bytes of a prepared GHASH key (wasm/assembly/ghash.ts HKEY_SIZE). */
const GHASH_KEY = 3184;
/** Bytes of one key's bitsliced round keys (wasm/assembly/aes.ts ROUND_KEYS_SIZE). */
const ROUND_KEYS = 15 * 128;
/** Largest HKDF-SHA-256 output (RFC 5869: 255 blocks). */
const HKDF_MAX = 255 * 32;
/** node:crypto's hkdfSync limit on info. */
const NODE_HKDF_INFO_MAX = 1024;
const EMPTY = new Uint8Array(0);
/** A single GCM item up to this many bytes (text and AAD) takes the bitsliced kernel, as the dispatch rule has it. */
const ONE_ITEM_BYTES = DISPATCH_RULES.gcm.few!.maxItemBytes;

function hashRule(alg: HashAlgorithm): DispatchRule {
  if (alg.startsWith('sha3-')) return DISPATCH_RULES.sha3;
  return alg === 'sha224' || alg === 'sha256' ? DISPATCH_RULES.sha256 : DISPATCH_RULES.sha512;
}

/** Key for item `i`: the shared key, or the i-th of per-item keys. */
function keyAt(key: Uint8Array | readonly Uint8Array[], i: number): Uint8Array {
  return key instanceof Uint8Array ? key : key[i]!;
}

/** Bytes of the shared pool small nonce requests draw from. */
const NONCE_POOL_BYTES = 16 * 1024;
let noncePool = Buffer.alloc(0);
let noncePoolUsed = 0;

/**
 * `length` random bytes. A request of up to a quarter of the pool takes the next unused bytes of a
 * pool filled by one randomFillSync (each call of which costs about as much as encrypting a small
 * item: bench/README.md, "The arena"); larger ones get a fill of their own. A used pool is
 * replaced, never refilled in place, so bytes handed out never change or repeat. Nonces are public
 * once used; what matters is that they come from the CSPRNG and are never handed out twice.
 */
function randomPooled(length: number): Buffer {
  if (length > NONCE_POOL_BYTES / 4) return randomFillSync(Buffer.allocUnsafe(length));
  if (noncePoolUsed + length > noncePool.length) {
    noncePool = randomFillSync(Buffer.allocUnsafe(NONCE_POOL_BYTES));
    noncePoolUsed = 0;
  }
  const out = noncePool.subarray(noncePoolUsed, noncePoolUsed + length);
  noncePoolUsed += length;
  return out;
}

function checkNonces(items: readonly { readonly nonce: Uint8Array }[]): void {
  for (const item of items) if (item.nonce.length !== GCM_NONCE) throw new RangeError('GCM nonce must be 12 bytes');
}

function checkKeys(key: Uint8Array | readonly Uint8Array[], count: number, what: string): void {
  if (!(key instanceof Uint8Array) && key.length !== count) {
    throw new RangeError(`${what}: ${key.length} keys for ${count} items`);
  }
}

/**
 * The loaded crypto core: one WASM instance and its arena. Calls are synchronous, so one instance
 * serves a whole event loop; a worker thread loads its own.
 */
export class WasmCrypto {
  /**
   * Items each engine ran since load, by primitive family: what the dispatcher decided (read by
   * sys/metrics; a count per call, nothing per item).
   */
  readonly dispatched: Readonly<Record<'aes-gcm' | 'hmac' | 'hash' | 'hkdf', Record<CryptoPath, number>>> = {
    'aes-gcm': { wasm: 0, hybrid: 0, node: 0 },
    hmac: { wasm: 0, hybrid: 0, node: 0 },
    hash: { wasm: 0, hybrid: 0, node: 0 },
    hkdf: { wasm: 0, hybrid: 0, node: 0 },
  };

  private constructor(
    private readonly kernels: Kernels,
    private readonly arena: Arena,
  ) {}

  /**
   * Compiles and instantiates the module, reserves the arena and (by default) warms the kernels
   * up so the first real batch already runs optimised code.
   */
  static async load(options: LoadOptions = {}): Promise<WasmCrypto> {
    const path = options.wasmPath ?? new URL('../../build/wasm/keywarden.wasm', import.meta.url);
    const { instance } = await wasmRuntime.instantiate(readFileSync(path), {});
    const kernels = instance.exports as unknown as Kernels;
    const crypto = new WasmCrypto(kernels, new Arena(kernels.memory, kernels.heapBase(), options.arenaBytes ?? DEFAULT_ARENA));
    if (options.warmUp ?? true) {
      crypto.warmUp();
      // The warm-up's items are not traffic.
      for (const counts of Object.values(crypto.dispatched)) counts.wasm = counts.hybrid = counts.node = 0;
    }
    return crypto;
  }

  /** `count` random 12-byte GCM nonces (views into one randomNonceBlock). */
  static randomNonces(count: number): Buffer[] {
    const all = WasmCrypto.randomNonceBlock(count);
    return Array.from({ length: count }, (_, i) => all.subarray(i * GCM_NONCE, (i + 1) * GCM_NONCE));
  }

  /** `count` random 12-byte GCM nonces back to back: one `randomFillSync` for a batch, a shared pool for a few. */
  static randomNonceBlock(count: number): Buffer {
    return randomPooled(count * GCM_NONCE);
  }

  /**
   * AES-128/192/256-GCM encryption of every item under `key` (16, 24 or 32 bytes), or under
   * `key[i]` for item i (derived keys). Returns ciphertext‖tag per item, in order.
   */
  gcmEncryptBatch(key: Uint8Array | readonly Uint8Array[], items: readonly GcmSealItem[], options: BatchOptions = {}): Buffer[] {
    checkNonces(items);
    const plan = this.planGcm(key, items.length, (i) => items[i]!.plaintext.length + (items[i]!.aad?.length ?? 0), options);
    const results = new Array<Buffer>(items.length);
    for (const i of plan.node) {
      const item = items[i]!;
      results[i] = nodeGcmSeal(keyAt(key, i), item.nonce, item.plaintext, item.aad);
    }
    if (plan.fast.length > 0) {
      this.runGcm(plan.path, key, plan.fast, (i) => items[i]!.plaintext, (i) => items[i]!, false, {
        kind: 'views',
        deliver: (i, out) => (results[i] = out!),
      });
    }
    return results;
  }

  /**
   * AES-GCM encryption of every item under `key` (or `key[i]`), item i with the nonce at bytes 12i..12i+11 of
   * `nonces`, answered as the standard base64 of nonce ‖ ciphertext ‖ tag per item: the payload
   * of a transit ciphertext. The same as gcmEncryptBatch followed by an encoding, without a
   * Buffer per nonce, per result or per encoding: on the batch paths each item's nonce and output
   * sit together in the arena at offsets that are multiples of 3, so one base64 encoding per
   * 32 KB serves every item in it (wasm/base64.ts).
   */
  gcmSealBase64(key: Uint8Array | readonly Uint8Array[], items: readonly GcmTextItem[], nonces: Uint8Array, options: BatchOptions = {}): string[] {
    if (nonces.length !== items.length * GCM_NONCE) throw new RangeError(`gcmSealBase64: ${nonces.length} nonce bytes for ${items.length} items (12 each)`);
    if (items.length === 1 && key instanceof Uint8Array && options.path === undefined) {
      const only = items[0]!;
      if (only.plaintext.length + (only.aad?.length ?? 0) <= ONE_ITEM_BYTES && (key.length === 16 || key.length === 32)) return [this.sealOneBase64(key, only, nonces)];
    }
    const plan = this.planGcm(key, items.length, (i) => items[i]!.plaintext.length + (items[i]!.aad?.length ?? 0), options);
    const texts = new Array<string>(items.length);
    for (const i of plan.node) {
      const item = items[i]!;
      const nonce = nonces.subarray(i * GCM_NONCE, (i + 1) * GCM_NONCE);
      texts[i] = Buffer.concat([nonce, nodeGcmSeal(keyAt(key, i), nonce, item.plaintext, item.aad)]).toString('base64');
    }
    if (plan.fast.length > 0) {
      this.runGcm(plan.path, key, plan.fast, (i) => items[i]!.plaintext, (i) => items[i]!, false, { kind: 'base64', nonces, texts });
    }
    return texts;
  }

  /**
   * gcmSealBase64 of one small item under one AES-128/256 key: the bitsliced kernel, as a batch of
   * one is dispatched, without the batch's plan, chunking, closures and index arrays (a single-item
   * encrypt is the commonest request, and that machinery cost about a third of its sealing). The
   * arena holds the entry, plaintext, AAD, nonce ‖ ciphertext ‖ tag and key back to back, then the
   * kernel's scratch, which the kernel wipes itself; the rest is wiped here. A key used just before
   * has its schedule and hash key in the kernel's key cache (see forgetKeys).
   */
  private sealOneBase64(key: Uint8Array, item: GcmTextItem, nonce: Uint8Array): string {
    this.dispatched['aes-gcm'].wasm++;
    const { plaintext, aad } = item;
    const a = this.arena;
    a.refresh();
    const table = a.base;
    const textAt = table + Entry.SIZE;
    const aadAt = a.put(textAt, plaintext);
    const nonceAt = aad === undefined ? aadAt : a.put(aadAt, aad);
    const outAt = a.put(nonceAt, nonce);
    const keyAt = outAt + plaintext.length + GCM_TAG;
    const scratch = align16(a.put(keyAt, key));
    a.set(table, 0, Entry.IN, textAt);
    a.set(table, 0, Entry.IN_LEN, plaintext.length);
    a.set(table, 0, Entry.OUT, outAt);
    a.set(table, 0, Entry.A, nonceAt);
    a.set(table, 0, Entry.A_LEN, GCM_NONCE);
    a.set(table, 0, Entry.B, aadAt);
    a.set(table, 0, Entry.B_LEN, aad?.length ?? 0);
    this.kernels.gcmWasm(0, table, 1, keyAt, key.length, 0, scratch);
    a.refresh();
    const text = a.base64(nonceAt, keyAt);
    a.wipe(table, scratch);
    return text;
  }

  /**
   * AES-GCM decryption of every item (ciphertext‖tag) under `key` or `key[i]`. Each tag is
   * verified on its own: an item that fails (tampered ciphertext, tag, nonce or AAD, wrong key,
   * or shorter than a tag) yields null without affecting the others.
   */
  gcmDecryptBatch(key: Uint8Array | readonly Uint8Array[], items: readonly GcmOpenItem[], options: BatchOptions = {}): (Buffer | null)[] {
    checkNonces(items);
    if (items.length === 1 && key instanceof Uint8Array && options.path === undefined) {
      const only = items[0]!;
      if (only.ciphertext.length < GCM_TAG) return [null];
      if (only.ciphertext.length + (only.aad?.length ?? 0) <= ONE_ITEM_BYTES && (key.length === 16 || key.length === 32)) return [this.openOne(key, only)];
    }
    const results = new Array<Buffer | null>(items.length).fill(null);
    const valid: number[] = [];
    items.forEach((item, i) => {
      if (item.ciphertext.length >= GCM_TAG) valid.push(i);
    });
    const plan = this.planGcm(key, items.length, (i) => items[i]!.ciphertext.length + (items[i]!.aad?.length ?? 0), options, valid);
    for (const i of plan.node) {
      const item = items[i]!;
      results[i] = nodeGcmOpen(keyAt(key, i), item.nonce, item.ciphertext, item.aad);
    }
    if (plan.fast.length > 0) {
      this.runGcm(plan.path, key, plan.fast, (i) => items[i]!.ciphertext, (i) => items[i]!, true, {
        kind: 'views',
        deliver: (i, out) => (results[i] = out),
      });
    }
    return results;
  }

  /**
   * gcmDecryptBatch of one small item (ciphertext ‖ tag, at least a tag long) under one AES-128/256
   * key: the bitsliced kernel, as a batch of one is dispatched, without the batch's plan, chunking
   * and closures, as sealOneBase64 seals one. The arena holds the entry, ciphertext ‖ tag, nonce,
   * AAD, plaintext and key back to back, then the kernel's scratch, which the kernel wipes itself;
   * the rest is wiped here.
   */
  private openOne(key: Uint8Array, item: GcmOpenItem): Buffer | null {
    this.dispatched['aes-gcm'].wasm++;
    const { nonce, ciphertext, aad } = item;
    const length = ciphertext.length - GCM_TAG;
    const a = this.arena;
    a.refresh();
    const table = a.base;
    const textAt = table + Entry.SIZE;
    const nonceAt = a.put(textAt, ciphertext);
    const aadAt = a.put(nonceAt, nonce);
    const outAt = aad === undefined ? aadAt : a.put(aadAt, aad);
    const keyAt = outAt + length;
    const scratch = align16(a.put(keyAt, key));
    a.set(table, 0, Entry.IN, textAt);
    a.set(table, 0, Entry.IN_LEN, length);
    a.set(table, 0, Entry.OUT, outAt);
    a.set(table, 0, Entry.A, nonceAt);
    a.set(table, 0, Entry.A_LEN, GCM_NONCE);
    a.set(table, 0, Entry.B, aadAt);
    a.set(table, 0, Entry.B_LEN, aad?.length ?? 0);
    this.kernels.gcmWasm(1, table, 1, keyAt, key.length, 0, scratch);
    a.refresh();
    const opened = a.get(table, 0, Entry.STATUS) === 1 ? a.copyOut(outAt, keyAt) : null;
    a.wipe(table, scratch);
    return opened;
  }

  /**
   * HMAC-SHA-256/384/512 of every input under `key`, or under `key[i]` for input i.
   */
  hmacBatch(alg: HmacAlgorithm, key: Uint8Array | readonly Uint8Array[], inputs: readonly Uint8Array[], options: BatchOptions = {}): Buffer[] {
    checkKeys(key, inputs.length, 'hmacBatch');
    const { id, size } = HASHES[alg];
    const rule = alg === 'sha256' ? DISPATCH_RULES['hmac-sha256'] : DISPATCH_RULES['hmac-sha512'];
    if (options.path === undefined && inputs.length < rule.minItems) {
      // Too few for the batch path: straight to node:crypto (see hashBatch).
      this.dispatched.hmac.node += inputs.length;
      return inputs.map((input, i) => nodeHmac(alg, keyAt(key, i), input));
    }
    const plan = planBatch(rule, inputs.length, (i) => inputs[i]!.length, options.path);
    this.tally('hmac', plan.path, plan.fast.length, plan.node.length);
    const results = new Array<Buffer>(inputs.length);
    for (const i of plan.node) results[i] = nodeHmac(alg, keyAt(key, i), inputs[i]!);
    if (plan.fast.length === 0) return results;

    const shared = key instanceof Uint8Array;
    const a = this.arena;
    // Scratch per key (wasm/assembly/mac.ts, sha2.ts): 2 states + a long-key digest + 2 pads + 2 jobs ≤ 512 bytes.
    const perKey = 512;
    const fixed = 128 + (shared ? align16(key.length) + perKey : 0);
    const costOf = (i: number): number => Entry.SIZE + inputs[i]!.length + size + 32 + (shared ? 0 : keyAt(key, i).length + perKey);
    for (const { items: run, bytes: need } of chunk(plan.fast, a.capacity, fixed, costOf)) {
      const n = run.length;
      const table = a.base;
      a.ensure(table + need);
      let p = table + n * Entry.SIZE;
      for (let k = 0; k < n; k++) {
        const input = inputs[run[k]!]!;
        a.set(table, k, Entry.IN, p);
        a.set(table, k, Entry.IN_LEN, input.length);
        p = a.put(p, input);
        if (!shared || k === 0) {
          const itemKey = keyAt(key, run[k]!);
          a.set(table, k, Entry.A, p);
          a.set(table, k, Entry.A_LEN, itemKey.length);
          p = a.put(p, itemKey);
        }
      }
      const out = p;
      for (let k = 0; k < n; k++) a.set(table, k, Entry.OUT, out + k * size);
      const scratch = align16(out + n * size);
      this.kernels.hmacBatch(id, table, n, shared ? 1 : 0, scratch);
      a.refresh();
      a.deliver(out, size, run, results);
      a.wipe(table, table + need);
    }
    return results;
  }

  /**
   * HMAC-SHA-256 under one key of many messages laid back to back in `data` (message i ends at byte
   * `ends[i]`, and starts where message i − 1 ended), as the digests back to back (32 bytes each).
   * For callers that hold the messages as one encoding (the audit log's strings): one copy into the
   * arena and one kernel call per arena's worth, with no Buffer in or out per message. A message
   * longer than the dispatch rule's limit is hashed by node:crypto, as `hmacBatch` does.
   */
  hmacSha256Packed(key: Uint8Array, data: Uint8Array, ends: ArrayLike<number>): Buffer {
    const n = ends.length;
    const size = 32;
    const digests = Buffer.allocUnsafe(n * size);
    if (n === 0) return digests;
    const rule = DISPATCH_RULES['hmac-sha256'];
    const a = this.arena;
    // Key, scratch and alignment, as hmacBatch reserves them for a shared key.
    const fixed = 128 + align16(key.length) + 512;
    let fast = 0;
    let start = 0;
    while (start < n) {
      // The messages [start, end) whose bytes, table entries and digests fit the arena (at least one).
      const from = start === 0 ? 0 : ends[start - 1]!;
      let end = start;
      let used = fixed;
      while (end < n) {
        const length = ends[end]! - (end === 0 ? 0 : ends[end - 1]!);
        const cost = Entry.SIZE + length + size;
        if (end > start && used + cost > a.capacity) break;
        used += cost;
        end++;
      }
      const count = end - start;
      const to = ends[end - 1]!;
      const table = a.base;
      a.ensure(table + used);
      const u32 = a.u32;
      const input = table + count * Entry.SIZE;
      a.put(input, data.subarray(from, to));
      const keyAtArena = align16(input + (to - from));
      a.put(keyAtArena, key);
      const out = align16(keyAtArena + key.length);
      let rows = 0;
      for (let i = start; i < end; i++) {
        const begin = i === 0 ? 0 : ends[i - 1]!;
        const length = ends[i]! - begin;
        if (length > rule.maxItemBytes) {
          nodeHmac('sha256', key, data.subarray(begin, ends[i]!)).copy(digests, i * size);
          continue;
        }
        const e = (table >>> 2) + rows * 8;
        u32[e + Entry.IN] = input + (begin - from);
        u32[e + Entry.IN_LEN] = length;
        u32[e + Entry.OUT] = out + (i - start) * size;
        u32[e + Entry.A] = keyAtArena;
        u32[e + Entry.A_LEN] = key.length;
        rows++;
      }
      if (rows > 0) {
        this.kernels.hmacBatch(HASHES.sha256.id, table, rows, 1, align16(out + count * size));
        a.refresh();
        // Every message's slot, the node:crypto ones' included, was laid out in order: copy the
        // kernel's digests out around those.
        if (rows === count) digests.set(a.u8.subarray(out, out + count * size), start * size);
        else {
          for (let i = start; i < end; i++) {
            const length = ends[i]! - (i === 0 ? 0 : ends[i - 1]!);
            if (length <= rule.maxItemBytes) digests.set(a.u8.subarray(out + (i - start) * size, out + (i - start + 1) * size), i * size);
          }
        }
      }
      fast += rows;
      a.wipe(table, table + used);
      start = end;
    }
    this.tally('hmac', 'wasm', fast, n - fast);
    return digests;
  }

  /** Digest of every input with `alg`. */
  hashBatch(alg: HashAlgorithm, inputs: readonly Uint8Array[], options: BatchOptions = {}): Buffer[] {
    const { id, size } = HASHES[alg];
    const rule = hashRule(alg);
    if (options.path === undefined && inputs.length < rule.minItems) {
      // Too few for any batch path: straight to node:crypto, so a one-item call costs what node's does.
      this.dispatched.hash.node += inputs.length;
      return inputs.map((input) => nodeHash(alg, input));
    }
    const plan = planBatch(rule, inputs.length, (i) => inputs[i]!.length, options.path);
    this.tally('hash', plan.path, plan.fast.length, plan.node.length);
    const results = new Array<Buffer>(inputs.length);
    for (const i of plan.node) results[i] = nodeHash(alg, inputs[i]!);
    if (plan.fast.length === 0) return results;

    const a = this.arena;
    const fixed = 64;
    const costOf = (i: number): number => Entry.SIZE + inputs[i]!.length + size + 32;
    for (const { items: run, bytes: need } of chunk(plan.fast, a.capacity, fixed, costOf)) {
      const n = run.length;
      const table = a.base;
      a.ensure(table + need);
      const out = a.putAll(table, Entry.IN, run, inputs, table + n * Entry.SIZE);
      a.setSpaced(table, Entry.OUT, n, out, size);
      this.kernels.hashBatch(id, table, n, align16(out + n * size));
      a.refresh();
      a.deliver(out, size, run, results);
      a.wipe(table, table + need);
    }
    return results;
  }

  /** Digest of one input; the same dispatch as a batch of one. */
  hash(alg: HashAlgorithm, input: Uint8Array, options: BatchOptions = {}): Buffer {
    return this.hashBatch(alg, [input], options)[0]!;
  }

  /**
   * HKDF-SHA-256 (RFC 5869) of every (IKM, info) pair: `ikm` shared by all items (extraction then
   * runs once) or `ikm[i]` per item, `infos[i]` per item, one `salt` (default empty) and output
   * `length` (1..8160 bytes) for the batch. Info of any length is accepted; node's own hkdfSync
   * stops at 1024 bytes, so longer infos always take the kernel unless the node path is forced.
   */
  hkdfSha256Batch(
    ikm: Uint8Array | readonly Uint8Array[],
    infos: readonly Uint8Array[],
    length: number,
    salt: Uint8Array = EMPTY,
    options: BatchOptions = {},
  ): Buffer[] {
    checkKeys(ikm, infos.length, 'hkdfSha256Batch');
    if (!Number.isInteger(length) || length < 1 || length > HKDF_MAX) throw new RangeError(`HKDF length must be 1..${HKDF_MAX}`);
    const planned = planBatch(DISPATCH_RULES.hkdf, infos.length, (i) => keyAt(ikm, i).length + infos[i]!.length, options.path);
    // node's hkdfSync refuses info over 1024 bytes (RFC 5869 has no such limit): unless the node
    // path is forced, such items always take the kernel.
    const plan =
      options.path === 'node'
        ? planned
        : {
            fast: [...planned.fast, ...planned.node.filter((i) => infos[i]!.length > NODE_HKDF_INFO_MAX)].sort((x, y) => x - y),
            node: planned.node.filter((i) => infos[i]!.length <= NODE_HKDF_INFO_MAX),
          };
    this.tally('hkdf', 'wasm', plan.fast.length, plan.node.length);
    const results = new Array<Buffer>(infos.length);
    for (const i of plan.node) results[i] = nodeHkdfSha256(keyAt(ikm, i), infos[i]!, length, salt);
    if (plan.fast.length === 0) return results;

    const shared = ikm instanceof Uint8Array;
    const a = this.arena;
    // Scratch (wasm/assembly/mac.ts hkdfSha256Batch): ≤ 512 + info bytes per item, ≤ 512 fixed.
    const fixed = 1024 + align16(salt.length) + (shared ? align16(ikm.length) : 0);
    const costOf = (i: number): number => Entry.SIZE + 512 + length + 2 * infos[i]!.length + (shared ? 0 : keyAt(ikm, i).length);
    for (const { items: run, bytes: need } of chunk(plan.fast, a.capacity, fixed, costOf)) {
      const n = run.length;
      const table = a.base;
      a.ensure(table + need);
      let p = table + n * Entry.SIZE;
      const saltAt = p;
      p = a.put(p, salt);
      for (let k = 0; k < n; k++) {
        const info = infos[run[k]!]!;
        a.set(table, k, Entry.B, p);
        a.set(table, k, Entry.B_LEN, info.length);
        p = a.put(p, info);
        if (!shared || k === 0) {
          const itemIkm = keyAt(ikm, run[k]!);
          a.set(table, k, Entry.IN, p);
          a.set(table, k, Entry.IN_LEN, itemIkm.length);
          p = a.put(p, itemIkm);
        }
      }
      const out = p;
      for (let k = 0; k < n; k++) a.set(table, k, Entry.OUT, out + k * length);
      this.kernels.hkdfSha256Batch(table, n, saltAt, salt.length, length, shared ? 1 : 0, align16(out + n * length));
      a.refresh();
      a.deliver(out, length, run, results);
      a.wipe(table, table + need);
    }
    return results;
  }

  /** Zeroes the whole arena and the key cache (batches already wipe what they used; this is for key retirement). */
  wipe(): void {
    this.arena.wipe(this.arena.base, this.arena.base + this.arena.capacity);
    this.forgetKeys();
  }

  /**
   * Zeroes the kernel's key cache (wasm/assembly/keycache.ts): the last few AES-128/256 keys that
   * the bitsliced GCM path used with one key per call, kept with their round keys and prepared
   * GHASH key so the next call with the same key skips preparing them. The server calls this when
   * it seals; a later call with any key just prepares it again.
   */
  forgetKeys(): void {
    this.kernels.keyCacheForget();
  }

  /**
   * Checks a GCM batch and plans it: item indices (of `subset`, default all) by path. The
   * bitsliced WASM AES does AES-128 and AES-256 with one key length per batch; other batches
   * take the hybrid path instead (or fail, if 'wasm' is forced).
   */
  private planGcm(
    key: Uint8Array | readonly Uint8Array[],
    count: number,
    sizeOf: (i: number) => number,
    options: BatchOptions,
    subset?: readonly number[],
  ): BatchPlan {
    checkKeys(key, count, 'AES-GCM batch');
    const keys = key instanceof Uint8Array ? [key] : key;
    for (const k of keys) gcmCipherName(k);
    const rule = key instanceof Uint8Array ? DISPATCH_RULES.gcm : DISPATCH_RULES['gcm-keys'];
    let plan: BatchPlan;
    if (subset === undefined) {
      plan = planBatch(rule, count, sizeOf, options.path);
    } else {
      const planned = planBatch(rule, subset.length, (k) => sizeOf(subset[k]!), options.path);
      plan = { path: planned.path, fast: planned.fast.map((k) => subset[k]!), node: planned.node.map((k) => subset[k]!) };
    }
    const bitsliced = keys.every((k) => (k.length === 16 || k.length === 32) && k.length === keys[0]!.length);
    if (plan.path === 'wasm' && !bitsliced) {
      if (options.path === 'wasm') throw new RangeError("the 'wasm' GCM path needs AES-128 or AES-256 keys, all of one length");
      plan = { ...plan, path: 'hybrid' };
    }
    this.tally('aes-gcm', plan.path, plan.fast.length, plan.node.length);
    return plan;
  }

  private tally(family: keyof WasmCrypto['dispatched'], path: BatchPath, fast: number, node: number): void {
    const counts = this.dispatched[family];
    counts[path] += fast;
    counts.node += node;
  }

  /**
   * The batch AES-GCM paths for items `indices`. Hybrid: counter blocks from the kernel, one
   * native ECB call per key over them (in place), then XOR, GHASH and tag (or verification) in
   * the kernel. WASM: the same in one kernel call with bitsliced AES, keys copied into the arena.
   * `text(i)` is the plaintext, or ciphertext‖tag when `open`. Results go out as `output` says.
   */
  private runGcm(
    path: BatchPath,
    key: Uint8Array | readonly Uint8Array[],
    indices: readonly number[],
    text: (i: number) => Uint8Array,
    item: (i: number) => { readonly nonce?: Uint8Array; readonly aad?: Uint8Array | undefined },
    open: boolean,
    output: GcmOutput,
  ): void {
    const shared = key instanceof Uint8Array;
    const tagIn = open ? GCM_TAG : 0;
    const packed = output.kind === 'base64' ? output : undefined;
    const a = this.arena;
    const perKeyBlocks = shared ? 0 : 1;
    const blocksOf = (len: number): number => ((len + 15) >>> 4) + 1 + perKeyBlocks;
    const wasm = path === 'wasm';
    // The WASM path also holds the keys, a key pointer per block and, for keys per item, their round
    // keys (ROUND_KEYS); one key's round keys are in the kernel's key cache.
    const keyBytes = wasm ? align16(keyAt(key, 0).length) + (shared ? 0 : ROUND_KEYS) : 0;
    const fixed = 128 + 16 + GHASH_KEY + (shared ? keyBytes : 0);
    // Packed output: up to 2 zero bytes after each item, to the next multiple of 3.
    const costOf = (i: number): number => {
      const len = text(i).length - tagIn;
      return Entry.SIZE + 2 * len + 2 * GCM_TAG + GCM_NONCE + 2 + (item(i).aad?.length ?? 0) + (wasm ? 20 : 16) * blocksOf(len) + (shared ? 0 : keyBytes);
    };
    for (const { items: run, bytes: need } of chunk(indices, a.capacity, fixed, costOf)) {
      const n = run.length;
      const table = a.base;
      a.ensure(table + need);
      let p = table + n * Entry.SIZE;
      const gather = new Gather(a.u8);
      for (let k = 0; k < n; k++) {
        const i = run[k]!;
        const input = text(i);
        const { nonce, aad } = item(i);
        a.set(table, k, Entry.IN, p);
        a.set(table, k, Entry.IN_LEN, input.length - tagIn);
        p = gather.put(p, input);
        a.set(table, k, Entry.A_LEN, GCM_NONCE);
        if (!packed) {
          a.set(table, k, Entry.A, p);
          p = gather.put(p, nonce!);
        }
        a.set(table, k, Entry.B, p);
        a.set(table, k, Entry.B_LEN, aad?.length ?? 0);
        if (aad !== undefined) p = gather.put(p, aad);
      }
      gather.flush();
      const out = p;
      if (packed) {
        // Each item's nonce, then its ciphertext ‖ tag, at offsets from `out` that are multiples of 3.
        const u8 = a.u8;
        let at = 0;
        for (let k = 0; k < n; k++) {
          const i = run[k]!;
          const slot = out + at;
          for (let b = 0, from = i * GCM_NONCE; b < GCM_NONCE; b++) u8[slot + b] = packed.nonces[from + b]!;
          a.set(table, k, Entry.A, slot);
          a.set(table, k, Entry.OUT, slot + GCM_NONCE);
          const length = GCM_NONCE + a.get(table, k, Entry.IN_LEN) + GCM_TAG;
          at += Math.ceil(length / 3) * 3;
          // The (at most 2) bytes up to the next multiple of 3 must be zero; a loop, as fill() is a native call per item.
          for (let z = slot + length; z < out + at; z++) u8[z] = 0;
        }
        p = out + at;
      } else {
        for (let k = 0; k < n; k++) {
          a.set(table, k, Entry.OUT, p);
          p += a.get(table, k, Entry.IN_LEN) + (open ? 0 : GCM_TAG);
        }
      }
      const outEnd = p;
      let end: number;
      if (wasm) {
        const keys = p;
        for (let k = 0; k < (shared ? 1 : n); k++) p = a.put(p, keyAt(key, run[k]!));
        this.kernels.gcmWasm(open ? 1 : 0, table, n, keys, keyAt(key, 0).length, shared ? 0 : 1, align16(p));
        end = table + need;
      } else {
        const ctr = align16(p);
        const ctrEnd = this.kernels.gcmCounters(table, n, ctr, shared ? 0 : 1);
        if (shared) {
          this.keystream(key, ctr, ctrEnd);
        } else {
          let from = ctr;
          for (let k = 0; k < n; k++) {
            const to = from + 16 * blocksOf(a.get(table, k, Entry.IN_LEN));
            this.keystream(keyAt(key, run[k]!), from, to);
            from = to;
          }
        }
        const hashKey = align16(ctrEnd);
        if (open) this.kernels.gcmOpen(table, n, ctr, shared ? 0 : 1, hashKey);
        else this.kernels.gcmSeal(table, n, ctr, shared ? 0 : 1, hashKey);
        end = hashKey + GHASH_KEY;
      }
      if (output.kind === 'base64') this.encodeGcm(table, run, out, output.texts);
      else this.deliverGcm(table, run, out, outEnd, open, output.deliver);
      a.wipe(table, end);
    }
  }

  /** The base64 of each packed item (nonce ‖ ciphertext ‖ tag, see runGcm) of a run, straight from the arena. */
  private encodeGcm(table: number, run: readonly number[], out: number, texts: string[]): void {
    const a = this.arena;
    a.refresh();
    const n = run.length;
    const starts = new Array<number>(n);
    const lengths = new Array<number>(n);
    for (let k = 0; k < n; k++) {
      starts[k] = a.get(table, k, Entry.A) - out;
      lengths[k] = GCM_NONCE + a.get(table, k, Entry.IN_LEN) + GCM_TAG;
    }
    encodeRuns(a.u8, out, starts, lengths, n, texts, (k) => run[k]!);
  }

  /** Copies a GCM run's outputs out of the arena in one go and hands each item its view (or null). */
  private deliverGcm(table: number, run: readonly number[], out: number, outEnd: number, open: boolean, deliver: (i: number, out: Buffer | null) => void): void {
    const a = this.arena;
    a.refresh();
    const all = a.copyOut(out, outEnd);
    for (let k = 0; k < run.length; k++) {
      const at = a.get(table, k, Entry.OUT) - out;
      const len = a.get(table, k, Entry.IN_LEN) + (open ? 0 : GCM_TAG);
      deliver(run[k]!, open && a.get(table, k, Entry.STATUS) !== 1 ? null : all.subarray(at, at + len));
    }
  }

  /** Replaces the counter blocks in [from, to) by their AES encryption: one native ECB call. */
  private keystream(key: Uint8Array, from: number, to: number): void {
    const ecb = createCipheriv(ecbCipherName(key), key, null);
    ecb.setAutoPadding(false);
    const ks = ecb.update(this.arena.u8.subarray(from, to));
    this.arena.u8.set(ks, from);
    ks.fill(0);
  }

  /** Runs every kernel ~20 times on small batches so V8 optimises them before real traffic. */
  private warmUp(): void {
    const key = new Uint8Array(32);
    const inputs = Array.from({ length: 32 }, (_, i) => new Uint8Array(16 + 8 * i));
    const nonces = WasmCrypto.randomNonces(inputs.length);
    const fast = (rule: DispatchRule): BatchOptions => ({ path: rule.fast });
    for (let round = 0; round < 20; round++) {
      const sealed = this.gcmEncryptBatch(key, inputs.map((plaintext, i) => ({ nonce: nonces[i]!, plaintext })), fast(DISPATCH_RULES.gcm));
      this.gcmDecryptBatch(key, sealed.map((ciphertext, i) => ({ nonce: nonces[i]!, ciphertext })), fast(DISPATCH_RULES.gcm));
      this.gcmEncryptBatch(inputs.map(() => key), inputs.map((plaintext, i) => ({ nonce: nonces[i]!, plaintext })), { path: 'wasm' });
      this.hashBatch('sha256', inputs, fast(DISPATCH_RULES.sha256));
      // One length for all: the same-length kernel, with eight lanes and then four.
      this.hashBatch('sha256', inputs.slice(0, 12).map(() => inputs[6]!), fast(DISPATCH_RULES.sha256));
      this.hashBatch('sha512', inputs, fast(DISPATCH_RULES.sha512));
      this.hashBatch('sha3-256', inputs, fast(DISPATCH_RULES.sha3));
      this.hmacBatch('sha256', key, inputs, fast(DISPATCH_RULES['hmac-sha256']));
      this.hmacBatch('sha512', key, inputs, fast(DISPATCH_RULES['hmac-sha512']));
      this.hkdfSha256Batch(key, inputs, 32, EMPTY, fast(DISPATCH_RULES.hkdf));
    }
  }
}
