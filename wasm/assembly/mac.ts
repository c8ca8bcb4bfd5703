// HMAC-SHA-256/384/512 (RFC 2104) and HKDF-SHA-256 (RFC 5869) batches, as job lists for the SHA-2
// engines: key pads once per key, then every item's inner hash in one run and every outer hash in
// a second run, so the 4-lane SHA-256 engine stays full.

import { JOB_SIZE, setJob } from './jobs';
import { ALG_SHA256, ENTRY_SIZE, E_A, E_B, E_B_LEN, E_IN, E_IN_LEN, E_OUT, ensureMemory } from './layout';
import { blockSize, digestSize, hmacKeyStates, runJobs, stateSize } from './sha2';

// @ts-ignore: decorator
@inline function align16(p: usize): usize {
  return (p + 15) & ~(<usize>15);
}

/**
 * HMAC of every entry's input (E_IN, E_IN_LEN) into E_OUT (digest size bytes). The key is each
 * entry's (E_A, E_A_LEN), or entry 0's for all items when `sharedKey` is non-zero.
 * Scratch use from `scratch`: nk*(2S + 64 + 2B + 64) + max(n, 1)*32 bytes plus alignment,
 * nk = 1 or n; wiped before return.
 */
export function hmacBatch(alg: i32, table: usize, n: i32, sharedKey: i32, scratch: usize): void {
  const nk = sharedKey != 0 ? 1 : n;
  const B = blockSize(alg);
  const S = stateSize(alg);
  const D = digestSize(alg);
  const states = align16(scratch);
  const jobs = align16(states + <usize>nk * 2 * S);
  ensureMemory(jobs + <usize>n * JOB_SIZE);
  hmacKeyStates(alg, table + E_A, ENTRY_SIZE, nk, states, jobs);

  for (let i = 0; i < n; i++) {
    const entry = table + <usize>i * ENTRY_SIZE;
    const st = states + (sharedKey != 0 ? 0 : <usize>i * 2 * S);
    setJob(jobs + <usize>i * JOB_SIZE, <usize>load<u32>(entry, E_IN), load<u32>(entry, E_IN_LEN),
      <usize>load<u32>(entry, E_OUT), st, <u32>B, 0, <u32>D);
  }
  runJobs(alg, jobs, n);
  for (let i = 0; i < n; i++) {
    const entry = table + <usize>i * ENTRY_SIZE;
    const st = states + (sharedKey != 0 ? 0 : <usize>i * 2 * S) + S;
    const out = <usize>load<u32>(entry, E_OUT);
    setJob(jobs + <usize>i * JOB_SIZE, out, <u32>D, out, st, <u32>B, 0, <u32>D);
  }
  runJobs(alg, jobs, n);
  memory.fill(states, 0, jobs - states);
}

/**
 * HKDF-SHA-256 (RFC 5869) of every entry: IKM (E_IN, E_IN_LEN), info (E_B, E_B_LEN), output of
 * `outLen` bytes (at most 255*32) into E_OUT. One salt for the batch (may be empty). With
 * `sharedIkm` non-zero, entry 0's IKM is used for all items, so extraction runs once.
 * Scratch use: see hkdfScratchBytes in the loader; wiped before return.
 */
export function hkdfSha256Batch(table: usize, n: i32, salt: usize, saltLen: u32, outLen: u32, sharedIkm: i32, scratch: usize): void {
  const np = sharedIkm != 0 ? 1 : n;
  // Layout: salt key pair, salt states (64), PRK key pairs (np*8), PRKs (np*32), PRK states (np*64),
  // T blocks (n*32), message buffers (per item 32 + info + 1), jobs (max(n, np)*32).
  const saltKey = align16(scratch);
  const saltStates = saltKey + 16;
  const prkKeys = saltStates + 64;
  const prks = align16(prkKeys + <usize>np * 8);
  const prkStates = prks + <usize>np * 32;
  const blocks = prkStates + <usize>np * 64;
  const msgs = blocks + <usize>n * 32;
  let msgEnd = msgs;
  for (let i = 0; i < n; i++) msgEnd += align16(33 + <usize>load<u32>(table + <usize>i * ENTRY_SIZE, E_B_LEN));
  const jobs = msgEnd;
  const keyScratch = jobs + <usize>n * JOB_SIZE;
  ensureMemory(keyScratch);

  // Extract: PRK = HMAC(salt, IKM).
  store<u32>(saltKey, <u32>salt);
  store<u32>(saltKey, saltLen, 4);
  hmacKeyStates(ALG_SHA256, saltKey, 8, 1, saltStates, keyScratch);
  for (let k = 0; k < np; k++) {
    const entry = table + <usize>k * ENTRY_SIZE;
    setJob(jobs + <usize>k * JOB_SIZE, <usize>load<u32>(entry, E_IN), load<u32>(entry, E_IN_LEN),
      prks + <usize>k * 32, saltStates, 64, 0, 32);
  }
  runJobs(ALG_SHA256, jobs, np);
  for (let k = 0; k < np; k++) {
    const prk = prks + <usize>k * 32;
    setJob(jobs + <usize>k * JOB_SIZE, prk, 32, prk, saltStates + 32, 64, 0, 32);
    store<u32>(prkKeys + <usize>k * 8, <u32>prk);
    store<u32>(prkKeys + <usize>k * 8, 32, 4);
  }
  runJobs(ALG_SHA256, jobs, np);
  hmacKeyStates(ALG_SHA256, prkKeys, 8, np, prkStates, keyScratch);

  // Expand: T(j) = HMAC(PRK, T(j-1) | info | j). Each item's buffer holds T(j-1) in its first
  // 32 bytes, then info and the counter byte; T(1) hashes the buffer from offset 32.
  let msg = msgs;
  for (let i = 0; i < n; i++) {
    const entry = table + <usize>i * ENTRY_SIZE;
    const infoLen = <usize>load<u32>(entry, E_B_LEN);
    memory.copy(msg + 32, <usize>load<u32>(entry, E_B), infoLen);
    msg += align16(33 + infoLen);
  }
  const rounds = (outLen + 31) >> 5;
  for (let j: u32 = 1; j <= rounds; j++) {
    msg = msgs;
    for (let i = 0; i < n; i++) {
      const entry = table + <usize>i * ENTRY_SIZE;
      const infoLen = <usize>load<u32>(entry, E_B_LEN);
      store<u8>(msg + 32 + infoLen, <u8>j);
      const from = j == 1 ? msg + 32 : msg;
      const len = <u32>(infoLen + 1) + (j == 1 ? 0 : 32);
      const st = prkStates + (sharedIkm != 0 ? 0 : <usize>i * 64);
      setJob(jobs + <usize>i * JOB_SIZE, from, len, blocks + <usize>i * 32, st, 64, 0, 32);
      msg += align16(33 + infoLen);
    }
    runJobs(ALG_SHA256, jobs, n);
    for (let i = 0; i < n; i++) {
      const t = blocks + <usize>i * 32;
      const st = prkStates + (sharedIkm != 0 ? 0 : <usize>i * 64) + 32;
      setJob(jobs + <usize>i * JOB_SIZE, t, 32, t, st, 64, 0, 32);
    }
    runJobs(ALG_SHA256, jobs, n);
    const done = (j - 1) << 5;
    const take = <usize>(outLen - done < 32 ? outLen - done : <u32>32);
    msg = msgs;
    for (let i = 0; i < n; i++) {
      const entry = table + <usize>i * ENTRY_SIZE;
      const t = blocks + <usize>i * 32;
      memory.copy(<usize>load<u32>(entry, E_OUT) + <usize>done, t, take);
      memory.copy(msg, t, 32);
      msg += align16(33 + <usize>load<u32>(entry, E_B_LEN));
    }
  }
  memory.fill(saltKey, 0, jobs - saltKey);
}
