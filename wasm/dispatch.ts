/**
 * Which path a batch item takes: the WASM kernel (or the hybrid native-ECB + WASM kernel for
 * AES-GCM), or one node:crypto call per item. Thresholds come from `bench/wasm-crypto.bench.ts`
 * run on this machine class (Node 20, 2 vCPU Xeon with AES-NI/SHA-NI); see the numbers beside
 * each rule. The rule of thumb they encode: node:crypto pays ~1–4 µs of binding overhead per call,
 * the kernels pay per byte, so small items go to the kernel and large ones to node.
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
 * Measured thresholds (bench/wasm-crypto.bench.ts; µs per item, ours vs node per item, batches of
 * 1,000, Node 20.20, this machine class). Each limit sits below the measured break-even so that no
 * item size is slower than node:crypto.
 */
export const DISPATCH_RULES: Readonly<Record<Primitive, DispatchRule>> = {
  gcm: { paths: ['hybrid', 'wasm'], fast: 'hybrid', few: { path: 'wasm', maxItems: 8, maxItemBytes: 256 }, maxItemBytes: 1024, minItems: 1 },
  'gcm-keys': { paths: ['wasm', 'hybrid'], fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  sha256: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  sha512: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  sha3: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  'hmac-sha256': { paths: ['wasm'], fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  'hmac-sha512': { paths: ['wasm'], fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  hkdf: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
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
  const all = (): number[] => Array.from({ length: count }, (_, i) => i);
  if (forced !== undefined) {
    if (forced === 'node') return { path: rule.fast, fast: [], node: all() };
    if (!rule.paths.includes(forced)) throw new RangeError(`path '${forced}' is not available here (use ${rule.paths.map((p) => `'${p}'`).join(', ')} or 'node')`);
    return { path: forced, fast: all(), node: [] };
  }
  const fast: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < count; i++) (sizeOf(i) <= rule.maxItemBytes ? fast : node).push(i);
  if (fast.length < rule.minItems) return { path: rule.fast, fast: [], node: all() };
  const few = rule.few;
  if (few !== undefined && fast.length <= few.maxItems) {
    return { path: few.path, fast: fast.filter((i) => sizeOf(i) <= few.maxItemBytes), node: all().filter((i) => sizeOf(i) > few.maxItemBytes) };
  }
  return { path: rule.fast, fast, node };
}
