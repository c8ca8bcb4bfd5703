// The key cache of the all-WASM GCM path (gcm.ts gcmWasm, one key per batch). Why: a single small
// seal or open spends about as much on its key as on its data: the bitsliced key schedule (14
// SubWord evaluations for AES-256, 15 round keys replicated into planes), the block for
// H = E_K(0^128) and H's preparation for GHASH. Consecutive requests almost always use the same
// key, so the last KEY_CACHE_ENTRIES keys keep their replicated round keys and their prepared hash
// key (ghash.ts saveHashKey: H^1, and H^2..H^8 once a call has needed them) here, and a call with
// one of them skips all three.
//
// A key is recognised by its bytes and length, compared in constant time with every entry: each
// call copies its key into the arena, so a key buffer changed in place or reused for another key
// is never taken for the old one. What a hit can reveal through timing is that the key was used
// recently (the request names it anyway), never anything about its bits: no branch or index
// depends on how the bytes compare, only on the match as a whole.
//
// The cache is a static data segment below __heap_base, so the loader's arena and its wiping
// never reach it. Replacing an entry wipes it first; keyCacheForget (WasmCrypto.forgetKeys, run
// when the server seals) zeroes all of it.

import { ROUND_KEYS_SIZE, expandKeys } from './aes';
import { SAVED_HKEY_SIZE } from './ghash';

/** Keys kept: the least recently used is replaced. */
const KEY_CACHE_ENTRIES: usize = 4;

// Layout of an entry: the key (32 bytes; an AES-128 key is followed by 16 zero bytes), its length
// (u32; 0 = empty), 4 spare, the last use (u64), the replicated round keys (aes.ts), then the
// saved hash key (ghash.ts).
const K_KEY: usize = 0;
const K_LEN: usize = 32;
const K_USED: usize = 40;
/** Offset of an entry's replicated round keys (ROUND_KEYS_SIZE bytes). */
export const K_ROUND_KEYS: usize = 48;
/** Offset of an entry's saved hash key (SAVED_HKEY_SIZE bytes). */
export const K_HASH_KEY: usize = K_ROUND_KEYS + ROUND_KEYS_SIZE;
/** Bytes per entry: 48 + 1920 + 2720 = 4688, a multiple of 16. */
const ENTRY_BYTES: usize = K_HASH_KEY + SAVED_HKEY_SIZE;
const KEY_CACHE_BYTES: usize = KEY_CACHE_ENTRIES * ENTRY_BYTES;

const KEY_CACHE = memory.data(<i32>KEY_CACHE_BYTES, 16);

/** Counts lookups; an entry's K_USED is the count at its last use. */
let uses: u64 = 0;

/** 1 when the `keyLen` bytes at `key` are the key of `entry`, else 0, in the same time whichever bytes differ. */
function sameKey(entry: usize, key: usize, keyLen: usize): u64 {
  let diff = v128.xor(v128.load(key), v128.load(entry, K_KEY));
  if (keyLen == 32) diff = v128.or(diff, v128.xor(v128.load(key, 16), v128.load(entry, K_KEY + 16)));
  const d = <u64>(i64x2.extract_lane(diff, 0) | i64x2.extract_lane(diff, 1));
  const same = ((d | (0 - d)) >> 63) ^ 1;
  // Lengths are public.
  return load<u32>(entry, K_LEN) == <u32>keyLen ? same : 0;
}

/**
 * The entry holding the `keyLen`-byte (16 or 32) key at `key`, or 0. Every entry is compared and
 * the match picked by mask.
 */
export function findKey(key: usize, keyLen: usize): usize {
  let found: usize = 0;
  for (let i: usize = 0; i < KEY_CACHE_ENTRIES; i++) {
    const entry = KEY_CACHE + i * ENTRY_BYTES;
    found |= entry & <usize>(0 - sameKey(entry, key, keyLen));
  }
  uses++;
  if (found != 0) store<u64>(found, uses, K_USED);
  return found;
}

/**
 * Wipes the least recently used entry (an empty one first) and gives it the key at `key` and its
 * round keys; returns it. Its saved hash key is left empty for the caller (ghash.ts saveHashKey at
 * K_HASH_KEY once H is prepared).
 */
export function storeKey(key: usize, keyLen: usize): usize {
  let entry = KEY_CACHE;
  for (let i: usize = 1; i < KEY_CACHE_ENTRIES; i++) {
    const other = KEY_CACHE + i * ENTRY_BYTES;
    if (load<u64>(other, K_USED) < load<u64>(entry, K_USED)) entry = other;
  }
  memory.fill(entry, 0, ENTRY_BYTES);
  memory.copy(entry + K_KEY, key, keyLen);
  store<u32>(entry, <u32>keyLen, K_LEN);
  store<u64>(entry, uses, K_USED);
  expandKeys(key, keyLen, 1, entry + K_ROUND_KEYS);
  return entry;
}

/** Zeroes every entry: keys, round keys and hash keys (WasmCrypto.forgetKeys). */
export function keyCacheForget(): void {
  memory.fill(KEY_CACHE, 0, KEY_CACHE_BYTES);
}

/** Where the cache lies in linear memory, so tests can check what keyCacheForget leaves. */
export function keyCacheRegion(): usize {
  return KEY_CACHE;
}

/** Bytes of the cache from keyCacheRegion(). */
export function keyCacheSize(): usize {
  return KEY_CACHE_BYTES;
}
