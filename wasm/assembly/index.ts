// Exports of the Keywarden WASM crypto core. Every kernel takes a table of 32-byte entries
// (layout.ts) and handles the whole batch in one call; the typed loader is wasm/index.ts.
// Constant-time rules for all kernels: branches and memory indices depend only on lengths, counts
// and algorithm choices, never on key, message or tag bytes.

import { JOB_SIZE, setJob } from './jobs';
import { ALG_SHA3_224, ALG_SHA3_256, ALG_SHA3_384, ENTRY_SIZE, E_IN, E_IN_LEN, E_OUT, ensureMemory } from './layout';
import { sha3Batch } from './keccak';
import { digestSize, initialState, runJobs } from './sha2';

export { gcmCounters, gcmOpen, gcmSeal, gcmWasm } from './gcm';
export { hkdfSha256Batch, hmacBatch } from './mac';

/** First address the loader may use for its arena. */
export function heapBase(): usize {
  return __heap_base;
}

function sha3DigestSize(alg: i32): usize {
  if (alg == ALG_SHA3_224) return 28;
  if (alg == ALG_SHA3_256) return 32;
  if (alg == ALG_SHA3_384) return 48;
  return 64;
}

/**
 * Hashes every entry's input (E_IN, E_IN_LEN) into E_OUT with `alg` (layout.ts ALG_*).
 * SHA-2 uses n*32 bytes of scratch for its job table.
 */
export function hashBatch(alg: i32, table: usize, n: i32, scratch: usize): void {
  if (alg >= ALG_SHA3_224) {
    sha3Batch(table, n, sha3DigestSize(alg));
    return;
  }
  const jobs = (scratch + 15) & ~(<usize>15);
  ensureMemory(jobs + <usize>n * JOB_SIZE);
  const iv = initialState(alg);
  const outLen = <u32>digestSize(alg);
  for (let i = 0; i < n; i++) {
    const entry = table + <usize>i * ENTRY_SIZE;
    setJob(jobs + <usize>i * JOB_SIZE, <usize>load<u32>(entry, E_IN), load<u32>(entry, E_IN_LEN),
      <usize>load<u32>(entry, E_OUT), iv, 0, 0, outLen);
  }
  runJobs(alg, jobs, n);
}
