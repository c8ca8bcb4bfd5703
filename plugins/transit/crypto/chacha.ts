/**
 * ChaCha20-Poly1305 ciphers for transit's chacha keys: the IETF construction (RFC 8439, 12-byte
 * nonce) through OpenSSL, and XChaCha20-Poly1305 (24-byte nonce, as OpenBao's xchacha20-poly1305
 * keys use it: https://datatracker.ietf.org/doc/html/draft-irtf-cfrg-xchacha-03) as that draft
 * defines it, on top of the same OpenSSL cipher: HChaCha20 of the key and the nonce's first 16
 * bytes gives a subkey, and the IETF cipher runs under that subkey with four zero bytes and the
 * nonce's last 8 bytes as its nonce. HChaCha20 comes from @noble/ciphers (audited); OpenSSL keeps
 * the bulk of the work, including the streaming that large items need.
 */
// Keyed with a KeyObject: on Node 24 node:crypto turns key bytes into a key object on every call
// at several times the cost of making one (bench/README.md, "Storage reads").
import { createCipheriv, createDecipheriv, createSecretKey, type CipherChaCha20Poly1305, type DecipherChaCha20Poly1305 } from 'node:crypto';
import { hchacha } from '@noble/ciphers/chacha.js';

const TAG_BYTES = 16;
export const XCHACHA_NONCE_BYTES = 24;

/** "expand 32-byte k", the ChaCha constants, as little-endian words. */
const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);

/** A sealing cipher for `nonce` (12 or 24 bytes) under the 32-byte `key`. */
export function chachaCipher(key: Uint8Array, nonce: Uint8Array): CipherChaCha20Poly1305 {
  const [k, n] = ietfKeyAndNonce(key, nonce);
  return createCipheriv('chacha20-poly1305', createSecretKey(k), n, { authTagLength: TAG_BYTES });
}

/** An opening decipher for `nonce` (12 or 24 bytes) under the 32-byte `key`. */
export function chachaDecipher(key: Uint8Array, nonce: Uint8Array): DecipherChaCha20Poly1305 {
  const [k, n] = ietfKeyAndNonce(key, nonce);
  return createDecipheriv('chacha20-poly1305', createSecretKey(k), n, { authTagLength: TAG_BYTES });
}

function ietfKeyAndNonce(key: Uint8Array, nonce: Uint8Array): [Uint8Array, Uint8Array] {
  if (nonce.length !== XCHACHA_NONCE_BYTES) return [key, nonce];
  const subkey = new Uint32Array(8);
  hchacha(SIGMA, words(key), words(nonce.subarray(0, 16)), subkey);
  const ietfNonce = new Uint8Array(12);
  ietfNonce.set(nonce.subarray(16), 4);
  const subkeyBytes = new Uint8Array(32);
  const view = new DataView(subkeyBytes.buffer);
  subkey.forEach((word, i) => view.setUint32(i * 4, word, true));
  subkey.fill(0);
  return [subkeyBytes, ietfNonce];
}

/** Little-endian 32-bit words of `bytes` (a copy, so unaligned views are fine). */
function words(bytes: Uint8Array): Uint32Array {
  const out = new Uint32Array(bytes.length / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}
