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
 * vCPU, AES-NI and SHA-NI in OpenSSL; batches of 1,000, best of interleaved slices, two runs while
 * other work shared the cores, so figures are given as ranges; three runs for the later ones). Each size limit sits below the
 * smallest size where the batch path measured under ~1.1× node per item in either run, and each
 * count limit at the smallest batch of 64-byte items that measured ≥ 1.1×, so that no item size
 * or count is slower than node:crypto. Figures: ratio batch path / node per item.
 */
export const DISPATCH_RULES: Readonly<Record<Primitive, DispatchRule>> = {
  // Hybrid, after the 8-blocks-per-reduction GHASH kernel (wasm-crypto, 5 slices; seal / open vs
  // node per item): 16.0× / 13.5× at 16 B, 11.5× / 10.3× at 64 B, 5.0× / 5.3× at 256 B, 2.2× / 1.9×
  // at 1 KB, 1.8× / 1.3× at 1.5 KB, 1.4× / 1.1× at 2 KB, 1.0× / 0.8× at 3 KB, 0.35× / 0.28× at 16 KB.
  // Bitsliced for ≤ 6 items: at 64 B, 2 items 1.8× (hybrid 1.5×), 3 items 2.4× (1.9×), 4 items
  // 2.5× (2.3×), 8 items 3.1× (3.9×). A single item takes the bitsliced kernel too (one 64-byte
  // item: 1.3× seal, 1.1× open in isolation, earlier runs 0.95–1.2×; inside the server, where each
  // createCipheriv also allocates and collects, a single-item encrypt measured ~25 µs against ~29 µs
  // through node, interleaved in one process).
  gcm: { paths: ['hybrid', 'wasm'], fast: 'hybrid', few: { path: 'wasm', maxItems: 6, maxItemBytes: 256 }, maxItemBytes: 1536, minItems: 1 },
  // One key per item: bitsliced 4.0–6.7× at 16 B, 2.6–3.3× at 64 B, 2.0–2.3× at 128 B, 1.2–1.3× at
  // 256 B, 0.95–1.4× at 384 B (unchanged by the faster GHASH: AES dominates); one item 1.05–1.2×, two 1.5–2.0×. The hybrid path needs a native
  // cipher per item (≤ 2.5×).
  'gcm-keys': { paths: ['wasm', 'hybrid'], fast: 'wasm', maxItemBytes: 256, minItems: 2 },
  // SHA-256 vs crypto.hash, batches of one length (sha256SameLength; 10 slices per cell, load 5–7):
  // 2.8–5.0× at 16 B, 2.9–3.7× at 64 B, 2.0–2.6× at 128 B. Mixed lengths take the multi-buffer
  // engine, about 1.6× the same-length cost at 64 B, which measured 0.96–1.16× at 256 B (5 blocks);
  // ≤ 240 B is at most 4 blocks. Counts at 64 B: 3 items 0.75–1.2×, 4 items 1.1–1.5×.
  sha256: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 240, minItems: 4 },
  // SHA-512 vs crypto.hash: 1.7–2.1× at 64 B (1 block), 0.96–1.2× at 128 B (2 blocks), 0.9–1.2×
  // at 256 B (3 blocks); ≤ 111 B is one block. Counts: 2 items 0.9–1.3×, 4 items 1.2–1.5×.
  sha512: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 111, minItems: 4 },
  // SHA3-256: 2.4–2.5× at 64 B, 1.2–1.8× at 384 B, 1.1–1.2× at 512 B, 1.0–1.1× at 768 B. Counts:
  // 1 item 0.85–0.99×, 2 items 1.2–1.3×.
  sha3: { paths: ['wasm'], fast: 'wasm', maxItemBytes: 512, minItems: 2 },
  // HMAC-SHA-256 vs createHmac: 5.1–5.7× at 16 B, 3.3–4.0× at 64 B, 2.1–2.7× at 384 B, 1.2–1.9× at
  // 768 B, 1.1× at 1 KB. Counts: 1 item 0.6–0.75×, 2 items 1.0–1.1×, 3 items 1.8×.
  'hmac-sha256': { paths: ['wasm'], fast: 'wasm', maxItemBytes: 768, minItems: 3 },
  // HMAC-SHA-512 (and -384): 3.0–3.3× at 64 B, 1.6–1.9× at 384 B, 1.3–1.4× at 768 B, 1.0× at 1 KB.
  // Counts: 1 item 1.0×, 2 items 1.5–1.6×.
  'hmac-sha512': { paths: ['wasm'], fast: 'wasm', maxItemBytes: 768, minItems: 2 },
  // HKDF-SHA-256, one IKM, 32-byte output vs hkdfSync: 20× at 16 B of info, 9–10× at 256 B,
  // 3.8× at 1 KB (node refuses info over 1 KB). One item 1.5–2.1×.
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
  // The usual batch, where every item qualifies, needs no second pass (4 ns of 10 per item saved).
  if (qualifying === count && limit >= rule.maxItemBytes) return { path, fast: indices(count), node: [] };
  const fast: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < count; i++) (sizeOf(i) <= limit ? fast : node).push(i);
  return { path, fast, node };
}

function indices(count: number): number[] {
  // Sized up front: growing by push cost 5.6 ns per index, this 1.8 (half of planBatch's cost).
  const all = new Array<number>(count);
  for (let i = 0; i < count; i++) all[i] = i;
  return all;
}
