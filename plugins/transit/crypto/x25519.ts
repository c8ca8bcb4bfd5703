/**
 * X25519 (RFC 7748) for transit's `x25519` keys: the raw 32-byte encodings the RFC uses, and the
 * agreement itself through node:crypto. An x25519 key is its own key type rather than an ed25519
 * key's Montgomery form, so one secret never serves both signatures and agreement.
 */
import { createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';
import { BadRequestError } from '../../../sdk/index.js';

/** Length of an X25519 private scalar, public key and shared secret (RFC 7748 §5). */
export const X25519_BYTES = 32;

/** PKCS#8 prefix of an X25519 private key (RFC 8410 §7): the 32-byte private key follows. */
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/** A private key from its raw 32 bytes (RFC 7748's scalar, before clamping). */
export function x25519FromRaw(raw: Uint8Array): KeyObject {
  if (raw.length !== X25519_BYTES) throw new BadRequestError(`an X25519 private key has ${X25519_BYTES} bytes, got ${raw.length}`);
  return createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' });
}

/** A public key from its raw 32 bytes (the u-coordinate, little-endian). */
export function x25519PublicFromRaw(raw: Uint8Array): KeyObject {
  if (raw.length !== X25519_BYTES) throw new BadRequestError(`an X25519 public key has ${X25519_BYTES} bytes, got ${raw.length}`);
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
}

/** The raw 32 bytes of a private key. */
export function x25519RawPrivate(privateKey: KeyObject): Buffer {
  return Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
}

/** The raw 32 bytes of a public key. */
export function x25519RawPublic(publicKey: KeyObject): Buffer {
  return Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
}

/**
 * A peer's public key as `derive-key` takes it: base64 of the raw 32 bytes (as `keys/:name` shows
 * an x25519 key), or PEM (PKIX, RFC 8410); a 400 naming `peer_public_key` otherwise.
 */
export function x25519PeerKey(text: string): KeyObject {
  const trimmed = text.trim();
  let peer: KeyObject;
  if (trimmed.startsWith('-----BEGIN')) {
    try {
      peer = createPublicKey({ key: trimmed, format: 'pem' });
    } catch (err) {
      throw new BadRequestError(`failed to parse supplied peer public key PEM: ${(err as Error).message}`);
    }
    if (peer.type !== 'public') throw new BadRequestError('peer_public_key holds a private key; send the peer\'s public key');
    if (peer.asymmetricKeyType !== 'x25519') throw new BadRequestError('supplied peer public key is not an X25519 key');
    return peer;
  }
  if (!/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) {
    throw new BadRequestError('peer_public_key of an x25519 base key must be base64 of the raw 32-byte public key or a PEM (PKIX) public key');
  }
  return x25519PublicFromRaw(Buffer.from(trimmed, 'base64'));
}

/**
 * The X25519 shared secret. RFC 7748 §6.1 lets a party check for the all-zero output, which a
 * peer key of small order forces whatever the private key is: such a secret is public, so it is
 * refused with a 400 instead of becoming a key (https://www.rfc-editor.org/rfc/rfc7748#section-6.1).
 * OpenSSL makes that check itself and fails the derivation, the only way it fails for two X25519
 * keys (test/plugins/transit/x25519.test.ts holds it to that).
 */
export function x25519SharedSecret(privateKey: KeyObject, peer: KeyObject): Buffer {
  try {
    return diffieHellman({ privateKey, publicKey: peer });
  } catch {
    throw new BadRequestError('peer_public_key is a point of small order: the X25519 shared secret would be all zeros (RFC 7748 section 6.1)');
  }
}
