// Batch descriptor layout shared with the loader (wasm/index.ts, `Entry`): one 32-byte entry per
// item, eight u32 fields. A kernel reads each item's buffers through its entry, so a whole batch
// crosses the JS↔WASM boundary as one call with one table pointer.

/** Bytes per entry. */
export const ENTRY_SIZE: usize = 32;
/** Main input: message, IKM, plaintext or ciphertext (without tag). */
export const E_IN: usize = 0;
export const E_IN_LEN: usize = 4;
/** Where the kernel writes the item's result. */
export const E_OUT: usize = 8;
/** Second buffer: HMAC key, GCM nonce. */
export const E_A: usize = 12;
export const E_A_LEN: usize = 16;
/** Third buffer: GCM AAD, HKDF info. */
export const E_B: usize = 20;
export const E_B_LEN: usize = 24;
/** Written by kernels that can fail per item (GCM open): 1 = ok, 0 = rejected. */
export const E_STATUS: usize = 28;

/** Algorithm identifiers; the loader keeps the same numbers. */
export const ALG_SHA224: i32 = 1;
export const ALG_SHA256: i32 = 2;
export const ALG_SHA384: i32 = 3;
export const ALG_SHA512: i32 = 4;
export const ALG_SHA3_224: i32 = 5;
export const ALG_SHA3_256: i32 = 6;
export const ALG_SHA3_384: i32 = 7;
export const ALG_SHA3_512: i32 = 8;

/** Grows linear memory so that [0, end) is addressable; the loader sizes memory up front, this only guards. */
export function ensureMemory(end: usize): void {
  const have = (<usize>memory.size()) << 16;
  if (end > have) {
    const pages = <i32>((end - have + 0xffff) >> 16);
    if (memory.grow(pages) < 0) unreachable();
  }
}

/** Stores `x` big-endian at `p`. */
// @ts-ignore: decorator
@inline export function storeBE32(p: usize, x: u32): void {
  store<u32>(p, bswap<u32>(x));
}

// @ts-ignore: decorator
@inline export function storeBE64(p: usize, x: u64): void {
  store<u64>(p, bswap<u64>(x));
}

// @ts-ignore: decorator
@inline export function loadBE64(p: usize): u64 {
  return bswap<u64>(load<u64>(p));
}
