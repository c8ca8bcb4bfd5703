/**
 * AES-CMAC (RFC 4493 §2.3–2.4, NIST SP 800-38B) over OpenSSL's AES through node:crypto: the subkeys
 * from one AES-ECB block, the MAC as the last block of AES-CBC under a zero IV.
 *
 * Written here because Node has no CMAC API, and the one maintained JavaScript CMAC
 * (@noble/ciphers' `cmac`) computes AES with lookup tables, which its README says is not constant
 * time with respect to cache timing: a CMAC key is a long-lived secret, so the AES under it runs in
 * OpenSSL (AES-NI where the CPU has it). The mode around it is these few lines; the tests hold it
 * to RFC 4493's and SP 800-38B's vectors and to @noble/ciphers' `cmac` on random keys and lengths.
 */
import { createCipheriv, type Cipheriv } from 'node:crypto';

const BLOCK = 16;
const ZERO_IV = Buffer.alloc(BLOCK);

/** Doubling in GF(2^128) with the CMAC polynomial (RFC 4493 §2.3), without a branch on the secret bit. */
function double(block: Buffer): Buffer {
  const out = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i++) out[i] = ((block[i]! << 1) | (i + 1 < BLOCK ? block[i + 1]! >> 7 : 0)) & 0xff;
  out[BLOCK - 1]! ^= 0x87 & -(block[0]! >> 7);
  return out;
}

/** One AES-CMAC computation, fed in pieces (`update`) and finished once (`digest`). */
export class AesCmac {
  private readonly cbc: Cipheriv;
  private readonly k1: Buffer;
  private readonly k2: Buffer;
  /** The input not yet given to CBC: the last block is held back until `digest` knows it is last. */
  private pending: Buffer = Buffer.alloc(0);

  constructor(key: Uint8Array) {
    const bits = key.length * 8;
    const ecb = createCipheriv(`aes-${bits}-ecb`, key, null);
    ecb.setAutoPadding(false);
    const l = ecb.update(ZERO_IV);
    this.k1 = double(l);
    this.k2 = double(this.k1);
    l.fill(0);
    this.cbc = createCipheriv(`aes-${bits}-cbc`, key, ZERO_IV);
    this.cbc.setAutoPadding(false);
  }

  update(data: Uint8Array): this {
    const all = this.pending.length === 0 ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.concat([this.pending, data]);
    // Hold back the last 1–16 bytes: whether they are a complete block decides the subkey.
    const hold = all.length === 0 ? 0 : ((all.length - 1) % BLOCK) + 1;
    if (all.length > hold) this.cbc.update(all.subarray(0, all.length - hold));
    this.pending = Buffer.from(all.subarray(all.length - hold));
    return this;
  }

  /** The 16-byte MAC. */
  digest(): Buffer {
    const complete = this.pending.length === BLOCK;
    const last = Buffer.alloc(BLOCK);
    this.pending.copy(last);
    if (!complete) last[this.pending.length] = 0x80;
    const subkey = complete ? this.k1 : this.k2;
    for (let i = 0; i < BLOCK; i++) last[i]! ^= subkey[i]!;
    const out = this.cbc.update(last);
    this.cbc.final();
    this.k1.fill(0);
    this.k2.fill(0);
    return out.subarray(out.length - BLOCK);
  }
}
