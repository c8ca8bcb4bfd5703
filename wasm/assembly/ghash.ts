// GHASH (NIST SP 800-38D) without tables: the carry-less multiply is done with ordinary integer
// multiplies on operands whose bits are spread four apart, so carries land in the gaps and are
// masked off (the "ctmul" idea used by BearSSL; written here from the idea, not its code). This is
// constant-time as long as i64.mul is, which holds for imul on current x86-64. A 32×32 product
// has at most 8 terms per output bit, which fits the 4-bit gaps, so each 32-bit product is exact;
// 128×128 is two levels of Karatsuba (9 such products). Measured on this machine class:
// ~300 MB/s for a ctmul GHASH (reference/wasm-crypto.md §2), which is why GCM items above about
// 1 KB go to node:crypto.
//
// Field elements are held as two big-endian u64 (hi = bytes 0..7), so bit 127 of the integer is
// the coefficient of x^0 (GCM's reflected order). For reflected operands the integer product
// is the reflected polynomial product shifted right by one; we shift it back and reduce modulo
// x^128 + x^7 + x^2 + x + 1 with shifts, as derived in the comments of mulH.

const M0: u64 = 0x1111111111111111;
const M1: u64 = 0x2222222222222222;
const M2: u64 = 0x4444444444444444;
const M3: u64 = 0x8888888888888888;

/** Result of mulH. */
let ZH: u64 = 0;
let ZL: u64 = 0;
/** GHASH accumulator of the item being processed. */
let XH: u64 = 0;
let XL: u64 = 0;

const PARTIAL = memory.data(16, 16);

/** Bytes of a prepared hash key: 9 32-bit operands × 4 masked copies × u64. */
export const HKEY_SIZE: usize = 288;

function spread(dst: usize, b: u64): void {
  store<u64>(dst, b & M0, 0);
  store<u64>(dst, b & M1, 8);
  store<u64>(dst, b & M2, 16);
  store<u64>(dst, b & M3, 24);
}

function spread64(dst: usize, b: u64): void {
  const lo = b & 0xffffffff;
  const hi = b >> 32;
  spread(dst, lo);
  spread(dst + 32, hi);
  spread(dst + 64, lo ^ hi);
}

/** Prepares hash key H = the 16 bytes at `h` into `hk` (HKEY_SIZE bytes): the masked copies of its Karatsuba operands. */
export function prepareHashKey(h: usize, hk: usize): void {
  const v = i8x16.shuffle(v128.load(h), v128.load(h), 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
  const hh = i64x2.extract_lane(v, 0);
  const hl = i64x2.extract_lane(v, 1);
  spread64(hk, hl);
  spread64(hk + 96, hh);
  spread64(hk + 192, hl ^ hh);
}

/** Carry-less product of a 32-bit `a` with the prepared 32-bit operand at `bp`: 63 exact bits. */
// @ts-ignore: decorator
@inline function clmul32(a: u64, bp: usize): u64 {
  const a0 = a & M0;
  const a1 = a & M1;
  const a2 = a & M2;
  const a3 = a & M3;
  const b0 = load<u64>(bp, 0);
  const b1 = load<u64>(bp, 8);
  const b2 = load<u64>(bp, 16);
  const b3 = load<u64>(bp, 24);
  const z0 = (a0 * b0) ^ (a1 * b3) ^ (a2 * b2) ^ (a3 * b1);
  const z1 = (a0 * b1) ^ (a1 * b0) ^ (a2 * b3) ^ (a3 * b2);
  const z2 = (a0 * b2) ^ (a1 * b1) ^ (a2 * b0) ^ (a3 * b3);
  const z3 = (a0 * b3) ^ (a1 * b2) ^ (a2 * b1) ^ (a3 * b0);
  return (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3);
}

let PH: u64 = 0;
let PL: u64 = 0;

/** 64×64 carry-less product of `a` with a prepared 64-bit operand (3 masked 32-bit operands) into PH:PL. */
// @ts-ignore: decorator
@inline function clmul64(a: u64, bp: usize): void {
  const lo = a & 0xffffffff;
  const hi = a >> 32;
  const p0 = clmul32(lo, bp);
  const p2 = clmul32(hi, bp + 32);
  const p1 = clmul32(lo ^ hi, bp + 64) ^ p0 ^ p2;
  PH = p2 ^ (p1 >> 32);
  PL = p0 ^ (p1 << 32);
}

/** (xh:xl) · H in GF(2^128) into ZH:ZL. */
function mulH(xh: u64, xl: u64, hk: usize): void {
  clmul64(xl, hk);
  const q0h = PH;
  const q0l = PL;
  clmul64(xh, hk + 96);
  const q2h = PH;
  const q2l = PL;
  clmul64(xl ^ xh, hk + 192);
  const q1h = PH ^ q0h ^ q2h;
  const q1l = PL ^ q0l ^ q2l;
  // 256-bit product w3:w2:w1:w0, then shifted left by one to undo the reflection offset.
  const w3 = q2h;
  const w2 = q2l ^ q1h;
  const w1 = q1l ^ q0h;
  const w0 = q0l;
  const v3 = (w3 << 1) | (w2 >> 63);
  const v2 = (w2 << 1) | (w1 >> 63);
  const v1 = (w1 << 1) | (w0 >> 63);
  const v0 = w0 << 1;
  // v3:v2 holds the product's terms x^0..x^127 and v1:v0 the terms x^128..x^255, both reflected.
  // x^128 = x^7 + x^2 + x + 1, and multiplying by x^k is a right shift by k in reflected form.
  // The bits that shift out (terms that pass x^127 again) are folded back first: G = D + D<<127
  // + D<<126 + D<<121; then T = G + G>>1 + G>>2 + G>>7.
  const gh = v1 ^ (v0 << 63) ^ (v0 << 62) ^ (v0 << 57);
  const gl = v0;
  const th = gh ^ (gh >> 1) ^ (gh >> 2) ^ (gh >> 7);
  const tl = gl ^ ((gl >> 1) | (gh << 63)) ^ ((gl >> 2) | (gh << 62)) ^ ((gl >> 7) | (gh << 57));
  ZH = v3 ^ th;
  ZL = v2 ^ tl;
}

/** Starts a new GHASH computation. */
export function ghashReset(): void {
  XH = 0;
  XL = 0;
}

/** Absorbs `len` bytes at `p`, the last block zero-padded (AAD and ciphertext are padded separately). */
export function ghashUpdate(p: usize, len: usize, hk: usize): void {
  let off: usize = 0;
  for (; off + 16 <= len; off += 16) {
    const v = i8x16.shuffle(v128.load(p + off), v128.load(p + off), 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
    mulH(XH ^ i64x2.extract_lane(v, 0), XL ^ i64x2.extract_lane(v, 1), hk);
    XH = ZH;
    XL = ZL;
  }
  if (off < len) {
    v128.store(PARTIAL, i64x2.splat(0));
    memory.copy(PARTIAL, p + off, len - off);
    const v = i8x16.shuffle(v128.load(PARTIAL), v128.load(PARTIAL), 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
    mulH(XH ^ i64x2.extract_lane(v, 0), XL ^ i64x2.extract_lane(v, 1), hk);
    XH = ZH;
    XL = ZL;
    v128.store(PARTIAL, i64x2.splat(0));
  }
}

/** Absorbs the lengths block and returns the tag E(K, J0) xor GHASH as a v128 (byte order as stored). */
export function ghashFinish(aadLen: usize, textLen: usize, hk: usize, ekj0: usize): v128 {
  mulH(XH ^ (<u64>aadLen << 3), XL ^ (<u64>textLen << 3), hk);
  XH = 0;
  XL = 0;
  const s = i64x2(<i64>ZH, <i64>ZL);
  const sBytes = i8x16.shuffle(s, s, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
  return v128.xor(sBytes, v128.load(ekj0));
}
