// Bitsliced AES-128/256 encryption (FIPS 197) in v128, eight blocks per pass, constant-time: no
// table lookups and no data-dependent branches. Used by the all-WASM GCM path (gcm.ts gcmWasm),
// which dispatch picks where the hybrid path's native ECB call per key costs more than it saves:
// batches with one key per item (derived keys) and very small batches. A key's schedule costs a
// few blocks' worth (bench/README.md, "The WASM kernels"), so gcmWasm keeps the schedules of the
// last few keys it used alone (keycache.ts).
//
// Layout (ours): eight 16-byte blocks become eight v128 "planes"; byte lane r of plane j holds bit
// j of byte r of every block, block b in bit b. Byte positions stay byte lanes, so ShiftRows and
// the MixColumns rotations are single i8x16.shuffle ops per plane, and a round key for a mix of
// keys is assembled per lane with bitselect. Round keys are stored "replicated": each bit of the
// key byte spread to all eight lanes (0x00 or 0xff), so one key schedule serves any lane.
// The S-box is the Boyar–Peralta depth-16 circuit (113 gates + 4 XNOR, ePrint 2011/332), checked
// against the S-box for all 256 inputs when it was transcribed.

/** The eight planes of the current pass. */
const PLANES = memory.data(8 * 16, 16);
/** Round keys of a pass whose lanes use several keys. */
const MIXED_KEYS = memory.data(15 * 128, 16);
/** MixColumns' rotated terms plus round key, per plane. */
const MIXED_TMP = memory.data(8 * 16, 16);
/** Plain expanded keys during key expansion: word i of four keys, one per u32 lane. */
const WORDS4 = memory.data(60 * 16, 16);

/** Bytes of one replicated round-key set: (rounds + 1) × 8 planes × 16 bytes, for AES-256. */
export const ROUND_KEYS_SIZE: usize = 15 * 128;

// @ts-ignore: decorator
@inline function plane(j: usize): v128 {
  return v128.load(PLANES + (j << 4));
}

// @ts-ignore: decorator
@inline function setPlane(j: usize, v: v128): void {
  v128.store(PLANES + (j << 4), v);
}

/** Applies the S-box to all 128 bytes held in the planes. */
function subBytes(): void {
  const u0 = plane(7);
  const u1 = plane(6);
  const u2 = plane(5);
  const u3 = plane(4);
  const u4 = plane(3);
  const u5 = plane(2);
  const u6 = plane(1);
  const u7 = plane(0);
  const t1 = v128.xor(u0, u3);
  const t2 = v128.xor(u0, u5);
  const t3 = v128.xor(u0, u6);
  const t4 = v128.xor(u3, u5);
  const t5 = v128.xor(u4, u6);
  const t6 = v128.xor(t1, t5);
  const t7 = v128.xor(u1, u2);
  const t8 = v128.xor(u7, t6);
  const t9 = v128.xor(u7, t7);
  const t10 = v128.xor(t6, t7);
  const t11 = v128.xor(u1, u5);
  const t12 = v128.xor(u2, u5);
  const t13 = v128.xor(t3, t4);
  const t14 = v128.xor(t6, t11);
  const t15 = v128.xor(t5, t11);
  const t16 = v128.xor(t5, t12);
  const t17 = v128.xor(t9, t16);
  const t18 = v128.xor(u3, u7);
  const t19 = v128.xor(t7, t18);
  const t20 = v128.xor(t1, t19);
  const t21 = v128.xor(u6, u7);
  const t22 = v128.xor(t7, t21);
  const t23 = v128.xor(t2, t22);
  const t24 = v128.xor(t2, t10);
  const t25 = v128.xor(t20, t17);
  const t26 = v128.xor(t3, t16);
  const t27 = v128.xor(t1, t12);
  const m1 = v128.and(t13, t6);
  const m2 = v128.and(t23, t8);
  const m3 = v128.xor(t14, m1);
  const m4 = v128.and(t19, u7);
  const m5 = v128.xor(m4, m1);
  const m6 = v128.and(t3, t16);
  const m7 = v128.and(t22, t9);
  const m8 = v128.xor(t26, m6);
  const m9 = v128.and(t20, t17);
  const m10 = v128.xor(m9, m6);
  const m11 = v128.and(t1, t15);
  const m12 = v128.and(t4, t27);
  const m13 = v128.xor(m12, m11);
  const m14 = v128.and(t2, t10);
  const m15 = v128.xor(m14, m11);
  const m16 = v128.xor(m3, m2);
  const m17 = v128.xor(m5, t24);
  const m18 = v128.xor(m8, m7);
  const m19 = v128.xor(m10, m15);
  const m20 = v128.xor(m16, m13);
  const m21 = v128.xor(m17, m15);
  const m22 = v128.xor(m18, m13);
  const m23 = v128.xor(m19, t25);
  const m24 = v128.xor(m22, m23);
  const m25 = v128.and(m22, m20);
  const m26 = v128.xor(m21, m25);
  const m27 = v128.xor(m20, m21);
  const m28 = v128.xor(m23, m25);
  const m29 = v128.and(m28, m27);
  const m30 = v128.and(m26, m24);
  const m31 = v128.and(m20, m23);
  const m32 = v128.and(m27, m31);
  const m33 = v128.xor(m27, m25);
  const m34 = v128.and(m21, m22);
  const m35 = v128.and(m24, m34);
  const m36 = v128.xor(m24, m25);
  const m37 = v128.xor(m21, m29);
  const m38 = v128.xor(m32, m33);
  const m39 = v128.xor(m23, m30);
  const m40 = v128.xor(m35, m36);
  const m41 = v128.xor(m38, m40);
  const m42 = v128.xor(m37, m39);
  const m43 = v128.xor(m37, m38);
  const m44 = v128.xor(m39, m40);
  const m45 = v128.xor(m42, m41);
  const m46 = v128.and(m44, t6);
  const m47 = v128.and(m40, t8);
  const m48 = v128.and(m39, u7);
  const m49 = v128.and(m43, t16);
  const m50 = v128.and(m38, t9);
  const m51 = v128.and(m37, t17);
  const m52 = v128.and(m42, t15);
  const m53 = v128.and(m45, t27);
  const m54 = v128.and(m41, t10);
  const m55 = v128.and(m44, t13);
  const m56 = v128.and(m40, t23);
  const m57 = v128.and(m39, t19);
  const m58 = v128.and(m43, t3);
  const m59 = v128.and(m38, t22);
  const m60 = v128.and(m37, t20);
  const m61 = v128.and(m42, t1);
  const m62 = v128.and(m45, t4);
  const m63 = v128.and(m41, t2);
  const l0 = v128.xor(m61, m62);
  const l1 = v128.xor(m50, m56);
  const l2 = v128.xor(m46, m48);
  const l3 = v128.xor(m47, m55);
  const l4 = v128.xor(m54, m58);
  const l5 = v128.xor(m49, m61);
  const l6 = v128.xor(m62, l5);
  const l7 = v128.xor(m46, l3);
  const l8 = v128.xor(m51, m59);
  const l9 = v128.xor(m52, m53);
  const l10 = v128.xor(m53, l4);
  const l11 = v128.xor(m60, l2);
  const l12 = v128.xor(m48, m51);
  const l13 = v128.xor(m50, l0);
  const l14 = v128.xor(m52, m61);
  const l15 = v128.xor(m55, l1);
  const l16 = v128.xor(m56, l0);
  const l17 = v128.xor(m57, l1);
  const l18 = v128.xor(m58, l8);
  const l19 = v128.xor(m63, l4);
  const l20 = v128.xor(l0, l1);
  const l21 = v128.xor(l1, l7);
  const l22 = v128.xor(l3, l12);
  const l23 = v128.xor(l18, l2);
  const l24 = v128.xor(l15, l9);
  const l25 = v128.xor(l6, l10);
  const l26 = v128.xor(l7, l9);
  const l27 = v128.xor(l8, l10);
  const l28 = v128.xor(l11, l14);
  const l29 = v128.xor(l11, l17);
  const s0 = v128.xor(l6, l24);
  const s1 = v128.not(v128.xor(l16, l26));
  const s2 = v128.not(v128.xor(l19, l28));
  const s3 = v128.xor(l6, l21);
  const s4 = v128.xor(l20, l22);
  const s5 = v128.xor(l25, l29);
  const s6 = v128.not(v128.xor(l13, l27));
  const s7 = v128.not(v128.xor(l6, l23));
  setPlane(7, s0);
  setPlane(6, s1);
  setPlane(5, s2);
  setPlane(4, s3);
  setPlane(3, s4);
  setPlane(2, s5);
  setPlane(1, s6);
  setPlane(0, s7);
}

/** One swap-move step of the 8×8 bit transpose between planes i and i + d. */
// @ts-ignore: decorator
@inline function swapMove(i: usize, d: i32, mask: i32): void {
  const a = plane(i);
  const b = plane(i + <usize>d);
  const t = v128.and(v128.xor(i16x8.shr_u(a, d), b), i8x16.splat(<i8>mask));
  setPlane(i + <usize>d, v128.xor(b, t));
  setPlane(i, v128.xor(a, i16x8.shl(t, d)));
}

/** Transposes bits within each byte lane across the eight planes (its own inverse). */
function transpose(): void {
  for (let i: usize = 0; i < 8; i += 2) swapMove(i, 1, 0x55);
  swapMove(0, 2, 0x33);
  swapMove(1, 2, 0x33);
  swapMove(4, 2, 0x33);
  swapMove(5, 2, 0x33);
  for (let i: usize = 0; i < 4; i++) swapMove(i, 4, 0x0f);
}

/** Loads `count` (≤ 8) blocks from `p` into the planes; missing blocks are zero. */
function loadBlocks(p: usize, count: usize): void {
  for (let b: usize = 0; b < 8; b++) setPlane(b, b < count ? v128.load(p + (b << 4)) : i64x2.splat(0));
  transpose();
}

/** Stores the first `count` blocks of the planes to `p`. */
function storeBlocks(p: usize, count: usize): void {
  transpose();
  for (let b: usize = 0; b < count; b++) v128.store(p + (b << 4), plane(b));
}

function addRoundKey(rk: usize): void {
  for (let j: usize = 0; j < 8; j++) setPlane(j, v128.xor(plane(j), v128.load(rk + (j << 4))));
}

/** ShiftRows, then MixColumns when `mix`, then the round key. */
function linearLayer(rk: usize, mix: bool): void {
  if (!mix) {
    for (let j: usize = 0; j < 8; j++) {
      const s = i8x16.shuffle(plane(j), plane(j), 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11);
      setPlane(j, v128.xor(s, v128.load(rk + (j << 4))));
    }
    return;
  }
  // out = 2·(a + rot1 a) + rot1 a + rot2 (a + rot1 a), per column, with rotk the rotation of
  // each column's bytes by k rows; 2· on planes is a shift by one plane plus the 0x1b reduction.
  for (let j: usize = 0; j < 8; j++) {
    const s = i8x16.shuffle(plane(j), plane(j), 0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11);
    const r1 = i8x16.shuffle(s, s, 1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12);
    const b = v128.xor(s, r1);
    const r2 = i8x16.shuffle(b, b, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    // Keep b in the plane for the doubling below; stash rot1 a + rot2 b + round key in MIXED_TMP.
    v128.store(MIXED_TMP + (j << 4), v128.xor(v128.xor(r1, r2), v128.load(rk + (j << 4))));
    setPlane(j, b);
  }
  const b7 = plane(7);
  const b0 = plane(0);
  const b1 = plane(1);
  const b2 = plane(2);
  const b3 = plane(3);
  const b4 = plane(4);
  const b5 = plane(5);
  const b6 = plane(6);
  setPlane(0, v128.xor(b7, v128.load(MIXED_TMP, 0)));
  setPlane(1, v128.xor(v128.xor(b0, b7), v128.load(MIXED_TMP, 16)));
  setPlane(2, v128.xor(b1, v128.load(MIXED_TMP, 32)));
  setPlane(3, v128.xor(v128.xor(b2, b7), v128.load(MIXED_TMP, 48)));
  setPlane(4, v128.xor(v128.xor(b3, b7), v128.load(MIXED_TMP, 64)));
  setPlane(5, v128.xor(b4, v128.load(MIXED_TMP, 80)));
  setPlane(6, v128.xor(b5, v128.load(MIXED_TMP, 96)));
  setPlane(7, v128.xor(b6, v128.load(MIXED_TMP, 112)));
}

/** Encrypts the planes with the replicated round keys at `rk` (`rounds` = 10 or 14). */
function encryptPlanes(rk: usize, rounds: usize): void {
  addRoundKey(rk);
  for (let r: usize = 1; r < rounds; r++) {
    subBytes();
    linearLayer(rk + (r << 7), true);
  }
  subBytes();
  linearLayer(rk + (rounds << 7), false);
}

/** Byte mask with bit j set in every lane. */
// @ts-ignore: decorator
@inline function bitOf(j: usize): v128 {
  return i8x16.splat(<i8>(<i32>1 << <i32>j));
}

/** Number of rounds for a 16- or 32-byte key. */
export function roundsFor(keyLen: usize): usize {
  return keyLen == 16 ? 10 : 14;
}

/** SubWord on four words at once (one per u32 lane), through the planes (constant-time). */
function subWord4(v: v128): v128 {
  for (let j: usize = 0; j < 8; j++) {
    const bit = bitOf(j);
    setPlane(j, i8x16.eq(v128.and(v, bit), bit));
  }
  subBytes();
  let out = i64x2.splat(0);
  for (let j: usize = 0; j < 8; j++) out = v128.or(out, v128.and(plane(j), bitOf(j)));
  return out;
}

const RCON = memory.data<u8>([0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36]);

/** Stores the replicated planes of the 16 plain key bytes `k` at `out`. */
function replicate(k: v128, out: usize): void {
  for (let j: usize = 0; j < 8; j++) {
    const bit = bitOf(j);
    v128.store(out + (j << 4), i8x16.eq(v128.and(k, bit), bit));
  }
}

/**
 * Expands `count` keys of `keyLen` (16 or 32) bytes, packed at `keys`, into replicated round
 * keys: key k's at `out + k * ROUND_KEYS_SIZE`. Four keys share each pass of the schedule (one
 * per u32 lane), so each SubWord costs a quarter of an S-box evaluation per key.
 */
export function expandKeys(keys: usize, keyLen: usize, count: usize, out: usize): void {
  const nk = keyLen >> 2;
  const rounds = roundsFor(keyLen);
  const total = (rounds + 1) << 2;
  for (let first: usize = 0; first < count; first += 4) {
    const inGroup = count - first < 4 ? count - first : 4;
    // Lanes past the last key repeat it; their results are not stored.
    const k0 = keys + first * keyLen;
    const k1 = keys + (first + (inGroup > 1 ? 1 : 0)) * keyLen;
    const k2 = keys + (first + (inGroup > 2 ? 2 : 0)) * keyLen;
    const k3 = keys + (first + (inGroup > 3 ? 3 : 0)) * keyLen;
    for (let i: usize = 0; i < nk; i++) {
      const o = i << 2;
      v128.store(WORDS4 + (i << 4), i32x4(load<i32>(k0 + o), load<i32>(k1 + o), load<i32>(k2 + o), load<i32>(k3 + o)));
    }
    for (let i = nk; i < total; i++) {
      // Words hold bytes in memory order, so RotWord is a byte rotation within each lane.
      let t = v128.load(WORDS4 + ((i - 1) << 4));
      if (i % nk == 0) {
        const rot = i8x16.shuffle(t, t, 1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12);
        t = v128.xor(subWord4(rot), i32x4.splat(<i32>load<u8>(RCON + i / nk - 1)));
      } else if (nk > 6 && i % nk == 4) {
        t = subWord4(t);
      }
      v128.store(WORDS4 + (i << 4), v128.xor(v128.load(WORDS4 + ((i - nk) << 4)), t));
    }
    for (let r: usize = 0; r <= rounds; r++) {
      // Transpose the round's four words × four keys into one 16-byte round key per key.
      const w = WORDS4 + (r << 6);
      const a = v128.load(w, 0);
      const b = v128.load(w, 16);
      const c = v128.load(w, 32);
      const d = v128.load(w, 48);
      const ab01 = i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
      const cd01 = i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
      const ab23 = i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
      const cd23 = i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
      const dst = out + first * ROUND_KEYS_SIZE + (r << 7);
      replicate(i8x16.shuffle(ab01, cd01, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), dst);
      if (inGroup > 1) replicate(i8x16.shuffle(ab01, cd01, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), dst + ROUND_KEYS_SIZE);
      if (inGroup > 2) replicate(i8x16.shuffle(ab23, cd23, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), dst + 2 * ROUND_KEYS_SIZE);
      if (inGroup > 3) replicate(i8x16.shuffle(ab23, cd23, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), dst + 3 * ROUND_KEYS_SIZE);
    }
  }
  memory.fill(WORDS4, 0, 60 * 16);
  memory.fill(PLANES, 0, 128);
}

/**
 * Encrypts `count` consecutive blocks at `p` in place. Block i uses the round keys at
 * load<u32>(keyOf + 4*i) (one pointer per block; consecutive blocks usually share one).
 */
export function encryptBlocks(p: usize, count: usize, keyOf: usize, rounds: usize): void {
  for (let first: usize = 0; first < count; first += 8) {
    const lanes = count - first < 8 ? count - first : 8;
    const base = keyOf + (first << 2);
    let rk = <usize>load<u32>(base);
    let prev = rk;
    let copied = false;
    for (let b: usize = 1; b < lanes; b++) {
      const kb = <usize>load<u32>(base + (b << 2));
      if (kb == prev) continue;
      // The key changes at lane b (public structure): lanes b.. take block b's round keys.
      if (!copied) {
        memory.copy(MIXED_KEYS, rk, (rounds + 1) << 7);
        copied = true;
      }
      const mask = i8x16.splat(<i8>((<i32>0xff << <i32>b) & 0xff));
      for (let off: usize = 0; off < (rounds + 1) << 7; off += 16) {
        v128.store(MIXED_KEYS + off, v128.bitselect(v128.load(kb + off), v128.load(MIXED_KEYS + off), mask));
      }
      prev = kb;
    }
    if (copied) rk = MIXED_KEYS;
    loadBlocks(p + (first << 4), lanes);
    encryptPlanes(rk, rounds);
    storeBlocks(p + (first << 4), lanes);
  }
  memory.fill(PLANES, 0, 128);
  memory.fill(MIXED_TMP, 0, 128);
  memory.fill(MIXED_KEYS, 0, ROUND_KEYS_SIZE);
}
