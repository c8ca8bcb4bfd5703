// Exports of the Keywarden WASM crypto core. Every kernel takes a table of 32-byte entries
// (layout.ts) and handles the whole batch in one call; the typed loader is wasm/index.ts.
// Constant-time rules for all kernels: branches and memory indices depend only on lengths, counts
// and algorithm choices, never on key, message or tag bytes.

import { JOB_SIZE, setJob } from './jobs';
import { ALG_SHA3_224, ALG_SHA3_256, ALG_SHA3_384, ENTRY_SIZE, E_IN, E_IN_LEN, E_OUT, ensureMemory } from './layout';
import { sha3Batch } from './keccak';
import { digestSize, initialState, isSmall, runJobs } from './sha2';
import { sha256SameLength } from './sha256';

export { gcmCounters, gcmOpen, gcmSeal, gcmWasm } from './gcm';
export { keyCacheForget, keyCacheRegion, keyCacheSize } from './keycache';
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

/** True when every entry's input has the same length as entry 0's. */
function sameLength(table: usize, n: i32): bool {
  const len = load<u32>(table, E_IN_LEN);
  for (let i = 1; i < n; i++) {
    if (load<u32>(table + <usize>i * ENTRY_SIZE, E_IN_LEN) != len) return false;
  }
  return true;
}

/**
 * Hashes every entry's input (E_IN, E_IN_LEN) into E_OUT with `alg` (layout.ts ALG_*).
 * SHA-2 uses n*32 bytes of scratch for its job table; SHA-224/256 batches whose inputs all have
 * one length take sha256SameLength instead and use none.
 */
export function hashBatch(alg: i32, table: usize, n: i32, scratch: usize): void {
  if (alg >= ALG_SHA3_224) {
    sha3Batch(table, n, sha3DigestSize(alg));
    return;
  }
  if (isSmall(alg) && n > 0 && sameLength(table, n)) {
    sha256SameLength(table, n, load<u32>(table, E_IN_LEN), initialState(alg), <u32>digestSize(alg));
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
