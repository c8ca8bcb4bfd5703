// SHA-224/256 (FIPS 180-4) as a 4-lane multi-buffer engine: each v128 holds one state word of four
// independent jobs, so four messages are compressed per pass. A lane that finishes its job is
// refilled with the next one at once, so messages of any mix of lengths keep all lanes busy (4-way
// v128 against the scalar code: bench/README.md, "The WASM kernels").
// Batches whose messages all have one length take sha256SameLength (at the end of this file)
// instead, which needs no lane bookkeeping and shares the padding block's schedule.
// Branches depend only on lengths, which are public; message and key bytes only flow through
// adds, rotations and bit selects.

import { J_FLAGS, J_LEN, J_MSG, J_OUT, J_OUT_LEN, J_PREFIX, J_STATE, JOB_RAW, JOB_SIZE } from './jobs';
import { ENTRY_SIZE, E_IN, E_OUT, storeBE32, storeBE64 } from './layout';

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
/** Message schedule W[t] of the block being compressed, one v128 per round. */
const SCHEDULE = memory.data(64 * 16, 16);
/** K[t] + W[t] of the block being compressed: what the rounds add. */
const ROUND_INPUT = memory.data(64 * 16, 16);
/** K[t] in every lane. */
const K_SPLAT = memory.data(64 * 16, 16);
/** Per lane: the padded tail (one or two blocks) of its current message. */
const TAIL = memory.data(LANES * 128, 16);
/** Stand-in block for idle lanes. */
const IDLE_BLOCK = memory.data(64, 16);

for (let t: usize = 0; t < 64; t++) v128.store(K_SPLAT + (t << 4), i32x4.splat(load<u32>(K + (t << 2))));

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

/** Four 4-byte words, one per lane, byte-swapped: [r0.w0, r1.w0, r0.w1, r1.w1] and likewise. */
// @ts-ignore: decorator
@inline function pairLow(x: v128, y: v128): v128 {
  return i8x16.shuffle(x, y, 3, 2, 1, 0, 19, 18, 17, 16, 7, 6, 5, 4, 23, 22, 21, 20);
}

/** The same for words 2 and 3: [r0.w2, r1.w2, r0.w3, r1.w3]. */
// @ts-ignore: decorator
@inline function pairHigh(x: v128, y: v128): v128 {
  return i8x16.shuffle(x, y, 11, 10, 9, 8, 27, 26, 25, 24, 15, 14, 13, 12, 31, 30, 29, 28);
}

/** Low eight bytes of x, then low eight bytes of y. */
// @ts-ignore: decorator
@inline function halvesLow(x: v128, y: v128): v128 {
  return i8x16.shuffle(x, y, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}

/** High eight bytes of x, then high eight bytes of y. */
// @ts-ignore: decorator
@inline function halvesHigh(x: v128, y: v128): v128 {
  return i8x16.shuffle(x, y, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
}

/**
 * Loads one 64-byte block from each lane, byte-swapped and transposed into W[0..15], and sets
 * ROUND_INPUT[0..15]. A 4×4 transpose of big-endian words is its own inverse up to the byte swap,
 * which storeDigests uses the other way.
 */
// @ts-ignore: decorator
@inline function loadBlocks(p0: usize, p1: usize, p2: usize, p3: usize, schedule: usize = SCHEDULE, input: usize = ROUND_INPUT): void {
  for (let g: usize = 0; g < 64; g += 16) {
    const r0 = v128.load(p0 + g);
    const r1 = v128.load(p1 + g);
    const r2 = v128.load(p2 + g);
    const r3 = v128.load(p3 + g);
    const t0 = pairLow(r0, r1);
    const t1 = pairLow(r2, r3);
    const t2 = pairHigh(r0, r1);
    const t3 = pairHigh(r2, r3);
    const w = g << 2;
    const w0 = halvesLow(t0, t1);
    const w1 = halvesHigh(t0, t1);
    const w2 = halvesLow(t2, t3);
    const w3 = halvesHigh(t2, t3);
    v128.store(schedule + w, w0);
    v128.store(schedule + w, w1, 16);
    v128.store(schedule + w, w2, 32);
    v128.store(schedule + w, w3, 48);
    v128.store(input + w, i32x4.add(w0, v128.load(K_SPLAT + w)));
    v128.store(input + w, i32x4.add(w1, v128.load(K_SPLAT + w, 16)), 16);
    v128.store(input + w, i32x4.add(w2, v128.load(K_SPLAT + w, 32)), 32);
    v128.store(input + w, i32x4.add(w3, v128.load(K_SPLAT + w, 48)), 48);
  }
}

/** Expands W[16..63] from W[0..15] and sets ROUND_INPUT[16..63]. */
// @ts-ignore: decorator
@inline function expandSchedule(schedule: usize = SCHEDULE, input: usize = ROUND_INPUT): void {
  for (let t: usize = 16; t < 64; t++) {
    const w = schedule + (t << 4);
    const w15 = v128.load(w - 15 * 16);
    const w2 = v128.load(w - 2 * 16);
    const s0 = v128.xor(v128.xor(rotr(w15, 7), rotr(w15, 18)), i32x4.shr_u(w15, 3));
    const s1 = v128.xor(v128.xor(rotr(w2, 17), rotr(w2, 19)), i32x4.shr_u(w2, 10));
    const x = i32x4.add(add3(s0, s1, v128.load(w - 16 * 16)), v128.load(w - 7 * 16));
    v128.store(w, x);
    v128.store(input + (t << 4), i32x4.add(x, v128.load(K_SPLAT + (t << 4))));
  }
}

/** T1 of FIPS 180-4 without the round's K + W: h + Σ1(e) + Ch(e, f, g). */
// @ts-ignore: decorator
@inline function t1(e: v128, f: v128, g: v128, h: v128, kw: v128): v128 {
  const bigS1 = v128.xor(v128.xor(rotr(e, 6), rotr(e, 11)), rotr(e, 25));
  return add3(h, kw, i32x4.add(bigS1, v128.bitselect(f, g, e)));
}

/**
 * T2 of FIPS 180-4, Σ0(a) + Maj(a, b, c), given ab = a ^ b and bc = b ^ c: Maj is then
 * b ^ (ab & bc), and this round's ab is the next round's bc, so Maj costs two operations.
 */
// @ts-ignore: decorator
@inline function t2(a: v128, b: v128, ab: v128, bc: v128): v128 {
  const bigS0 = v128.xor(v128.xor(rotr(a, 2), rotr(a, 13)), rotr(a, 22));
  return i32x4.add(bigS0, v128.xor(b, v128.and(ab, bc)));
}

/**
 * The 64 rounds of one compression of all four lanes, adding `input` (K[t] + W[t] per round, one
 * v128 each) and folding the result into STATE. Unrolled by eight with the working variables
 * renamed each round, so no round spends instructions moving them along.
 */
function compressRounds(input: usize): void {
  let a = v128.load(STATE, 0);
  let b = v128.load(STATE, 16);
  let c = v128.load(STATE, 32);
  let d = v128.load(STATE, 48);
  let e = v128.load(STATE, 64);
  let f = v128.load(STATE, 80);
  let g = v128.load(STATE, 96);
  let h = v128.load(STATE, 112);
  // b ^ c for the first round's Maj; `ab` and `bc` then swap roles every round (t2).
  let bc = v128.xor(b, c);
  let ab = bc;
  for (let p = input; p < input + 64 * 16; p += 8 * 16) {
    let x = t1(e, f, g, h, v128.load(p, 0));
    d = i32x4.add(d, x);
    ab = v128.xor(a, b);
    h = i32x4.add(x, t2(a, b, ab, bc));
    x = t1(d, e, f, g, v128.load(p, 16));
    c = i32x4.add(c, x);
    bc = v128.xor(h, a);
    g = i32x4.add(x, t2(h, a, bc, ab));
    x = t1(c, d, e, f, v128.load(p, 32));
    b = i32x4.add(b, x);
    ab = v128.xor(g, h);
    f = i32x4.add(x, t2(g, h, ab, bc));
    x = t1(b, c, d, e, v128.load(p, 48));
    a = i32x4.add(a, x);
    bc = v128.xor(f, g);
    e = i32x4.add(x, t2(f, g, bc, ab));
    x = t1(a, b, c, d, v128.load(p, 64));
    h = i32x4.add(h, x);
    ab = v128.xor(e, f);
    d = i32x4.add(x, t2(e, f, ab, bc));
    x = t1(h, a, b, c, v128.load(p, 80));
    g = i32x4.add(g, x);
    bc = v128.xor(d, e);
    c = i32x4.add(x, t2(d, e, bc, ab));
    x = t1(g, h, a, b, v128.load(p, 96));
    f = i32x4.add(f, x);
    ab = v128.xor(c, d);
    b = i32x4.add(x, t2(c, d, ab, bc));
    x = t1(f, g, h, a, v128.load(p, 112));
    e = i32x4.add(e, x);
    bc = v128.xor(b, c);
    a = i32x4.add(x, t2(b, c, bc, ab));
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

/**
 * The same for a second group of four lanes, so that the same-length path keeps eight messages in
 * flight: two independent dependency chains per round hide SIMD latency (the gain over one group
 * at 64 B: bench/README.md, "The WASM kernels").
 */
const STATE2 = memory.data(8 * 16, 16);
const SCHEDULE2 = memory.data(64 * 16, 16);
const ROUND_INPUT2 = memory.data(64 * 16, 16);

/** compressRounds for two groups at once: `inA` into STATE, `inB` into STATE2, rounds interleaved. */
function compressRounds2(inA: usize, inB: usize): void {
  let a = v128.load(STATE, 0);
  let b = v128.load(STATE, 16);
  let c = v128.load(STATE, 32);
  let d = v128.load(STATE, 48);
  let e = v128.load(STATE, 64);
  let f = v128.load(STATE, 80);
  let g = v128.load(STATE, 96);
  let h = v128.load(STATE, 112);
  let A = v128.load(STATE2, 0);
  let B = v128.load(STATE2, 16);
  let C = v128.load(STATE2, 32);
  let D = v128.load(STATE2, 48);
  let E = v128.load(STATE2, 64);
  let F = v128.load(STATE2, 80);
  let G = v128.load(STATE2, 96);
  let H = v128.load(STATE2, 112);
  // As in compressRounds: `ab`/`bc` and `AB`/`BC` carry Maj's b ^ c from round to round.
  let bc = v128.xor(b, c);
  let ab = bc;
  let BC = v128.xor(B, C);
  let AB = BC;
  for (let o: usize = 0; o < 64 * 16; o += 8 * 16) {
    const p = inA + o;
    const q = inB + o;
    let x = t1(e, f, g, h, v128.load(p, 0));
    let y = t1(E, F, G, H, v128.load(q, 0));
    d = i32x4.add(d, x);
    ab = v128.xor(a, b);
    h = i32x4.add(x, t2(a, b, ab, bc));
    D = i32x4.add(D, y);
    AB = v128.xor(A, B);
    H = i32x4.add(y, t2(A, B, AB, BC));
    x = t1(d, e, f, g, v128.load(p, 16));
    y = t1(D, E, F, G, v128.load(q, 16));
    c = i32x4.add(c, x);
    bc = v128.xor(h, a);
    g = i32x4.add(x, t2(h, a, bc, ab));
    C = i32x4.add(C, y);
    BC = v128.xor(H, A);
    G = i32x4.add(y, t2(H, A, BC, AB));
    x = t1(c, d, e, f, v128.load(p, 32));
    y = t1(C, D, E, F, v128.load(q, 32));
    b = i32x4.add(b, x);
    ab = v128.xor(g, h);
    f = i32x4.add(x, t2(g, h, ab, bc));
    B = i32x4.add(B, y);
    AB = v128.xor(G, H);
    F = i32x4.add(y, t2(G, H, AB, BC));
    x = t1(b, c, d, e, v128.load(p, 48));
    y = t1(B, C, D, E, v128.load(q, 48));
    a = i32x4.add(a, x);
    bc = v128.xor(f, g);
    e = i32x4.add(x, t2(f, g, bc, ab));
    A = i32x4.add(A, y);
    BC = v128.xor(F, G);
    E = i32x4.add(y, t2(F, G, BC, AB));
    x = t1(a, b, c, d, v128.load(p, 64));
    y = t1(A, B, C, D, v128.load(q, 64));
    h = i32x4.add(h, x);
    ab = v128.xor(e, f);
    d = i32x4.add(x, t2(e, f, ab, bc));
    H = i32x4.add(H, y);
    AB = v128.xor(E, F);
    D = i32x4.add(y, t2(E, F, AB, BC));
    x = t1(h, a, b, c, v128.load(p, 80));
    y = t1(H, A, B, C, v128.load(q, 80));
    g = i32x4.add(g, x);
    bc = v128.xor(d, e);
    c = i32x4.add(x, t2(d, e, bc, ab));
    G = i32x4.add(G, y);
    BC = v128.xor(D, E);
    C = i32x4.add(y, t2(D, E, BC, AB));
    x = t1(g, h, a, b, v128.load(p, 96));
    y = t1(G, H, A, B, v128.load(q, 96));
    f = i32x4.add(f, x);
    ab = v128.xor(c, d);
    b = i32x4.add(x, t2(c, d, ab, bc));
    F = i32x4.add(F, y);
    AB = v128.xor(C, D);
    B = i32x4.add(y, t2(C, D, AB, BC));
    x = t1(f, g, h, a, v128.load(p, 112));
    y = t1(F, G, H, A, v128.load(q, 112));
    e = i32x4.add(e, x);
    bc = v128.xor(b, c);
    a = i32x4.add(x, t2(b, c, bc, ab));
    E = i32x4.add(E, y);
    BC = v128.xor(B, C);
    A = i32x4.add(y, t2(B, C, BC, AB));
  }
  v128.store(STATE, i32x4.add(a, v128.load(STATE, 0)), 0);
  v128.store(STATE, i32x4.add(b, v128.load(STATE, 16)), 16);
  v128.store(STATE, i32x4.add(c, v128.load(STATE, 32)), 32);
  v128.store(STATE, i32x4.add(d, v128.load(STATE, 48)), 48);
  v128.store(STATE, i32x4.add(e, v128.load(STATE, 64)), 64);
  v128.store(STATE, i32x4.add(f, v128.load(STATE, 80)), 80);
  v128.store(STATE, i32x4.add(g, v128.load(STATE, 96)), 96);
  v128.store(STATE, i32x4.add(h, v128.load(STATE, 112)), 112);
  v128.store(STATE2, i32x4.add(A, v128.load(STATE2, 0)), 0);
  v128.store(STATE2, i32x4.add(B, v128.load(STATE2, 16)), 16);
  v128.store(STATE2, i32x4.add(C, v128.load(STATE2, 32)), 32);
  v128.store(STATE2, i32x4.add(D, v128.load(STATE2, 48)), 48);
  v128.store(STATE2, i32x4.add(E, v128.load(STATE2, 64)), 64);
  v128.store(STATE2, i32x4.add(F, v128.load(STATE2, 80)), 80);
  v128.store(STATE2, i32x4.add(G, v128.load(STATE2, 96)), 96);
  v128.store(STATE2, i32x4.add(H, v128.load(STATE2, 112)), 112);
}

/** One compression of the four lanes' current blocks. */
function compress4(p0: usize, p1: usize, p2: usize, p3: usize): void {
  loadBlocks(p0, p1, p2, p3);
  expandSchedule();
  compressRounds(ROUND_INPUT);
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
  memory.fill(ROUND_INPUT, 0, 64 * 16);
  memory.fill(STATE, 0, 8 * 16);
}

/**
 * K[t] + W[t] of a same-length batch's padding-only last block (0x80 or nothing, zeros, the bit
 * length): that block is the same for every message of the batch, so its schedule is expanded once
 * per batch and its compression is just the 64 rounds.
 */
const PADDING_INPUT = memory.data(64 * 16, 16);
/** A same-length batch's padded last message block (message bytes still zero), then its padding-only block. */
const TAIL_TEMPLATE = memory.data(128, 16);
/** Per lane of a same-length group of eight: its padded last message block. */
const SAME_TAIL = memory.data(8 * 64, 16);
/** Where idle lanes of a same-length batch's last group write their digests. */
const DISCARD = memory.data(32, 16);

/** Writes the digests in `state` of its four lanes (big-endian; 32 bytes, or 28 for SHA-224). */
// @ts-ignore: decorator
@inline function storeDigests(state: usize, o0: usize, o1: usize, o2: usize, o3: usize, outLen: u32): void {
  const a = v128.load(state, 0);
  const b = v128.load(state, 16);
  const c = v128.load(state, 32);
  const d = v128.load(state, 48);
  const t0 = pairLow(a, b);
  const t1 = pairLow(c, d);
  const t2 = pairHigh(a, b);
  const t3 = pairHigh(c, d);
  v128.store(o0, halvesLow(t0, t1));
  v128.store(o1, halvesHigh(t0, t1));
  v128.store(o2, halvesLow(t2, t3));
  v128.store(o3, halvesHigh(t2, t3));
  const e = v128.load(state, 64);
  const f = v128.load(state, 80);
  const g = v128.load(state, 96);
  const h = v128.load(state, 112);
  const u0 = pairLow(e, f);
  const u1 = pairLow(g, h);
  const u2 = pairHigh(e, f);
  const u3 = pairHigh(g, h);
  const l0 = halvesLow(u0, u1);
  const l1 = halvesHigh(u0, u1);
  const l2 = halvesLow(u2, u3);
  const l3 = halvesHigh(u2, u3);
  if (outLen == 32) {
    v128.store(o0, l0, 16);
    v128.store(o1, l1, 16);
    v128.store(o2, l2, 16);
    v128.store(o3, l3, 16);
  } else {
    store<u64>(o0, i64x2.extract_lane(l0, 0), 16);
    store<u32>(o0, i32x4.extract_lane(l0, 2), 24);
    store<u64>(o1, i64x2.extract_lane(l1, 0), 16);
    store<u32>(o1, i32x4.extract_lane(l1, 2), 24);
    store<u64>(o2, i64x2.extract_lane(l2, 0), 16);
    store<u32>(o2, i32x4.extract_lane(l2, 2), 24);
    store<u64>(o3, i64x2.extract_lane(l3, 0), 16);
    store<u32>(o3, i32x4.extract_lane(l3, 2), 24);
  }
}

/** Entry of lane `l` in a group of `count` real lanes from entry `e0`; idle lanes rehash entry 0. */
// @ts-ignore: decorator
@inline function laneEntry(e0: usize, l: i32, count: i32): usize {
  return l < count ? e0 + <usize>l * ENTRY_SIZE : e0;
}

// @ts-ignore: decorator
@inline function laneIn(e0: usize, l: i32, count: i32): usize {
  return <usize>load<u32>(laneEntry(e0, l, count), E_IN);
}

// @ts-ignore: decorator
@inline function laneOut(e0: usize, l: i32, count: i32): usize {
  return l < count ? <usize>load<u32>(e0 + <usize>l * ENTRY_SIZE, E_OUT) : DISCARD;
}

/** Padded last message block of lane `l` (a same-length batch with message bytes in its last block). */
// @ts-ignore: decorator
@inline function laneTail(e0: usize, l: i32, count: i32, at: usize, rest: usize): usize {
  const tail = SAME_TAIL + (<usize>l << 6);
  memory.copy(tail, TAIL_TEMPLATE, 64);
  memory.copy(tail, laneIn(e0, l, count) + at, rest);
  return tail;
}

// @ts-ignore: decorator
@inline function setIV(state: usize, iv: usize): void {
  for (let w: usize = 0; w < 8; w++) v128.store(state + (w << 4), v128.load32_splat(iv + (w << 2)));
}

/**
 * SHA-256 (or SHA-224, by IV and `outLen` 28) of the `n` entries of `table` (layout.ts: E_IN,
 * E_OUT), which all have `len` bytes. Every lane compresses the same blocks, so there is no
 * per-lane bookkeeping, and eight messages are in flight (two groups of four lanes; a last group
 * of at most four uses one). A last block holding only padding (when `len` is a multiple of 64,
 * or leaves 56 or more bytes in its last block) costs its rounds alone: its schedule is the same
 * for every message and is computed once here. At 64 B that is half of the blocks (against the
 * multi-buffer engine: bench/README.md, "The WASM kernels").
 */
export function sha256SameLength(table: usize, n: i32, len: u32, iv: usize, outLen: u32): void {
  const full = <usize>(len >> 6) << 6;
  const rest = <usize>(len & 63);
  const messageTail = rest > 0;
  const paddingBlock = rest == 0 || rest >= 56;
  const bits = <u64>len << 3;
  memory.fill(TAIL_TEMPLATE, 0, 128);
  if (messageTail) {
    store<u8>(TAIL_TEMPLATE + rest, 0x80);
    if (!paddingBlock) storeBE64(TAIL_TEMPLATE + 56, bits);
  }
  if (paddingBlock) {
    const pad = TAIL_TEMPLATE + 64;
    if (rest == 0) store<u8>(pad, 0x80);
    storeBE64(pad + 56, bits);
    loadBlocks(pad, pad, pad, pad);
    expandSchedule();
    memory.copy(PADDING_INPUT, ROUND_INPUT, 64 * 16);
  }

  for (let i = 0; i < n; i += 2 * LANES) {
    const e0 = table + <usize>i * ENTRY_SIZE;
    const count = min(n - i, 2 * LANES);
    setIV(STATE, iv);
    if (count > LANES) {
      setIV(STATE2, iv);
      for (let at: usize = 0; at < full; at += 64) {
        loadBlocks(laneIn(e0, 0, count) + at, laneIn(e0, 1, count) + at, laneIn(e0, 2, count) + at, laneIn(e0, 3, count) + at);
        expandSchedule();
        loadBlocks(laneIn(e0, 4, count) + at, laneIn(e0, 5, count) + at, laneIn(e0, 6, count) + at, laneIn(e0, 7, count) + at, SCHEDULE2, ROUND_INPUT2);
        expandSchedule(SCHEDULE2, ROUND_INPUT2);
        compressRounds2(ROUND_INPUT, ROUND_INPUT2);
      }
      if (messageTail) {
        loadBlocks(laneTail(e0, 0, count, full, rest), laneTail(e0, 1, count, full, rest), laneTail(e0, 2, count, full, rest), laneTail(e0, 3, count, full, rest));
        expandSchedule();
        loadBlocks(laneTail(e0, 4, count, full, rest), laneTail(e0, 5, count, full, rest), laneTail(e0, 6, count, full, rest), laneTail(e0, 7, count, full, rest), SCHEDULE2, ROUND_INPUT2);
        expandSchedule(SCHEDULE2, ROUND_INPUT2);
        compressRounds2(ROUND_INPUT, ROUND_INPUT2);
      }
      if (paddingBlock) compressRounds2(PADDING_INPUT, PADDING_INPUT);
      storeDigests(STATE2, laneOut(e0, 4, count), laneOut(e0, 5, count), laneOut(e0, 6, count), laneOut(e0, 7, count), outLen);
    } else {
      for (let at: usize = 0; at < full; at += 64) {
        compress4(laneIn(e0, 0, count) + at, laneIn(e0, 1, count) + at, laneIn(e0, 2, count) + at, laneIn(e0, 3, count) + at);
      }
      if (messageTail) {
        compress4(laneTail(e0, 0, count, full, rest), laneTail(e0, 1, count, full, rest), laneTail(e0, 2, count, full, rest), laneTail(e0, 3, count, full, rest));
      }
      if (paddingBlock) compressRounds(PADDING_INPUT);
    }
    storeDigests(STATE, laneOut(e0, 0, count), laneOut(e0, 1, count), laneOut(e0, 2, count), laneOut(e0, 3, count), outLen);
  }
  memory.fill(SAME_TAIL, 0, 8 * 64);
  memory.fill(SCHEDULE, 0, 64 * 16);
  memory.fill(ROUND_INPUT, 0, 64 * 16);
  memory.fill(STATE, 0, 8 * 16);
  memory.fill(SCHEDULE2, 0, 64 * 16);
  memory.fill(ROUND_INPUT2, 0, 64 * 16);
  memory.fill(STATE2, 0, 8 * 16);
  memory.fill(DISCARD, 0, 32);
}
