// GHASH (NIST SP 800-38D) without tables: the carry-less multiply is done with ordinary integer
// multiplies on operands whose bits are spread apart, so carries land in the gaps and are masked
// off (the "ctmul" idea used by BearSSL; written here from the idea, not its code). It is
// constant-time as long as the multiply is: here WASM SIMD i32x4.mul (x86 pmulld, whose timing
// does not depend on its operands), plus shuffles, shifts and logic at fixed positions; no branch
// or memory index depends on H or the data, only on lengths.
//
// The multiply works on 16-bit pieces, four per i32x4.mul (one per 32-bit lane). A piece is split
// into three classes of bits, spaced three apart (masks 0x9249, 0x2492, 0x4924: bit positions
// 0/1/2 mod 3), so 16×16 is 9 lane products. Why each product is exact: a class has at most 6 bits,
// so a product of two classes has at most 6 terms at any output position; 6 < 8 fits in the 3-bit
// group starting there, so no carry reaches the next position of the same class, and the product
// (< 2^32) fits the lane. XOR of the three products whose classes sum to k (mod 3), masked to class
// k, is class k of the carry-less product. 128×128 is three levels of Karatsuba down to 27 such
// 16×16 products, which fill 7 vectors (one lane spare): 63 i32x4.mul per block, against 144
// scalar i64.mul for the earlier two-level Karatsuba on 32-bit pieces with bits four apart.
//
// Everything after the products is linear, so up to GROUP blocks are folded per Karatsuba
// recombination and reduction: (X ^ B1)·H^n ^ B2·H^(n-1) ^ ... ^ Bn·H, the class sums of all n
// blocks' products added up first (aggregated reduction). The powers H^2..H^GROUP are prepared the
// first time a key has absorbed LAZY_POWERS blocks (so once per batch for a shared key, and not for
// a key used for one short item); blocks are held back (at most GROUP - 1) so the lengths block
// joins the last group.
//
// What this gained over the scalar 32-bit version it replaced, per block and for AES-GCM batches:
// bench/README.md, "The WASM kernels".
//
// Field elements are held as one v128 with the block's bytes reversed, so u64 lane 0 is the low
// and lane 1 the high half of the 128-bit big-endian integer (u16 lane i = bits 16i..16i+15), and
// bit 127 of the integer is the coefficient of x^0 (GCM's reflected order). For reflected operands
// the integer product is the reflected polynomial product shifted right by one; rather than shift
// it back every block, the powers are prepared as H^k·x^-1, so the product comes out aligned.
// Reduction modulo x^128 + x^7 + x^2 + x + 1 is done with shifts, as derived in reduceProducts.

/** GHASH accumulator of the item being processed, in the layout above. */
let X: v128 = i64x2.splat(0);
/** Blocks of the item held back in the key's PEND area (fewer than the key's group size). */
let PENDING: usize = 0;

/** A zero block. */
const ZERO = memory.data(16, 16);

/** Bytes of one prepared power of H: 7 vectors of 16-bit Karatsuba operands × 3 bit classes. */
const POWER_SIZE: usize = 336;
/** Blocks folded per reduction: H^1..H^GROUP are prepared. */
const GROUP: usize = 8;
/**
 * Blocks a key absorbs one at a time before H^2..H^GROUP are prepared for it. Preparing costs about
 * as much as absorbing a few blocks singly and makes every later block cheaper, so it pays from
 * about this many blocks even for a key used for one item (where it breaks even: bench/README.md,
 * "The WASM kernels"); a batch's shared key passes it within a few items.
 */
const LAZY_POWERS: u32 = 16;

// Layout of a prepared key (all of it scratch the caller wipes: gcm.ts clears HKEY_SIZE bytes):
// H^1..H^GROUP prepared, the class-sum accumulators (21 v128), the held-back blocks, then state
// (u32 powers prepared, u32 blocks absorbed singly, 8 spare) and H itself.
const ACC: usize = GROUP * POWER_SIZE;
const PEND: usize = ACC + 336;
const STATE: usize = PEND + GROUP * 16;

/** Bytes of a prepared hash key (see the layout above). */
export const HKEY_SIZE: usize = STATE + 32;

// @ts-ignore: decorator
@inline function reverseBytes(v: v128): v128 {
  return i8x16.shuffle(v, v, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

// The 27 Karatsuba leaves of a 128-bit operand x (u16 pieces c0..c7), three levels deep: x splits
// into L = c0..c3, H = c4..c7, M = L^H; each 64-bit d = d0..d3 of those into d0:d1, d2:d3 and
// (d0^d2):(d1^d3); each 32-bit a:b into a, b, a^b. Per 64-bit d that is d0, d1, d2, d3 ("D"),
// d0^d1, d2^d3, d0^d2, d1^d3 ("E") and d0^d1^d2^d3 ("all"). The 7 vectors, one 16-bit operand per
// 32-bit lane: DL, DH, DM, EL, EH, EM and F = [allL, allM, allH, 0]. The same function of x and of
// H, so the H side is prepared once and loaded.

/** [E of L, E of H] as u16 lanes. */
// @ts-ignore: decorator
@inline function pairXors(x: v128): v128 {
  return v128.xor(i16x8.shuffle(x, x, 0, 2, 0, 1, 4, 6, 4, 5), i16x8.shuffle(x, x, 1, 3, 2, 3, 5, 7, 6, 7));
}

/** F = [allL, allL^allH, allH, 0] from pairXors' result. */
// @ts-ignore: decorator
@inline function allXors(e: v128): v128 {
  // Every u16 lane of L's half becomes allL (d0^d1 ^ d2^d3, and d0^d2 ^ d1^d3), of H's half allH.
  const a = v128.xor(e, i16x8.shuffle(e, e, 1, 0, 3, 2, 5, 4, 7, 6));
  // [allL, allL, 0, 0 | 0, allH, allH, 0] xor its halves swapped: [allL, allM, allH, 0].
  const m = v128.and(a, i16x8(-1, -1, 0, 0, 0, -1, -1, 0));
  return i32x4.extend_low_i16x8_u(v128.xor(m, i64x2.shuffle(m, m, 1, 0)));
}

/**
 * The class products of the four 16-bit lanes of `a` with the prepared leaf at `bp` (its three
 * classes), stored (`first`) or xored into the three accumulators at `acc`: class k gets the
 * class pairs (i, j) with i + j = k mod 3, not yet masked. Unmasked sums are fine: each product is
 * exact at its class's positions and the carries stay in the other classes' positions, so masking
 * the sum of several blocks' products (leafResult, once per group) equals summing masked ones.
 * Going through memory rather than holding 21 sums in registers is deliberate: with everything in
 * locals, V8 (TurboFan) loads all of a block's key vectors up front and spills ~300 vectors per
 * block, which measured slower than the stores in between (bench/README.md, "The WASM kernels").
 */
// @ts-ignore: decorator
@inline function leafProducts(a: v128, bp: usize, acc: usize, first: bool): void {
  const a0 = v128.and(a, i32x4.splat(0x9249));
  const a1 = v128.and(a, i32x4.splat(0x2492));
  const a2 = v128.and(a, i32x4.splat(0x4924));
  const b0 = v128.load(bp, 0);
  const b1 = v128.load(bp, 16);
  const b2 = v128.load(bp, 32);
  let z0 = v128.xor(v128.xor(i32x4.mul(a0, b0), i32x4.mul(a1, b2)), i32x4.mul(a2, b1));
  let z1 = v128.xor(v128.xor(i32x4.mul(a0, b1), i32x4.mul(a1, b0)), i32x4.mul(a2, b2));
  let z2 = v128.xor(v128.xor(i32x4.mul(a0, b2), i32x4.mul(a1, b1)), i32x4.mul(a2, b0));
  if (!first) {
    z0 = v128.xor(z0, v128.load(acc, 0));
    z1 = v128.xor(z1, v128.load(acc, 16));
    z2 = v128.xor(z2, v128.load(acc, 32));
  }
  v128.store(acc, z0, 0);
  v128.store(acc, z1, 16);
  v128.store(acc, z2, 32);
}

/** Adds the leaf products of block x with the prepared power at `hp` to the accumulators at `acc`. */
// @ts-ignore: decorator
@inline function blockProducts(x: v128, hp: usize, acc: usize, first: bool): void {
  const dl = i32x4.extend_low_i16x8_u(x);
  const dh = i32x4.extend_high_i16x8_u(x);
  const e = pairXors(x);
  const el = i32x4.extend_low_i16x8_u(e);
  const eh = i32x4.extend_high_i16x8_u(e);
  leafProducts(dl, hp, acc, first);
  leafProducts(dh, hp + 48, acc + 48, first);
  leafProducts(v128.xor(dl, dh), hp + 96, acc + 96, first);
  leafProducts(el, hp + 144, acc + 144, first);
  leafProducts(eh, hp + 192, acc + 192, first);
  leafProducts(v128.xor(el, eh), hp + 240, acc + 240, first);
  leafProducts(allXors(e), hp + 288, acc + 288, first);
}

/**
 * The four 16×16 products of one leaf vector from its accumulators at `acc`: each class sum masked
 * to its class (0x49249249: positions 0 mod 3, and so on).
 */
// @ts-ignore: decorator
@inline function leafResult(acc: usize): v128 {
  return v128.or(
    v128.or(v128.and(v128.load(acc, 0), i32x4.splat(0x49249249)), v128.and(v128.load(acc, 16), i32x4.splat(<i32>0x92492492))),
    v128.and(v128.load(acc, 32), i32x4.splat(0x24924924)),
  );
}

/**
 * Karatsuba from 16 to 32 bits, two at a time: `r` has the products of the low pieces in u32
 * lanes 0 and 2 and of the high pieces in lanes 1 and 3 (so each u64 lane already holds
 * lo + hi·2^32), `mids` the products of the pieces' xors in lanes 0 and 2. Returns the two 63-bit
 * products as u64 lanes: lo + (mid^lo^hi)·2^16 + hi·2^32.
 */
// @ts-ignore: decorator
@inline function karatsuba32(r: v128, mids: v128): v128 {
  const m = v128.and(v128.xor(v128.xor(r, i64x2.shr_u(r, 32)), mids), i64x2.splat(0xffffffff));
  return v128.xor(r, i64x2.shl(m, 16));
}

/** The accumulated leaf products at `acc` put together (Karatsuba) and reduced: the field element. */
// @ts-ignore: decorator
@inline function reduceProducts(acc: usize): v128 {
  const rdl = leafResult(acc);
  const rdh = leafResult(acc + 48);
  const rdm = leafResult(acc + 96);
  const rel = leafResult(acc + 144);
  const reh = leafResult(acc + 192);
  const rem = leafResult(acc + 240);
  const rf = leafResult(acc + 288);
  // 32-bit level. E lanes are [d0^d1, d2^d3, d0^d2, d1^d3]: lanes 0, 1 are the mids of d0:d1 and
  // d2:d3; lanes 2, 3 (u64 lane 1) are the low and high products of (d0^d2):(d1^d3), whose mid is
  // in F (allL in lane 0, allM in 1, allH in 2).
  const pl = karatsuba32(rdl, i32x4.shuffle(rel, rel, 0, 0, 1, 1));
  const ph = karatsuba32(rdh, i32x4.shuffle(reh, reh, 0, 0, 1, 1));
  const pm = karatsuba32(rdm, i32x4.shuffle(rem, rem, 0, 0, 1, 1));
  const qlh = karatsuba32(i64x2.shuffle(rel, reh, 1, 3), rf);
  const qm = karatsuba32(rem, i32x4.shuffle(rf, rf, 1, 1, 1, 1)); // u64 lane 1 only
  // 64-bit level: [lo, hi] + (mid^lo^hi)·2^32 for L, H (together) and M.
  const midlh = v128.xor(v128.xor(i64x2.shuffle(pl, ph, 0, 2), i64x2.shuffle(pl, ph, 1, 3)), qlh);
  const sl = i64x2.shl(midlh, 32);
  const sr = i64x2.shr_u(midlh, 32);
  const rl = v128.xor(pl, i64x2.shuffle(sl, sr, 0, 2));
  const rh = v128.xor(ph, i64x2.shuffle(sl, sr, 1, 3));
  const midm = v128.xor(v128.xor(pm, i64x2.shuffle(pm, pm, 1, 0)), qm); // u64 lane 1 only
  const rm = v128.xor(pm, i64x2.shuffle(i64x2.shl(midm, 32), i64x2.shr_u(midm, 32), 1, 3));
  // 128-bit level: the 256-bit product v3:v2:v1:v0 = RL + (RM^RL^RH)·2^64 + RH·2^128.
  const zero = i64x2.splat(0);
  const mid = v128.xor(v128.xor(rm, rl), rh);
  const low = v128.xor(rl, i64x2.shuffle(zero, mid, 0, 2)); // [v0, v1]
  const high = v128.xor(rh, i64x2.shuffle(mid, zero, 1, 2)); // [v2, v3]
  // v3:v2 holds the product's terms x^0..x^127 and v1:v0 the terms x^128..x^255, both reflected
  // (already aligned: H·x^-1 makes up for the one-bit offset of the integer product).
  // x^128 = x^7 + x^2 + x + 1, and multiplying by x^k is a right shift by k in reflected form.
  // The bits that shift out (terms that pass x^127 again) are folded back first: G = D + D<<127
  // + D<<126 + D<<121 (only v0's low bits reach v1); then T = G + G>>1 + G>>2 + G>>7, 128-bit
  // shifts, the bits crossing from gh into gl being G<<63, G<<62, G<<57 moved down a lane.
  const k = v128.xor(v128.xor(i64x2.shl(low, 63), i64x2.shl(low, 62)), i64x2.shl(low, 57));
  const g = v128.xor(low, i64x2.shuffle(zero, k, 0, 2));
  const j = v128.xor(v128.xor(i64x2.shl(g, 63), i64x2.shl(g, 62)), i64x2.shl(g, 57));
  const t = v128.xor(
    v128.xor(v128.xor(g, i64x2.shr_u(g, 1)), v128.xor(i64x2.shr_u(g, 2), i64x2.shr_u(g, 7))),
    i64x2.shuffle(j, zero, 1, 2),
  );
  return v128.xor(high, t);
}

/**
 * (x ^ B1)·H^n ^ B2·H^(n-1) ^ ... ^ Bn·H for the n (1..GROUP, powers prepared) blocks at p, p+16,
 * ...: n blocks of GHASH with one Karatsuba recombination and one reduction.
 */
function absorb(x: v128, p: usize, n: usize, hk: usize): v128 {
  const acc = hk + ACC;
  let hp = hk + (n - 1) * POWER_SIZE;
  blockProducts(v128.xor(x, reverseBytes(v128.load(p))), hp, acc, true);
  for (let i: usize = 1; i < n; i++) {
    hp -= POWER_SIZE;
    blockProducts(reverseBytes(v128.load(p + (i << 4))), hp, acc, false);
  }
  return reduceProducts(acc);
}

/** Prepares H^k (field element `h`, layout above) at `hp`: the Karatsuba leaves of H^k·x^-1, each split into its three bit classes. */
function preparePower(h: v128, hp: usize): void {
  const hl = <u64>i64x2.extract_lane(h, 0);
  const hh = <u64>i64x2.extract_lane(h, 1);
  // H·x^-1: x^-1 = x^127 + x^6 + x + 1, so a reflected H shifts left by one and, when its x^0 bit
  // (bit 127) falls out, bits 127, 126, 121 and 0 are added; by mask, not branch.
  const m = 0 - (hh >> 63);
  const sh = ((hh << 1) | (hl >> 63)) ^ (m & 0xc200000000000000);
  const sl = (hl << 1) ^ (m & 1);
  const x = i64x2.replace_lane(i64x2.splat(<i64>sl), 1, <i64>sh);
  const dl = i32x4.extend_low_i16x8_u(x);
  const dh = i32x4.extend_high_i16x8_u(x);
  const e = pairXors(x);
  const el = i32x4.extend_low_i16x8_u(e);
  const eh = i32x4.extend_high_i16x8_u(e);
  spread(hp, dl);
  spread(hp + 48, dh);
  spread(hp + 96, v128.xor(dl, dh));
  spread(hp + 144, el);
  spread(hp + 192, eh);
  spread(hp + 240, v128.xor(el, eh));
  spread(hp + 288, allXors(e));
}

function spread(dst: usize, b: v128): void {
  v128.store(dst, v128.and(b, i32x4.splat(0x9249)), 0);
  v128.store(dst, v128.and(b, i32x4.splat(0x2492)), 16);
  v128.store(dst, v128.and(b, i32x4.splat(0x4924)), 32);
}

/** Prepares hash key H = the 16 bytes at `h` into `hk` (HKEY_SIZE bytes): H^1 only, the other powers on demand. */
export function prepareHashKey(h: usize, hk: usize): void {
  const h1 = reverseBytes(v128.load(h));
  preparePower(h1, hk);
  store<u32>(hk + STATE, 1, 0);
  store<u32>(hk + STATE, 0, 4);
  v128.store(hk + STATE, h1, 16);
}

/**
 * Bytes of the part of a prepared key that outlives a call (keycache.ts keeps it per cached key):
 * H^1..H^GROUP as at `hk`, then the 32 state bytes (powers prepared, a zero count of single
 * blocks, H). The accumulators and held-back blocks are per call and are not kept.
 */
export const SAVED_HKEY_SIZE: usize = GROUP * POWER_SIZE + 32;

/**
 * Copies the prepared key at `hk` to `saved` (SAVED_HKEY_SIZE bytes) when it has more powers
 * prepared than `saved` holds (a wiped `saved` holds none). The power counts depend on lengths only.
 */
export function saveHashKey(hk: usize, saved: usize): void {
  const powers = load<u32>(hk + STATE, 0);
  if (powers <= load<u32>(saved + GROUP * POWER_SIZE, 0)) return;
  memory.copy(saved, hk, <usize>powers * POWER_SIZE);
  memory.copy(saved + GROUP * POWER_SIZE, hk + STATE, 32);
  store<u32>(saved + GROUP * POWER_SIZE, 0, 4);
}

/** Lays a key saved by saveHashKey out at `hk` as prepareHashKey (and preparePowers, if it was saved after them) would. */
export function restoreHashKey(saved: usize, hk: usize): void {
  memory.copy(hk, saved, <usize>load<u32>(saved + GROUP * POWER_SIZE, 0) * POWER_SIZE);
  memory.copy(hk + STATE, saved + GROUP * POWER_SIZE, 32);
}

/** Prepares H^2..H^GROUP at `hk` from H^1: H^(k+1) = H^k·H, one block of GHASH with x = H^k and a zero block. */
function preparePowers(hk: usize): void {
  let hn = v128.load(hk + STATE, 16);
  for (let k: usize = 1; k < GROUP; k++) {
    hn = absorb(hn, ZERO, 1, hk);
    preparePower(hn, hk + k * POWER_SIZE);
  }
  store<u32>(hk + STATE, <u32>GROUP, 0);
}

/** Copies block `i` of the `len` bytes at `p` (`full` whole blocks) to `dst`, zero-padded. */
// @ts-ignore: decorator
@inline function copyBlock(dst: usize, p: usize, i: usize, full: usize, len: usize): void {
  if (i < full) {
    v128.store(dst, v128.load(p + (i << 4)));
  } else {
    v128.store(dst, i64x2.splat(0));
    memory.copy(dst, p + (i << 4), len & 15);
  }
}

/** Starts a new GHASH computation. */
export function ghashReset(): void {
  X = i64x2.splat(0);
  PENDING = 0;
}

/** Absorbs `len` bytes at `p`, the last block zero-padded (AAD and ciphertext are padded separately). */
export function ghashUpdate(p: usize, len: usize, hk: usize): void {
  const blocks = (len + 15) >> 4;
  const full = len >> 4;
  // Every branch here depends on lengths only.
  let group = <usize>load<u32>(hk + STATE, 0);
  if (group < GROUP) {
    const singles = load<u32>(hk + STATE, 4) + <u32>blocks;
    store<u32>(hk + STATE, singles, 4);
    if (singles >= LAZY_POWERS) {
      preparePowers(hk);
      group = GROUP;
    }
  }
  const pend = hk + PEND;
  let x = X;
  let n = PENDING;
  let i: usize = 0;
  // Absorb a group whenever there is one, straight from `p` when nothing is held back; what is
  // left (fewer than `group`) is held back, so the lengths block always fits in the last group.
  while (n + (blocks - i) >= group) {
    if (n == 0 && i + group <= full) {
      x = absorb(x, p + (i << 4), group, hk);
      i += group;
    } else {
      copyBlock(pend + (n << 4), p, i, full, len);
      i++;
      if (++n == group) {
        x = absorb(x, pend, group, hk);
        n = 0;
      }
    }
  }
  for (; i < blocks; i++, n++) copyBlock(pend + (n << 4), p, i, full, len);
  PENDING = n;
  X = x;
}

/** Absorbs the held-back blocks and the lengths block; returns the tag E(K, J0) xor GHASH as a v128 (byte order as stored). */
export function ghashFinish(aadLen: usize, textLen: usize, hk: usize, ekj0: usize): v128 {
  const lengths = i64x2.replace_lane(i64x2.splat(<i64>textLen << 3), 1, <i64>aadLen << 3);
  const n = PENDING;
  v128.store(hk + PEND + (n << 4), reverseBytes(lengths));
  const s = absorb(X, hk + PEND, n + 1, hk);
  X = i64x2.splat(0);
  PENDING = 0;
  return v128.xor(reverseBytes(s), v128.load(ekj0));
}
