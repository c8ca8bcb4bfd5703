/**
 * Which path a batch item takes: the WASM kernel (or the hybrid native-ECB + WASM kernel for
 * AES-GCM), or one node:crypto call per item. Thresholds come from `bench/wasm-crypto.bench.ts`
 * run on this machine class (Node 20, 2 vCPU Xeon with AES-NI/SHA-NI); see the numbers beside
 * each rule. The rule of thumb they encode: node:crypto pays ~1–4 µs of binding overhead per call,
 * the kernels pay per byte, so small items go to the kernel and large ones to node.
 */

/** A path through which items of a batch can be processed. */
export type CryptoPath = 'wasm' | 'hybrid' | 'node';

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

/** When the batch path beats per-item node:crypto. */
export interface DispatchRule {
  /** The batch path of this primitive. */
  readonly fast: Exclude<CryptoPath, 'node'>;
  /** Items up to this many bytes take the batch path (larger ones go to node:crypto). */
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
  gcm: { fast: 'hybrid', maxItemBytes: 1024, minItems: 1 },
  'gcm-keys': { fast: 'hybrid', maxItemBytes: 1024, minItems: 1 },
  sha256: { fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  sha512: { fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  sha3: { fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  'hmac-sha256': { fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  'hmac-sha512': { fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
  hkdf: { fast: 'wasm', maxItemBytes: 1024, minItems: 1 },
};

/** Item indices split by path. */
export interface BatchPlan {
  readonly fast: number[];
  readonly node: number[];
}

/**
 * Splits a batch of `count` items between the rule's batch path and node:crypto, by each item's
 * size in bytes. `forced` sends every item one way (tests and benchmarks force each path in turn).
 */
export function planBatch(rule: DispatchRule, count: number, sizeOf: (i: number) => number, forced?: CryptoPath): BatchPlan {
  const all = (): number[] => Array.from({ length: count }, (_, i) => i);
  if (forced !== undefined) {
    if (forced === 'node') return { fast: [], node: all() };
    if (forced !== rule.fast) throw new RangeError(`path '${forced}' is not available here (use '${rule.fast}' or 'node')`);
    return { fast: all(), node: [] };
  }
  const fast: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < count; i++) (sizeOf(i) <= rule.maxItemBytes ? fast : node).push(i);
  if (fast.length < rule.minItems) return { fast: [], node: all() };
  return { fast, node };
}
