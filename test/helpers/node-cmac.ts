/**
 * AES-CMAC (RFC 4493 §2.3, 2.4) built from node:crypto's AES (OpenSSL): the subkeys from one
 * AES-ECB block, the MAC as the last block of AES-CBC under a zero IV. Node has no CMAC API; this
 * is the second implementation transit's CMAC (@noble/ciphers) is checked against, and the
 * baseline of the CMAC rows of `npm run bench -- transit-ops`.
 */
import { createCipheriv } from 'node:crypto';

const BLOCK = 16;

/** Doubling in GF(2^128) with the CMAC polynomial (RFC 4493 §2.3, the `<<` and `Rb` steps). */
function double(block: Buffer): Buffer {
  const out = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i++) out[i] = ((block[i]! << 1) | (i + 1 < BLOCK ? block[i + 1]! >> 7 : 0)) & 0xff;
  if (block[0]! & 0x80) out[BLOCK - 1]! ^= 0x87;
  return out;
}

function aes(mode: 'ecb' | 'cbc', key: Uint8Array, data: Uint8Array): Buffer {
  const cipher = createCipheriv(`aes-${key.length * 8}-${mode}`, key, mode === 'ecb' ? null : Buffer.alloc(BLOCK));
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

/** K1 and K2 of a key (RFC 4493 §2.3). */
export function nodeCmacSubkeys(key: Uint8Array): { k1: Buffer; k2: Buffer } {
  const k1 = double(aes('ecb', key, Buffer.alloc(BLOCK)));
  return { k1, k2: double(k1) };
}

/** The 16-byte AES-CMAC of `message` under a 16-, 24- or 32-byte key. */
export function nodeCmac(key: Uint8Array, message: Uint8Array): Buffer {
  const { k1, k2 } = nodeCmacSubkeys(key);
  const blocks = Math.max(1, Math.ceil(message.length / BLOCK));
  const complete = message.length > 0 && message.length % BLOCK === 0;
  const tail = message.subarray((blocks - 1) * BLOCK);
  const last = Buffer.alloc(BLOCK);
  Buffer.from(tail).copy(last);
  if (!complete) last[tail.length] = 0x80;
  const subkey = complete ? k1 : k2;
  for (let i = 0; i < BLOCK; i++) last[i]! ^= subkey[i]!;
  const chained = aes('cbc', key, Buffer.concat([message.subarray(0, (blocks - 1) * BLOCK), last]));
  return chained.subarray(chained.length - BLOCK);
}
