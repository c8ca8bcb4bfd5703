// SHA3-224/256/384/512 (FIPS 202): Keccak-f[1600] on 25 u64 lanes, scalar. wasm's native i64
// rotations make this cheap (bench/README.md, "The WASM kernels"); two-lane i64x2 would pay three
// ops per rotation. Lane a[x + 5y] lives in local aNN, NN = x + 5y.

import { ENTRY_SIZE, E_IN, E_IN_LEN, E_OUT } from './layout';

const RC = memory.data<u64>([
  0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
  0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
  0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
  0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
  0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
  0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
], 16);

const KECCAK_STATE = memory.data(200, 16);
const BLOCK = memory.data(200, 16);

function keccakF1600(): void {
  let a00 = load<u64>(KECCAK_STATE, 0);
  let a01 = load<u64>(KECCAK_STATE, 8);
  let a02 = load<u64>(KECCAK_STATE, 16);
  let a03 = load<u64>(KECCAK_STATE, 24);
  let a04 = load<u64>(KECCAK_STATE, 32);
  let a05 = load<u64>(KECCAK_STATE, 40);
  let a06 = load<u64>(KECCAK_STATE, 48);
  let a07 = load<u64>(KECCAK_STATE, 56);
  let a08 = load<u64>(KECCAK_STATE, 64);
  let a09 = load<u64>(KECCAK_STATE, 72);
  let a10 = load<u64>(KECCAK_STATE, 80);
  let a11 = load<u64>(KECCAK_STATE, 88);
  let a12 = load<u64>(KECCAK_STATE, 96);
  let a13 = load<u64>(KECCAK_STATE, 104);
  let a14 = load<u64>(KECCAK_STATE, 112);
  let a15 = load<u64>(KECCAK_STATE, 120);
  let a16 = load<u64>(KECCAK_STATE, 128);
  let a17 = load<u64>(KECCAK_STATE, 136);
  let a18 = load<u64>(KECCAK_STATE, 144);
  let a19 = load<u64>(KECCAK_STATE, 152);
  let a20 = load<u64>(KECCAK_STATE, 160);
  let a21 = load<u64>(KECCAK_STATE, 168);
  let a22 = load<u64>(KECCAK_STATE, 176);
  let a23 = load<u64>(KECCAK_STATE, 184);
  let a24 = load<u64>(KECCAK_STATE, 192);
  for (let round: usize = 0; round < 24; round++) {
    // θ
    const c0 = a00 ^ a05 ^ a10 ^ a15 ^ a20;
    const c1 = a01 ^ a06 ^ a11 ^ a16 ^ a21;
    const c2 = a02 ^ a07 ^ a12 ^ a17 ^ a22;
    const c3 = a03 ^ a08 ^ a13 ^ a18 ^ a23;
    const c4 = a04 ^ a09 ^ a14 ^ a19 ^ a24;
    const d0 = c4 ^ rotl<u64>(c1, 1);
    const d1 = c0 ^ rotl<u64>(c2, 1);
    const d2 = c1 ^ rotl<u64>(c3, 1);
    const d3 = c2 ^ rotl<u64>(c4, 1);
    const d4 = c3 ^ rotl<u64>(c0, 1);
    a00 ^= d0;
    a01 ^= d1;
    a02 ^= d2;
    a03 ^= d3;
    a04 ^= d4;
    a05 ^= d0;
    a06 ^= d1;
    a07 ^= d2;
    a08 ^= d3;
    a09 ^= d4;
    a10 ^= d0;
    a11 ^= d1;
    a12 ^= d2;
    a13 ^= d3;
    a14 ^= d4;
    a15 ^= d0;
    a16 ^= d1;
    a17 ^= d2;
    a18 ^= d3;
    a19 ^= d4;
    a20 ^= d0;
    a21 ^= d1;
    a22 ^= d2;
    a23 ^= d3;
    a24 ^= d4;
    // ρ and π
    const b00 = a00;
    const b01 = rotl<u64>(a06, 44);
    const b02 = rotl<u64>(a12, 43);
    const b03 = rotl<u64>(a18, 21);
    const b04 = rotl<u64>(a24, 14);
    const b05 = rotl<u64>(a03, 28);
    const b06 = rotl<u64>(a09, 20);
    const b07 = rotl<u64>(a10, 3);
    const b08 = rotl<u64>(a16, 45);
    const b09 = rotl<u64>(a22, 61);
    const b10 = rotl<u64>(a01, 1);
    const b11 = rotl<u64>(a07, 6);
    const b12 = rotl<u64>(a13, 25);
    const b13 = rotl<u64>(a19, 8);
    const b14 = rotl<u64>(a20, 18);
    const b15 = rotl<u64>(a04, 27);
    const b16 = rotl<u64>(a05, 36);
    const b17 = rotl<u64>(a11, 10);
    const b18 = rotl<u64>(a17, 15);
    const b19 = rotl<u64>(a23, 56);
    const b20 = rotl<u64>(a02, 62);
    const b21 = rotl<u64>(a08, 55);
    const b22 = rotl<u64>(a14, 39);
    const b23 = rotl<u64>(a15, 41);
    const b24 = rotl<u64>(a21, 2);
    // χ, then ι on lane 0
    a00 = b00 ^ (~b01 & b02);
    a01 = b01 ^ (~b02 & b03);
    a02 = b02 ^ (~b03 & b04);
    a03 = b03 ^ (~b04 & b00);
    a04 = b04 ^ (~b00 & b01);
    a05 = b05 ^ (~b06 & b07);
    a06 = b06 ^ (~b07 & b08);
    a07 = b07 ^ (~b08 & b09);
    a08 = b08 ^ (~b09 & b05);
    a09 = b09 ^ (~b05 & b06);
    a10 = b10 ^ (~b11 & b12);
    a11 = b11 ^ (~b12 & b13);
    a12 = b12 ^ (~b13 & b14);
    a13 = b13 ^ (~b14 & b10);
    a14 = b14 ^ (~b10 & b11);
    a15 = b15 ^ (~b16 & b17);
    a16 = b16 ^ (~b17 & b18);
    a17 = b17 ^ (~b18 & b19);
    a18 = b18 ^ (~b19 & b15);
    a19 = b19 ^ (~b15 & b16);
    a20 = b20 ^ (~b21 & b22);
    a21 = b21 ^ (~b22 & b23);
    a22 = b22 ^ (~b23 & b24);
    a23 = b23 ^ (~b24 & b20);
    a24 = b24 ^ (~b20 & b21);
    a00 ^= load<u64>(RC + (round << 3));
  }
  store<u64>(KECCAK_STATE, a00, 0);
  store<u64>(KECCAK_STATE, a01, 8);
  store<u64>(KECCAK_STATE, a02, 16);
  store<u64>(KECCAK_STATE, a03, 24);
  store<u64>(KECCAK_STATE, a04, 32);
  store<u64>(KECCAK_STATE, a05, 40);
  store<u64>(KECCAK_STATE, a06, 48);
  store<u64>(KECCAK_STATE, a07, 56);
  store<u64>(KECCAK_STATE, a08, 64);
  store<u64>(KECCAK_STATE, a09, 72);
  store<u64>(KECCAK_STATE, a10, 80);
  store<u64>(KECCAK_STATE, a11, 88);
  store<u64>(KECCAK_STATE, a12, 96);
  store<u64>(KECCAK_STATE, a13, 104);
  store<u64>(KECCAK_STATE, a14, 112);
  store<u64>(KECCAK_STATE, a15, 120);
  store<u64>(KECCAK_STATE, a16, 128);
  store<u64>(KECCAK_STATE, a17, 136);
  store<u64>(KECCAK_STATE, a18, 144);
  store<u64>(KECCAK_STATE, a19, 152);
  store<u64>(KECCAK_STATE, a20, 160);
  store<u64>(KECCAK_STATE, a21, 168);
  store<u64>(KECCAK_STATE, a22, 176);
  store<u64>(KECCAK_STATE, a23, 184);
  store<u64>(KECCAK_STATE, a24, 192);
}

/** XORs `rate` bytes at `p` into the state (rate is a multiple of 8). */
function absorb(p: usize, rate: usize): void {
  for (let k: usize = 0; k < rate; k += 8) store<u64>(KECCAK_STATE + k, load<u64>(KECCAK_STATE + k) ^ load<u64>(p + k));
  keccakF1600();
}

/**
 * Hashes each entry's input with SHA-3 of the given output length (28, 32, 48 or 64 bytes);
 * the rate is 200 - 2 * outLen. Entry fields used: E_IN, E_IN_LEN, E_OUT.
 */
export function sha3Batch(table: usize, n: i32, outLen: usize): void {
  const rate: usize = 200 - (outLen << 1);
  for (let i = 0; i < n; i++) {
    const entry = table + <usize>i * ENTRY_SIZE;
    const msg = <usize>load<u32>(entry, E_IN);
    const len = <usize>load<u32>(entry, E_IN_LEN);
    memory.fill(KECCAK_STATE, 0, 200);
    let off: usize = 0;
    for (; off + rate <= len; off += rate) absorb(msg + off, rate);
    const rest = len - off;
    memory.fill(BLOCK, 0, rate);
    memory.copy(BLOCK, msg + off, rest);
    // SHA-3 domain bits 01, then pad10*1.
    store<u8>(BLOCK + rest, load<u8>(BLOCK + rest) | 0x06);
    store<u8>(BLOCK + rate - 1, load<u8>(BLOCK + rate - 1) | 0x80);
    absorb(BLOCK, rate);
    memory.copy(<usize>load<u32>(entry, E_OUT), KECCAK_STATE, outLen);
  }
  memory.fill(KECCAK_STATE, 0, 200);
  memory.fill(BLOCK, 0, 200);
}
