// SHA-384/512 (FIPS 180-4), scalar u64. wasm has native 64-bit adds and rotations, while a 2-lane
// i64x2 version would pay three ops per rotation, so lanes buy little here. Same job table as the
// SHA-256 engine; branches depend only on lengths.

import { J_FLAGS, J_LEN, J_MSG, J_OUT, J_OUT_LEN, J_PREFIX, J_STATE, JOB_RAW, JOB_SIZE } from './jobs';
import { loadBE64, storeBE64 } from './layout';

const K = memory.data<u64>([
  0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
  0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
  0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
  0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
  0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
  0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
  0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
  0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
  0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
  0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
  0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
  0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
  0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
  0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
  0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
  0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
  0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
  0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
  0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
  0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
], 16);

/** Initial states, native u64 words. */
export const SHA512_IV = memory.data<u64>([
  0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
  0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
], 16);
export const SHA384_IV = memory.data<u64>([
  0xcbbb9d5dc1059ed8, 0x629a292a367cd507, 0x9159015a3070dd17, 0x152fecd8f70e5939,
  0x67332667ffc00b31, 0x8eb44a8768581511, 0xdb0c2e0d64f98fa7, 0x47b5481dbefa4fa4,
], 16);

const STATE = memory.data(64, 16);
const SCHEDULE = memory.data(80 * 8, 16);
const TAIL = memory.data(256, 16);

// @ts-ignore: decorator
@inline function bigSigma0(x: u64): u64 {
  return rotr<u64>(x, 28) ^ rotr<u64>(x, 34) ^ rotr<u64>(x, 39);
}

// @ts-ignore: decorator
@inline function bigSigma1(x: u64): u64 {
  return rotr<u64>(x, 14) ^ rotr<u64>(x, 18) ^ rotr<u64>(x, 41);
}

function compress(p: usize): void {
  for (let t: usize = 0; t < 16; t++) store<u64>(SCHEDULE + (t << 3), loadBE64(p + (t << 3)));
  for (let t: usize = 16; t < 80; t++) {
    const w = SCHEDULE + (t << 3);
    const w15 = load<u64>(w - 15 * 8);
    const w2 = load<u64>(w - 2 * 8);
    const s0 = rotr<u64>(w15, 1) ^ rotr<u64>(w15, 8) ^ (w15 >> 7);
    const s1 = rotr<u64>(w2, 19) ^ rotr<u64>(w2, 61) ^ (w2 >> 6);
    store<u64>(w, s0 + s1 + load<u64>(w - 16 * 8) + load<u64>(w - 7 * 8));
  }
  let a = load<u64>(STATE, 0);
  let b = load<u64>(STATE, 8);
  let c = load<u64>(STATE, 16);
  let d = load<u64>(STATE, 24);
  let e = load<u64>(STATE, 32);
  let f = load<u64>(STATE, 40);
  let g = load<u64>(STATE, 48);
  let h = load<u64>(STATE, 56);
  // Eight rounds per iteration with the roles of the variables rotated, so no round moves state.
  for (let t: usize = 0; t < 80; t += 8) {
    {
      const t1 = h + bigSigma1(e) + ((e & f) ^ (~e & g)) + load<u64>(K + ((t + 0) << 3)) + load<u64>(SCHEDULE + ((t + 0) << 3));
      d += t1;
      h = t1 + bigSigma0(a) + ((a & b) ^ (a & c) ^ (b & c));
    }
    {
      const t1 = g + bigSigma1(d) + ((d & e) ^ (~d & f)) + load<u64>(K + ((t + 1) << 3)) + load<u64>(SCHEDULE + ((t + 1) << 3));
      c += t1;
      g = t1 + bigSigma0(h) + ((h & a) ^ (h & b) ^ (a & b));
    }
    {
      const t1 = f + bigSigma1(c) + ((c & d) ^ (~c & e)) + load<u64>(K + ((t + 2) << 3)) + load<u64>(SCHEDULE + ((t + 2) << 3));
      b += t1;
      f = t1 + bigSigma0(g) + ((g & h) ^ (g & a) ^ (h & a));
    }
    {
      const t1 = e + bigSigma1(b) + ((b & c) ^ (~b & d)) + load<u64>(K + ((t + 3) << 3)) + load<u64>(SCHEDULE + ((t + 3) << 3));
      a += t1;
      e = t1 + bigSigma0(f) + ((f & g) ^ (f & h) ^ (g & h));
    }
    {
      const t1 = d + bigSigma1(a) + ((a & b) ^ (~a & c)) + load<u64>(K + ((t + 4) << 3)) + load<u64>(SCHEDULE + ((t + 4) << 3));
      h += t1;
      d = t1 + bigSigma0(e) + ((e & f) ^ (e & g) ^ (f & g));
    }
    {
      const t1 = c + bigSigma1(h) + ((h & a) ^ (~h & b)) + load<u64>(K + ((t + 5) << 3)) + load<u64>(SCHEDULE + ((t + 5) << 3));
      g += t1;
      c = t1 + bigSigma0(d) + ((d & e) ^ (d & f) ^ (e & f));
    }
    {
      const t1 = b + bigSigma1(g) + ((g & h) ^ (~g & a)) + load<u64>(K + ((t + 6) << 3)) + load<u64>(SCHEDULE + ((t + 6) << 3));
      f += t1;
      b = t1 + bigSigma0(c) + ((c & d) ^ (c & e) ^ (d & e));
    }
    {
      const t1 = a + bigSigma1(f) + ((f & g) ^ (~f & h)) + load<u64>(K + ((t + 7) << 3)) + load<u64>(SCHEDULE + ((t + 7) << 3));
      e += t1;
      a = t1 + bigSigma0(b) + ((b & c) ^ (b & d) ^ (c & d));
    }
  }
  store<u64>(STATE, a + load<u64>(STATE, 0), 0);
  store<u64>(STATE, b + load<u64>(STATE, 8), 8);
  store<u64>(STATE, c + load<u64>(STATE, 16), 16);
  store<u64>(STATE, d + load<u64>(STATE, 24), 24);
  store<u64>(STATE, e + load<u64>(STATE, 32), 32);
  store<u64>(STATE, f + load<u64>(STATE, 40), 40);
  store<u64>(STATE, g + load<u64>(STATE, 48), 48);
  store<u64>(STATE, h + load<u64>(STATE, 56), 56);
}

/** Runs `n` SHA-512 (or SHA-384, by IV and output length) jobs from the table at `jobs`. */
export function sha512Run(jobs: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const job = jobs + <usize>i * JOB_SIZE;
    const msg = <usize>load<u32>(job, J_MSG);
    const len = load<u32>(job, J_LEN);
    const out = <usize>load<u32>(job, J_OUT);
    memory.copy(STATE, <usize>load<u32>(job, J_STATE), 64);
    const full = <usize>(len >> 7);
    for (let k: usize = 0; k < full; k++) compress(msg + (k << 7));
    if ((load<u32>(job, J_FLAGS) & JOB_RAW) != 0) {
      memory.copy(out, STATE, 64);
      continue;
    }
    const rest = <usize>(len & 127);
    const tailBlocks: usize = rest < 112 ? 1 : 2;
    memory.fill(TAIL, 0, 256);
    memory.copy(TAIL, msg + (full << 7), rest);
    store<u8>(TAIL + rest, 0x80);
    // The 128-bit length field: our messages are far below 2^61 bytes, so its high half is zero.
    storeBE64(TAIL + (tailBlocks << 7) - 8, (<u64>load<u32>(job, J_PREFIX) + <u64>len) << 3);
    for (let k: usize = 0; k < tailBlocks; k++) compress(TAIL + (k << 7));
    const words = <usize>(load<u32>(job, J_OUT_LEN) >> 3);
    for (let w: usize = 0; w < words; w++) storeBE64(out + (w << 3), load<u64>(STATE + (w << 3)));
  }
  memory.fill(TAIL, 0, 256);
  memory.fill(SCHEDULE, 0, 80 * 8);
  memory.fill(STATE, 0, 64);
}
