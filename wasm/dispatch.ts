/**
 * Which path a batch item takes: the WASM kernel (or the hybrid native-ECB + WASM kernel for
 * AES-GCM), or one node:crypto call per item. Thresholds come from `bench/wasm-crypto.bench.ts`;
 * the figures behind each rule are in bench/README.md ("The dispatch thresholds"). The rule of
 * thumb they encode: node:crypto pays a binding overhead per call, the kernels pay per byte, so
 * small items go to the kernel and large ones to node.
 */

/** A path through which items of a batch can be processed. */
export type CryptoPath = 'wasm' | 'hybrid' | 'node';
/** The batch (non-node) paths. */
export type BatchPath = Exclude<CryptoPath, 'node'>;

/** Primitive families that have their own thresholds. */
export type Primitive =
  | 'gcm'
  | 'gcm-keys'
  | 'sha256'
  | 'sha512'
  | 'sha3'
  | 'hmac-sha256'
  | 'hmac-sha512'
  | 'hkdf';

/** When a batch path beats per-item node:crypto, and which one. */
export interface DispatchRule {
  /** Every batch path the primitive has; a forced path must be one of these or 'node'. */
  readonly paths: readonly BatchPath[];
  /** The batch path for qualifying items. */
  readonly fast: BatchPath;
  /**
   * A different batch path when at most `maxItems` items qualify (it skips a per-batch cost, such
   * as creating a native cipher); in such a batch only items up to its own `maxItemBytes` take it.
   */
  readonly few?: { readonly path: BatchPath; readonly maxItems: number; readonly maxItemBytes: number };
  /** Items up to this many bytes qualify for the batch path (larger ones go to node:crypto). */
  readonly maxItemBytes: number;
  /** Fewer qualifying items than this and the whole batch goes to node:crypto. */
  readonly minItems: number;
}

/**
 * Thresholds measured with bench/wasm-crypto.bench.ts (bench/README.md, "The dispatch thresholds",
 * has the figures, rule by rule). Each size limit sits below the smallest size where the batch
 * path measured under ~1.1× node per item, and each count limit at the smallest batch of 64-byte
 * items that measured ≥ 1.1×, so that no item size or count is slower than node:crypto.
 */
export const DISPATCH_RULES: Readonly<Record<Primitive, DispatchRule>> = {
  // Hybrid for a batch under one key; bitsliced for a few items, where the hybrid path's native
  // cipher costs more than it saves, and so for a single item too (as transit's single encrypt
  // and decrypt are).
  gcm: { paths: ['hybrid', 'wasm'], fast: 'hybrid', few: { path: 'wasm', maxItems: 6, maxItemBytes: 256 }, maxItemBytes: 1536, minItems: 1 },
  // One key per item: bitsliced, as the hybrid path needs a native cipher per item.
  'gcm-keys': { paths: ['wasm', 'hybrid'], fast: 'wasm', maxItemBytes: 256, minItems: 2 },
  // SHA-256 vs crypto.hash: the limit holds for mixed lengths (the multi-buffer engine), the
  // slower of the two kernels; ≤ 240 B is at most 4 blocks.
  sha256: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 240, minItems: 4 },
  // SHA-512 vs crypto.hash: only a one-block message (≤ 111 B) gains.
  sha512: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 111, minItems: 4 },
  sha3: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 512, minItems: 2 },
  'hmac-sha256': { paths: ['wasm'], fast: 'wasm', maxItemBytes: 768, minItems: 3 },
  // HMAC-SHA-512, and HMAC-SHA-384 with it.
  'hmac-sha512': { paths: ['wasm'], fast: 'wasm', maxItemBytes: 768, minItems: 2 },
  // HKDF-SHA-256 with one IKM: even one item gains over hkdfSync (which refuses info over 1 KB).
  hkdf: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 4096, minItems: 1 },
};

/** Item indices split by path: `fast` items take `path`, the others node:crypto. */
export interface BatchPlan {
  readonly path: BatchPath;
  readonly fast: number[];
  readonly node: number[];
}

/**
 * Splits a batch of `count` items between a batch path and node:crypto, by each item's size in
 * bytes. `forced` sends every item one way (tests and benchmarks force each path in turn).
 */
export function planBatch(rule: DispatchRule, count: number, sizeOf: (i: number) => number, forced?: CryptoPath): BatchPlan {
  if (forced !== undefined) {
    if (forced !== 'node' && !rule.paths.includes(forced)) {
      throw new RangeError(`path '${forced}' is not available here (use ${rule.paths.map((p) => `'${p}'`).join(', ')} or 'node')`);
    }
    const all = indices(count);
    return forced === 'node' ? { path: rule.fast, fast: [], node: all } : { path: forced, fast: all, node: [] };
  }
  let qualifying = 0;
  for (let i = 0; i < count; i++) {
    if (sizeOf(i) <= rule.maxItemBytes) qualifying++;
  }
  if (qualifying < rule.minItems) return { path: rule.fast, fast: [], node: indices(count) };
  const few = rule.few !== undefined && qualifying <= rule.few.maxItems ? rule.few : undefined;
  const path = few?.path ?? rule.fast;
  const limit = few?.maxItemBytes ?? rule.maxItemBytes;
  // The usual batch, where every item qualifies, needs no second pass (most of planBatch's cost per item).
  if (qualifying === count && limit >= rule.maxItemBytes) return { path, fast: indices(count), node: [] };
  const fast: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < count; i++) (sizeOf(i) <= limit ? fast : node).push(i);
  return { path, fast, node };
}

function indices(count: number): number[] {
  // Sized up front: growing by push cost three times as much per index (bench/README.md, "The dispatch thresholds").
  const all = new Array<number>(count);
  for (let i = 0; i < count; i++) all[i] = i;
  return all;
}
