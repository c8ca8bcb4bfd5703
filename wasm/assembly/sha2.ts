// SHA-2 family parameters and the HMAC key schedule shared by the HMAC and HKDF kernels.

import { JOB_RAW, JOB_SIZE, setJob } from './jobs';
import { ALG_SHA224, ALG_SHA256, ALG_SHA384, ensureMemory } from './layout';
import { SHA224_IV, SHA256_IV, sha256Run } from './sha256';
import { SHA384_IV, SHA512_IV, sha512Run } from './sha512';

/** True for the SHA-224/256 engine, false for SHA-384/512. */
// @ts-ignore: decorator
@inline export function isSmall(alg: i32): bool {
  return alg == ALG_SHA224 || alg == ALG_SHA256;
}

export function blockSize(alg: i32): usize {
  return isSmall(alg) ? 64 : 128;
}

export function stateSize(alg: i32): usize {
  return isSmall(alg) ? 32 : 64;
}

export function digestSize(alg: i32): usize {
  if (alg == ALG_SHA224) return 28;
  if (alg == ALG_SHA256) return 32;
  if (alg == ALG_SHA384) return 48;
  return 64;
}

export function initialState(alg: i32): usize {
  if (alg == ALG_SHA224) return SHA224_IV;
  if (alg == ALG_SHA256) return SHA256_IV;
  if (alg == ALG_SHA384) return SHA384_IV;
  return SHA512_IV;
}

export function runJobs(alg: i32, jobs: usize, n: i32): void {
  if (isSmall(alg)) sha256Run(jobs, n);
  else sha512Run(jobs, n);
}

/**
 * HMAC key schedule for `nk` keys: writes, per key k, the chaining state after the ipad block at
 * `states + k*2S` and after the opad block at `states + k*2S + S` (S = state size). Key k is the
 * (u32 pointer, u32 length) pair at `keys + k*stride`. Keys longer than a block are hashed first
 * (RFC 2104). Uses scratch from `scratch` on and wipes what it used.
 */
export function hmacKeyStates(alg: i32, keys: usize, stride: usize, nk: i32, states: usize, scratch: usize): void {
  const B = blockSize(alg);
  const S = stateSize(alg);
  const D = digestSize(alg);
  const digests = scratch;
  const pads = digests + <usize>nk * 64;
  const jobs = pads + <usize>nk * 2 * B;
  const end = jobs + <usize>nk * 2 * JOB_SIZE;
  ensureMemory(end);

  let m = 0;
  for (let k = 0; k < nk; k++) {
    const key = <usize>load<u32>(keys + <usize>k * stride);
    const len = load<u32>(keys + <usize>k * stride, 4);
    if (<usize>len > B) {
      setJob(jobs + <usize>m * JOB_SIZE, key, len, digests + <usize>k * 64, initialState(alg), 0, 0, <u32>D);
      m++;
    }
  }
  runJobs(alg, jobs, m);

  for (let k = 0; k < nk; k++) {
    let key = <usize>load<u32>(keys + <usize>k * stride);
    let len = <usize>load<u32>(keys + <usize>k * stride, 4);
    if (len > B) {
      key = digests + <usize>k * 64;
      len = D;
    }
    const ipad = pads + <usize>k * 2 * B;
    const opad = ipad + B;
    memory.fill(ipad, 0x36, B);
    memory.fill(opad, 0x5c, B);
    for (let j: usize = 0; j < len; j++) {
      const kb = load<u8>(key + j);
      store<u8>(ipad + j, load<u8>(ipad + j) ^ kb);
      store<u8>(opad + j, load<u8>(opad + j) ^ kb);
    }
    const st = states + <usize>k * 2 * S;
    setJob(jobs + <usize>(2 * k) * JOB_SIZE, ipad, <u32>B, st, initialState(alg), 0, JOB_RAW, 0);
    setJob(jobs + <usize>(2 * k + 1) * JOB_SIZE, opad, <u32>B, st + S, initialState(alg), 0, JOB_RAW, 0);
  }
  runJobs(alg, jobs, 2 * nk);
  memory.fill(digests, 0, jobs - digests);
}
