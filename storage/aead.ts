import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';
import { IntegrityError, InternalError } from '../core/errors.js';

/** AES-GCM's 96-bit nonce: the one size GCM uses without an extra GHASH pass. */
export const GCM_NONCE_LENGTH = 12;
export const GCM_TAG_LENGTH = 16;
export const AES256_KEY_LENGTH = 32;

/**
 * AES-256-GCM with a fresh random nonce. Returns `nonce(12) ‖ ciphertext ‖ tag(16)`.
 * Random 96-bit nonces are safe for well under 2^32 messages per key; the barrier's keyring
 * rotation is what keeps a key below that.
 */
export function gcmSeal(key: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Buffer {
  return gcmSealWithNonce(key, randomBytes(GCM_NONCE_LENGTH), plaintext, aad);
}

/**
 * As `gcmSeal` with a nonce the caller chose — for batch paths that draw every nonce from one
 * random fill, and for known-answer tests. The caller guarantees the nonce is never reused with
 * this key: a repeat reveals the XOR of two plaintexts and lets anyone forge tags.
 */
export function gcmSealWithNonce(key: Uint8Array | KeyObject, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Buffer {
  checkKey(key);
  if (nonce.length !== GCM_NONCE_LENGTH) throw new InternalError(`GCM nonce must be ${GCM_NONCE_LENGTH} bytes`);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: GCM_TAG_LENGTH });
  if (aad !== undefined) cipher.setAAD(aad);
  const body = cipher.update(plaintext);
  const final = cipher.final();
  return Buffer.concat([nonce, body, final, cipher.getAuthTag()]);
}

/**
 * Opens `nonce ‖ ciphertext ‖ tag`. Any failure — too short, wrong key, wrong AAD, a changed bit —
 * is an IntegrityError: a caller must never see unauthenticated plaintext.
 */
export function gcmOpen(key: Uint8Array | KeyObject, sealed: Uint8Array, aad?: Uint8Array): Buffer {
  checkKey(key);
  if (sealed.length < GCM_NONCE_LENGTH + GCM_TAG_LENGTH) {
    throw new IntegrityError('message authentication failed: ciphertext too short');
  }
  const nonce = sealed.subarray(0, GCM_NONCE_LENGTH);
  const body = sealed.subarray(GCM_NONCE_LENGTH, sealed.length - GCM_TAG_LENGTH);
  const tag = sealed.subarray(sealed.length - GCM_TAG_LENGTH);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: GCM_TAG_LENGTH });
  decipher.setAuthTag(tag);
  if (aad !== undefined) decipher.setAAD(aad);
  const plain = decipher.update(body);
  let rest: Buffer;
  try {
    rest = decipher.final();
  } catch {
    zeroize(plain);
    throw new IntegrityError('message authentication failed');
  }
  // GCM is a stream mode: final() yields nothing, so no second copy of the plaintext is made.
  return rest.length === 0 ? plain : Buffer.concat([plain, rest]);
}

/** Overwrites key material in place. JS strings cannot be wiped, so keys must live in buffers. */
export function zeroize(buf: Uint8Array | undefined): void {
  buf?.fill(0);
}

function checkKey(key: Uint8Array | KeyObject): void {
  const length = key instanceof Uint8Array ? key.length : key.symmetricKeySize;
  if (length !== AES256_KEY_LENGTH) throw new InternalError(`AES-256 key must be ${AES256_KEY_LENGTH} bytes`);
}
