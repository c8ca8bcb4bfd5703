// SHA-224/256 (FIPS 180-4) as a 4-lane multi-buffer engine: each v128 holds one state word of four
// independent jobs, so four messages are compressed per pass. A lane that finishes its job is
// refilled with the next one at once, so messages of any mix of lengths keep all lanes busy
// (measured in reference/wasm-crypto.md: 4-way v128 is about 2× the scalar code at 64 B items).
// Branches depend only on lengths, which are public; message and key bytes only flow through
// adds, rotations and bit selects.

import { J_FLAGS, J_LEN, J_MSG, J_OUT, J_OUT_LEN, J_PREFIX, J_STATE, JOB_RAW, JOB_SIZE } from './jobs';
import { storeBE32, storeBE64 } from './layout';

const K = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
], 16);

/** Initial states, native u32 words. */
export const SHA256_IV = memory.data<u32>([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
], 16);
export const SHA224_IV = memory.data<u32>([
  0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4,
], 16);

const LANES: i32 = 4;
/** Word w of lane l lives at STATE + 16*w + 4*l, so word w of all lanes is one v128. */
const STATE = memory.data(8 * 16, 16);
/** Expanded message schedule, one v128 per round. */
const SCHEDULE = memory.data(64 * 16, 16);
/** Per lane: the padded tail (one or two blocks) of its current message. */
const TAIL = memory.data(LANES * 128, 16);
/** Stand-in block for idle lanes. */
const IDLE_BLOCK = memory.data(64, 16);

// Per-lane bookkeeping, one u32 each: current job (0 = idle), message pointer, whole message
// blocks, total blocks and blocks done.
const LANE_JOB = memory.data(LANES * 4, 16);
const LANE_MSG = memory.data(LANES * 4, 16);
const LANE_FULL = memory.data(LANES * 4, 16);
const LANE_TOTAL = memory.data(LANES * 4, 16);
const LANE_DONE = memory.data(LANES * 4, 16);

let nextJob: i32 = 0;

// @ts-ignore: decorator
@inline function rotr(x: v128, n: i32): v128 {
  return v128.or(i32x4.shr_u(x, n), i32x4.shl(x, 32 - n));
}

// @ts-ignore: decorator
@inline function add3(a: v128, b: v128, c: v128): v128 {
  return i32x4.add(i32x4.add(a, b), c);
}

/** Loads one 64-byte block from each lane into the schedule, byte-swapped and transposed. */
// @ts-ignore: decorator
@inline function loadBlocks(p0: usize, p1: usize, p2: usize, p3: usize): void {
  for (let g: usize = 0; g < 64; g += 16) {
    const r0 = v128.load(p0 + g);
    const r1 = v128.load(p1 + g);
    const r2 = v128.load(p2 + g);
    const r3 = v128.load(p3 + g);
    // [r0.w0, r1.w0, r0.w1, r1.w1] with each word byte-swapped, and likewise for the other pairs.
    const t0 = i8x16.shuffle(r0, r1, 3, 2, 1, 0, 19, 18, 17, 16, 7, 6, 5, 4, 23, 22, 21, 20);
    const t1 = i8x16.shuffle(r2, r3, 3, 2, 1, 0, 19, 18, 17, 16, 7, 6, 5, 4, 23, 22, 21, 20);
    const t2 = i8x16.shuffle(r0, r1, 11, 10, 9, 8, 27, 26, 25, 24, 15, 14, 13, 12, 31, 30, 29, 28);
    const t3 = i8x16.shuffle(r2, r3, 11, 10, 9, 8, 27, 26, 25, 24, 15, 14, 13, 12, 31, 30, 29, 28);
    const w = SCHEDULE + (g << 2);
    v128.store(w, i8x16.shuffle(t0, t1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
    v128.store(w, i8x16.shuffle(t0, t1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), 16);
    v128.store(w, i8x16.shuffle(t2, t3, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), 32);
    v128.store(w, i8x16.shuffle(t2, t3, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), 48);
  }
}

/** One compression of the four lanes' current blocks. */
function compress4(p0: usize, p1: usize, p2: usize, p3: usize): void {
  loadBlocks(p0, p1, p2, p3);
  for (let t: usize = 16; t < 64; t++) {
    const w = SCHEDULE + (t << 4);
    const w15 = v128.load(w - 15 * 16);
    const w2 = v128.load(w - 2 * 16);
    const s0 = v128.xor(v128.xor(rotr(w15, 7), rotr(w15, 18)), i32x4.shr_u(w15, 3));
    const s1 = v128.xor(v128.xor(rotr(w2, 17), rotr(w2, 19)), i32x4.shr_u(w2, 10));
    v128.store(w, i32x4.add(add3(s0, s1, v128.load(w - 16 * 16)), v128.load(w - 7 * 16)));
  }
  let a = v128.load(STATE, 0);
  let b = v128.load(STATE, 16);
  let c = v128.load(STATE, 32);
  let d = v128.load(STATE, 48);
  let e = v128.load(STATE, 64);
  let f = v128.load(STATE, 80);
  let g = v128.load(STATE, 96);
  let h = v128.load(STATE, 112);
  for (let t: usize = 0; t < 64; t++) {
    const bigS1 = v128.xor(v128.xor(rotr(e, 6), rotr(e, 11)), rotr(e, 25));
    const ch = v128.bitselect(f, g, e);
    const t1 = i32x4.add(add3(h, bigS1, ch), i32x4.add(v128.load32_splat(K + (t << 2)), v128.load(SCHEDULE + (t << 4))));
    const bigS0 = v128.xor(v128.xor(rotr(a, 2), rotr(a, 13)), rotr(a, 22));
    const maj = v128.bitselect(b, c, v128.xor(a, c));
    h = g;
    g = f;
    f = e;
    e = i32x4.add(d, t1);
    d = c;
    c = b;
    b = a;
    a = add3(t1, bigS0, maj);
  }
  v128.store(STATE, i32x4.add(a, v128.load(STATE, 0)), 0);
  v128.store(STATE, i32x4.add(b, v128.load(STATE, 16)), 16);
  v128.store(STATE, i32x4.add(c, v128.load(STATE, 32)), 32);
  v128.store(STATE, i32x4.add(d, v128.load(STATE, 48)), 48);
  v128.store(STATE, i32x4.add(e, v128.load(STATE, 64)), 64);
  v128.store(STATE, i32x4.add(f, v128.load(STATE, 80)), 80);
  v128.store(STATE, i32x4.add(g, v128.load(STATE, 96)), 96);
  v128.store(STATE, i32x4.add(h, v128.load(STATE, 112)), 112);
}

/** Puts a job into a lane: chaining state, padded tail, block counts. */
function startJob(lane: usize, job: usize): void {
  const msg = <usize>load<u32>(job, J_MSG);
  const len = load<u32>(job, J_LEN);
  const state = <usize>load<u32>(job, J_STATE);
  const full = len >> 6;
  let total = full;
  if ((load<u32>(job, J_FLAGS) & JOB_RAW) == 0) {
    const tail = TAIL + (lane << 7);
    const rest = len & 63;
    const tailBlocks: u32 = rest < 56 ? 1 : 2;
    memory.fill(tail, 0, 128);
    memory.copy(tail, msg + (<usize>full << 6), rest);
    store<u8>(tail + rest, 0x80);
    const bits = (<u64>load<u32>(job, J_PREFIX) + <u64>len) << 3;
    storeBE64(tail + (tailBlocks << 6) - 8, bits);
    total += tailBlocks;
  }
  for (let w: usize = 0; w < 8; w++) store<u32>(STATE + (w << 4) + (lane << 2), load<u32>(state + (w << 2)));
  store<u32>(LANE_JOB + (lane << 2), <u32>job);
  store<u32>(LANE_MSG + (lane << 2), <u32>msg);
  store<u32>(LANE_FULL + (lane << 2), full);
  store<u32>(LANE_TOTAL + (lane << 2), total);
  store<u32>(LANE_DONE + (lane << 2), 0);
}

/** Writes a finished lane's result. */
function finishJob(lane: usize, job: usize): void {
  const out = <usize>load<u32>(job, J_OUT);
  if ((load<u32>(job, J_FLAGS) & JOB_RAW) != 0) {
    for (let w: usize = 0; w < 8; w++) store<u32>(out + (w << 2), load<u32>(STATE + (w << 4) + (lane << 2)));
  } else {
    const words = <usize>(load<u32>(job, J_OUT_LEN) >> 2);
    for (let w: usize = 0; w < words; w++) storeBE32(out + (w << 2), load<u32>(STATE + (w << 4) + (lane << 2)));
  }
}

/** Gives the lane its next job, finishing at once any job with no blocks (an empty RAW job). */
function refill(lane: usize, jobs: usize, n: i32): void {
  while (nextJob < n) {
    const job = jobs + <usize>nextJob * JOB_SIZE;
    nextJob++;
    startJob(lane, job);
    if (load<u32>(LANE_TOTAL + (lane << 2)) > 0) return;
    finishJob(lane, job);
  }
  store<u32>(LANE_JOB + (lane << 2), 0);
}

/** Block the lane compresses next: from the message while whole blocks remain, then from its tail. */
// @ts-ignore: decorator
@inline function blockOf(lane: usize): usize {
  const k = lane << 2;
  if (load<u32>(LANE_JOB + k) == 0) return IDLE_BLOCK;
  const done = load<u32>(LANE_DONE + k);
  const full = load<u32>(LANE_FULL + k);
  if (done < full) return <usize>load<u32>(LANE_MSG + k) + (<usize>done << 6);
  return TAIL + (lane << 7) + (<usize>(done - full) << 6);
}

/** Runs `n` SHA-256 (or SHA-224, by IV and output length) jobs from the table at `jobs`. */
export function sha256Run(jobs: usize, n: i32): void {
  nextJob = 0;
  for (let l: usize = 0; l < <usize>LANES; l++) refill(l, jobs, n);
  while (true) {
    let busy = 0;
    for (let l: usize = 0; l < <usize>LANES; l++) busy |= load<u32>(LANE_JOB + (l << 2));
    if (busy == 0) break;
    compress4(blockOf(0), blockOf(1), blockOf(2), blockOf(3));
    for (let l: usize = 0; l < <usize>LANES; l++) {
      const k = l << 2;
      const job = <usize>load<u32>(LANE_JOB + k);
      if (job == 0) continue;
      const done = load<u32>(LANE_DONE + k) + 1;
      store<u32>(LANE_DONE + k, done);
      if (done == load<u32>(LANE_TOTAL + k)) {
        finishJob(l, job);
        refill(l, jobs, n);
      }
    }
  }
  memory.fill(TAIL, 0, LANES * 128);
  memory.fill(SCHEDULE, 0, 64 * 16);
  memory.fill(STATE, 0, 8 * 16);
}
