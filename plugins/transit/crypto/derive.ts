/**
 * Key derivation (docs/transit.md, "Derived keys and convergent encryption"): HKDF-SHA-256
 * (RFC 5869) with the version's key as IKM, no salt and the context as info; convergent version 3
 * takes 32 more bytes as the key of the nonce HMAC. Derived Ed25519 keys use the 32-byte seed taken
 * from HKDF over the version's private key.
 */
// Keyed with a KeyObject: on Node 24 node:crypto turns key bytes into a key object on every call
// at several times the cost of making one (bench/README.md, "Storage reads").
import { createHmac, createPrivateKey, createPublicKey, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { BadRequestError } from '../../../sdk/index.js';
import type { KeyVersion } from '../keys/key-version.js';

export const MISSING_CONTEXT =
  "missing 'context' for key derivation; the key was created using a derived key, which means additional, per-request information must be included in order to perform operations with the key";

/** HKDF-SHA-256(ikm, salt = none, info = context, length). */
export function hkdf(ikm: Uint8Array, context: Uint8Array, length: number): Buffer {
  return Buffer.from(hkdfSync('sha256', createSecretKey(ikm), Buffer.alloc(0), context, length));
}

/** Legacy kdf 0 (old backups): NIST SP 800-108 counter mode with HMAC-SHA256, 32 bytes. */
export function counterModeKdf(key: Uint8Array, context: Uint8Array): Buffer {
  const block = Buffer.alloc(4 + context.length + 4);
  block.writeUInt32BE(0, 0);
  Buffer.from(context).copy(block, 4);
  block.writeUInt32BE(256, 4 + context.length);
  return createHmac('sha256', createSecretKey(key)).update(block).digest();
}

/** The nonce of a convergent encryption (v2: HMAC key = context; v3: HMAC key from HKDF). */
export function convergentNonce(hmacKey: Uint8Array, plaintext: Uint8Array): Buffer {
  return createHmac('sha256', createSecretKey(hmacKey)).update(plaintext).digest().subarray(0, 12);
}

/** The Ed25519 private key derived for a context. */
export function derivedEd25519PrivateKey(version: KeyVersion, context: Uint8Array): KeyObject {
  if (!version.privateKey) throw new BadRequestError('the key version has no private part');
  const seed = Buffer.from(version.privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = ed25519RawPublic(version.publicKey!);
  // Vault's IKM is Go's 64-byte private key: seed ‖ public key.
  const derivedSeed = hkdf(Buffer.concat([seed, pub]), context, 32);
  return ed25519FromSeed(derivedSeed);
}

/** PKCS#8 prefix of an Ed25519 private key (RFC 8410): the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function ed25519FromSeed(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

export function derivedEd25519PublicKey(version: KeyVersion, context: Uint8Array): Buffer {
  return ed25519RawPublic(createPublicKey(derivedEd25519PrivateKey(version, context)));
}

export function ed25519RawPublic(publicKey: KeyObject): Buffer {
  return Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
}
