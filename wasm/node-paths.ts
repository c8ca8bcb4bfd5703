/**
 * The per-item node:crypto path of every primitive: what the dispatcher uses for large items, and
 * the reference the differential tests compare the kernels against.
 */
// Keyed with a KeyObject: on Node 24 node:crypto turns key bytes into a key object on every call
// at several times the cost of making one (bench/README.md, "Storage reads").
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hash as oneShotHash, hkdfSync, type CipherGCMTypes } from 'node:crypto';

function aesBits(key: Uint8Array): 128 | 192 | 256 {
  if (key.length !== 16 && key.length !== 24 && key.length !== 32) {
    throw new RangeError(`AES key must be 16, 24 or 32 bytes, got ${key.length}`);
  }
  return (key.length * 8) as 128 | 192 | 256;
}

/** OpenSSL name of AES-GCM for a key of 16, 24 or 32 bytes; RangeError for other sizes. */
export function gcmCipherName(key: Uint8Array): CipherGCMTypes {
  return `aes-${aesBits(key)}-gcm`;
}

/** OpenSSL name of AES-ECB for the key (the hybrid path's keystream cipher). */
export function ecbCipherName(key: Uint8Array): string {
  return `aes-${aesBits(key)}-ecb`;
}

/** AES-GCM encryption of one item: ciphertext‖tag (16-byte tag). */
export function nodeGcmSeal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Buffer {
  const cipher = createCipheriv(gcmCipherName(key), createSecretKey(key), nonce);
  if (aad !== undefined && aad.length > 0) cipher.setAAD(aad);
  const body = cipher.update(plaintext);
  cipher.final();
  return Buffer.concat([body, cipher.getAuthTag()]);
}

/** AES-GCM decryption of ciphertext‖tag; null when the tag does not verify. */
export function nodeGcmOpen(key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad?: Uint8Array): Buffer | null {
  if (sealed.length < 16) return null;
  const decipher = createDecipheriv(gcmCipherName(key), createSecretKey(key), nonce);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  if (aad !== undefined && aad.length > 0) decipher.setAAD(aad);
  const body = decipher.update(sealed.subarray(0, sealed.length - 16));
  try {
    decipher.final();
  } catch {
    return null;
  }
  return body;
}

/** One digest with node's one-shot `crypto.hash` (cheaper per call than createHash). */
export function nodeHash(alg: string, input: Uint8Array): Buffer {
  return oneShotHash(alg, input, 'buffer');
}

export function nodeHmac(alg: string, key: Uint8Array, input: Uint8Array): Buffer {
  return createHmac(alg, createSecretKey(key)).update(input).digest();
}

export function nodeHkdfSha256(ikm: Uint8Array, info: Uint8Array, length: number, salt: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', createSecretKey(ikm), salt, info, length));
}
