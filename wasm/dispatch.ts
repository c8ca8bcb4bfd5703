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
 * Thresholds measured with bench/wasm-crypto.bench.ts on this machine class (Node 20.20, 2 shared
 * vCPU, AES-NI and SHA-NI in OpenSSL; batches of 1,000, best of interleaved slices). Each size
 * limit sits at or below the largest size where the batch path still measured ≥ 1.15× node per
 * item, and each count limit where a batch of that many 64-byte items measured ≥ 1.1×, so
 * that no item size or count is slower than node:crypto. Figures: ratio batch path / node.
 */
export const DISPATCH_RULES: Readonly<Record<Primitive, DispatchRule>> = {
  // Hybrid: 9.8× at 16 B, 5.7× at 64 B, 2.3× at 384 B, 1.7× (seal) / 1.2× (open) at 512 B,
  // ~0.9–1.3× at 768 B. Bitsliced for ≤ 6 items: at 64 B, 1 item 1.28× (hybrid 0.87×), 4 items
  // 2.2× (1.8×), 8 items 3.0× (3.1×); it falls to 1.0–1.2× at 384 B. A single item goes to node
  // (opening one 64-byte item: 0.95×).
  gcm: { paths: ['hybrid', 'wasm'], fast: 'hybrid', few: { path: 'wasm', maxItems: 6, maxItemBytes: 256 }, maxItemBytes: 512, minItems: 2 },
  // One key per item: bitsliced 6.7× at 16 B, 2.8× at 64 B, 2.3× at 128 B, 1.36× at 384 B,
  // 1.1× at 512 B; one item 1.05×, two 1.5×. The hybrid path needs a native cipher per item (≤ 2.5×).
  'gcm-keys': { paths: ['wasm', 'hybrid'], fast: 'wasm', maxItemBytes: 384, minItems: 2 },
  // 4-lane SHA-256 vs crypto.hash: 3.2× at 16 B, 2.2× at 64 B, 1.4× at 128 B, 1.16× at 256 B,
  // 0.87× at 384 B. Counts at 64 B: 2 items 0.69×, 4 items 1.1×.
  sha256: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 240, minItems: 4 },
  // SHA-512 vs crypto.hash: 2.1× at 64 B, 1.15× at 128 B, 1.2× at 256 B, 0.82× at 384 B.
  // Counts: 2 items 0.9–1.0×, 4 items 1.2×.
  sha512: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 256, minItems: 4 },
  // SHA3-256: 2.5× at 64 B, 1.2× at 384 B, 1.1× at 768 B, 1.0× at 1 KB. Counts: 1 item 0.85–0.99×, 2 items 1.2×.
  sha3: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 768, minItems: 2 },
  // HMAC-SHA-256 vs createHmac: 5.1× at 16 B, 4.0× at 64 B, 2.1× at 384 B, 1.2× at 768 B,
  // 1.1× at 1 KB. Counts: 1 item 0.7×, 2 items 1.0–1.1×, 4 items 1.8–2.0×.
  'hmac-sha256': { paths: ['wasm'], fast: 'wasm', maxItemBytes: 768, minItems: 3 },
  // HMAC-SHA-512 (and -384): 3.3× at 64 B, 1.6× at 384 B, 1.3× at 768 B, 1.0× at 1 KB.
  // Counts: 1 item 1.0–1.1×, 2 items 1.2–1.5×.
  'hmac-sha512': { paths: ['wasm'], fast: 'wasm', maxItemBytes: 768, minItems: 2 },
  // HKDF-SHA-256, one IKM, 32-byte output vs hkdfSync: 20× at 16 B of info, 9× at 256 B,
  // 3.8× at 1 KB (node refuses info over 1 KB). One item 1.5–1.8×.
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
