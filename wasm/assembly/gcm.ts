// AES-GCM (NIST SP 800-38D) batches. The counter blocks, the CTR XOR, GHASH, the tag and its
// constant-time check are done here; the AES block function comes one of two ways, both
// constant-time:
//
// - Hybrid (one key per batch): one native `aes-*-ecb` call over all counter blocks of the batch,
//   in place (AES-NI). Per batch: gcmCounters → native ECB → gcmSeal/gcmOpen.
// - Bitsliced (aes.ts, gcmWasm): everything in one call. Used where the native cipher object
//   costs more than it saves: one key per item (derived keys) and batches of a few items. One
//   key's schedule and hash key are kept between calls (keycache.ts).
//
// Why both (bench/wasm-crypto.bench.ts; the figures are in bench/README.md, "The WASM kernels"):
// with one key, the hybrid path is the faster at every size; with one key per item the hybrid
// path needs a native cipher per item, and the bitsliced one wins; so it does for a single small
// item, where the native call costs more than the block function.
//
// Keystream layout (in blocks): [H = E(0^128)] once for a one-key batch, then per item:
// [H, only when keys are per item] [E(J0)] [E(J0+1)] ... one block per 16 bytes of text.

import { ROUND_KEYS_SIZE, encryptBlocks, expandKeys, roundsFor } from './aes';
import { ENTRY_SIZE, E_A, E_B, E_B_LEN, E_IN, E_IN_LEN, E_OUT, E_STATUS, ensureMemory } from './layout';
import { HKEY_SIZE, ghashFinish, ghashReset, ghashUpdate, prepareHashKey, restoreHashKey, saveHashKey } from './ghash';
import { K_HASH_KEY, K_ROUND_KEYS, findKey, storeKey } from './keycache';

// @ts-ignore: decorator
@inline function align16(p: usize): usize {
  return (p + 15) & ~(<usize>15);
}

// @ts-ignore: decorator
@inline function blocksOf(len: usize): usize {
  return (len + 15) >> 4;
}

/**
 * Writes the counter blocks of every entry (nonce E_A, 12 bytes; text length E_IN_LEN) to `ctr`,
 * laid out as the keystream will be (see above). Returns the end of the region.
 */
export function gcmCounters(table: usize, n: i32, ctr: usize, perItemKey: i32): usize {
  let p = ctr;
  const zero = i64x2.splat(0);
  if (perItemKey == 0) {
    v128.store(p, zero);
    p += 16;
  }
  for (let i = 0; i < n; i++) {
    const entry = table + <usize>i * ENTRY_SIZE;
    if (perItemKey != 0) {
      v128.store(p, zero);
      p += 16;
    }
    const nonce = <usize>load<u32>(entry, E_A);
    const n0 = load<u64>(nonce);
    const n1 = load<u32>(nonce, 8);
    const last = <u32>blocksOf(<usize>load<u32>(entry, E_IN_LEN)) + 1;
    for (let c: u32 = 1; c <= last; c++) {
      store<u64>(p, n0);
      store<u32>(p, n1, 8);
      store<u32>(p, bswap<u32>(c), 12);
      p += 16;
    }
  }
  return p;
}

/** out = (in xor keystream) & mask, for `len` bytes. */
function xorStream(out: usize, input: usize, ks: usize, len: usize, mask: u64): void {
  const m = i64x2.splat(<i64>mask);
  let off: usize = 0;
  for (; off + 16 <= len; off += 16) {
    v128.store(out + off, v128.and(v128.xor(v128.load(input + off), v128.load(ks + off)), m));
  }
  const mb = <u8>mask;
  for (; off < len; off++) store<u8>(out + off, (load<u8>(input + off) ^ load<u8>(ks + off)) & mb);
}

/**
 * Encrypts every entry: plaintext (E_IN, E_IN_LEN), AAD (E_B, E_B_LEN), output ciphertext‖tag at
 * E_OUT (E_IN_LEN + 16 bytes). `ks` is the keystream produced from gcmCounters' region; `hk` is
 * HKEY_SIZE bytes of scratch, wiped before return.
 */
export function gcmSeal(table: usize, n: i32, ks: usize, perItemKey: i32, hk: usize): void {
  sealItems(table, n, ks, perItemKey, hk, false);
  memory.fill(hk, 0, HKEY_SIZE);
}

/** gcmSeal without the wipe; with `keyReady`, the one key's hash key is already prepared at `hk` (its keystream block is skipped). */
function sealItems(table: usize, n: i32, ks: usize, perItemKey: i32, hk: usize, keyReady: bool): void {
  let p = ks;
  if (perItemKey == 0) {
    if (!keyReady) prepareHashKey(p, hk);
    p += 16;
  }
  for (let i = 0; i < n; i++) {
    const entry = table + <usize>i * ENTRY_SIZE;
    if (perItemKey != 0) {
      prepareHashKey(p, hk);
      p += 16;
    }
    const ekj0 = p;
    p += 16;
    const len = <usize>load<u32>(entry, E_IN_LEN);
    const out = <usize>load<u32>(entry, E_OUT);
    const aadLen = <usize>load<u32>(entry, E_B_LEN);
    xorStream(out, <usize>load<u32>(entry, E_IN), p, len, <u64>-1);
    ghashReset();
    ghashUpdate(<usize>load<u32>(entry, E_B), aadLen, hk);
    ghashUpdate(out, len, hk);
    v128.store(out + len, ghashFinish(aadLen, len, hk, ekj0));
    p += blocksOf(len) << 4;
  }
}

/**
 * Decrypts every entry: ciphertext (E_IN, E_IN_LEN) followed by its 16-byte tag, AAD (E_B,
 * E_B_LEN), plaintext to E_OUT. Each tag is checked on its own without branching on secrets;
 * E_STATUS gets 1 when it matches and 0 when not, and a rejected item's output is all zeros.
 */
export function gcmOpen(table: usize, n: i32, ks: usize, perItemKey: i32, hk: usize): void {
  openItems(table, n, ks, perItemKey, hk, false);
  memory.fill(hk, 0, HKEY_SIZE);
}

/** gcmOpen without the wipe; `keyReady` as for sealItems. */
function openItems(table: usize, n: i32, ks: usize, perItemKey: i32, hk: usize, keyReady: bool): void {
  let p = ks;
  if (perItemKey == 0) {
    if (!keyReady) prepareHashKey(p, hk);
    p += 16;
  }
  for (let i = 0; i < n; i++) {
    const entry = table + <usize>i * ENTRY_SIZE;
    if (perItemKey != 0) {
      prepareHashKey(p, hk);
      p += 16;
    }
    const ekj0 = p;
    p += 16;
    const input = <usize>load<u32>(entry, E_IN);
    const len = <usize>load<u32>(entry, E_IN_LEN);
    const aadLen = <usize>load<u32>(entry, E_B_LEN);
    ghashReset();
    ghashUpdate(<usize>load<u32>(entry, E_B), aadLen, hk);
    ghashUpdate(input, len, hk);
    const diff = v128.xor(ghashFinish(aadLen, len, hk, ekj0), v128.load(input + len));
    const d = <u64>(i64x2.extract_lane(diff, 0) | i64x2.extract_lane(diff, 1));
    const ok = ((d | (0 - d)) >> 63) ^ 1;
    xorStream(<usize>load<u32>(entry, E_OUT), input, p, len, 0 - ok);
    store<u32>(entry, <u32>ok, E_STATUS);
    p += blocksOf(len) << 4;
  }
}

/**
 * The all-WASM path: counters, bitsliced AES-128/256 over them, then the seal (open = 0) or open
 * (open = 1) of every entry, in one call. Keys are `keyLen` (16 or 32) bytes each, packed at
 * `keys`: one key, or one per entry when `perItemKey` is non-zero. One key's round keys and
 * prepared hash key come from the key cache (keycache.ts), made and stored there when the key is
 * not in it; a hit skips the key schedule, the block for H and H's preparation. Keys per item are
 * expanded into scratch. Everything from `scratch` on that it used (counters, keystream, round
 * keys, hash key) is wiped before return; the cache is not.
 */
export function gcmWasm(open: i32, table: usize, n: i32, keys: usize, keyLen: usize, perItemKey: i32, scratch: usize): void {
  const ctr = align16(scratch);
  const end = gcmCounters(table, n, ctr, perItemKey);
  const blocks = (end - ctr) >> 4;
  const nk: usize = perItemKey != 0 ? <usize>n : 0;
  const roundKeys = align16(end);
  const keyOf = roundKeys + nk * ROUND_KEYS_SIZE;
  const hk = align16(keyOf + (blocks << 2));
  ensureMemory(hk + HKEY_SIZE);
  let cached: usize = 0;
  let hit = false;
  if (perItemKey == 0) {
    cached = findKey(keys, keyLen);
    hit = cached != 0;
    if (hit) restoreHashKey(cached + K_HASH_KEY, hk);
    else cached = storeKey(keys, keyLen);
    for (let b: usize = 0; b < blocks; b++) store<u32>(keyOf + (b << 2), <u32>(cached + K_ROUND_KEYS));
  } else {
    expandKeys(keys, keyLen, nk, roundKeys);
    let b: usize = 0;
    for (let i: usize = 0; i < <usize>n; i++) {
      const count = blocksOf(<usize>load<u32>(table + i * ENTRY_SIZE, E_IN_LEN)) + 2;
      const rk = <u32>(roundKeys + i * ROUND_KEYS_SIZE);
      for (let k: usize = 0; k < count; k++) store<u32>(keyOf + ((b + k) << 2), rk);
      b += count;
    }
  }
  // With the hash key cached, the first counter block (0^128, for H) is left as it is.
  const first: usize = hit ? 1 : 0;
  encryptBlocks(ctr + (first << 4), blocks - first, keyOf + (first << 2), roundsFor(keyLen));
  if (open != 0) openItems(table, n, ctr, perItemKey, hk, hit);
  else sealItems(table, n, ctr, perItemKey, hk, hit);
  // Keeps H (and H^2..H^8 once prepared) for the next call with this key.
  if (cached != 0) saveHashKey(hk, cached + K_HASH_KEY);
  memory.fill(hk, 0, HKEY_SIZE);
  memory.fill(ctr, 0, hk - ctr);
}
