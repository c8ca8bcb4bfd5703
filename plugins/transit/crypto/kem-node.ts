/**
 * The KEMs of transit's HPKE (hpke.ts) over node:crypto: OpenSSL's ML-KEM (OpenSSL 3.5, in
 * Node 24), and X-Wing built from it with node:crypto's X25519, SHAKE256 and SHA3-256. OpenSSL's
 * ML-KEM measured about 30 times faster than @noble/post-quantum's (bench/README.md, "What a batch
 * item costs"); @noble stays the engine where the running Node lacks it (Node 22, which
 * package.json's `engines` still allows). The keys are the same bytes under either engine: a
 * private key is stored as its seed, and OpenSSL is given that seed.
 *
 * node:crypto is imported as a namespace: a named import of `encapsulate` would fail to link on a
 * Node without it, where this module must load and answer that it is not available.
 */
import * as nodeCrypto from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { HpkeKem, KemSet } from './hpke-kem.js';

type MlKemType = 'ml-kem-768' | 'ml-kem-1024';

/**
 * DER prefixes of the two key forms OpenSSL is given, by ML-KEM parameter set; the raw key follows.
 * The private key is PKCS#8 in the seed-only form of
 * https://datatracker.ietf.org/doc/draft-ietf-lamps-kyber-certificates/ (privateKey holds
 * `seed [0] IMPLICIT OCTET STRING (SIZE (64))`, tag 0x80), under the OIDs 2.16.840.1.101.3.4.4.2
 * (ML-KEM-768) and …4.4.3 (ML-KEM-1024); OpenSSL expands the seed d ‖ z to the key pair as FIPS 203's
 * ML-KEM.KeyGen_internal does. The public key is a SubjectPublicKeyInfo whose BIT STRING is the raw
 * encapsulation key, under the same OIDs.
 */
const ML_KEM_DER: Readonly<Record<MlKemType, { readonly seed: Buffer; readonly spki: Buffer; readonly publicKeyBytes: number; readonly encBytes: number }>> = {
  'ml-kem-768': {
    seed: Buffer.from('3054020100300b060960864801650304040204428040', 'hex'),
    spki: Buffer.from('308204b2300b0609608648016503040402038204a100', 'hex'),
    publicKeyBytes: 1184,
    encBytes: 1088,
  },
  'ml-kem-1024': {
    seed: Buffer.from('3054020100300b060960864801650304040304428040', 'hex'),
    spki: Buffer.from('30820632300b06096086480165030404030382062100', 'hex'),
    publicKeyBytes: 1568,
    encBytes: 1568,
  },
};

/** X25519 keys in DER (RFC 8410): PKCS#8 and SubjectPublicKeyInfo prefixes of the 32 raw bytes. */
const X25519_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X25519_SPKI = Buffer.from('302a300506032b656e032100', 'hex');
const X25519_BYTES = 32;

/**
 * Public keys are parsed once per key: OpenSSL's import runs the encapsulation key check (FIPS 203,
 * section 7.2), which costs several encapsulations. Keyed by the stored key's bytes object, which
 * transit never changes in place; the entry goes when the key does.
 */
const publicKeys = new WeakMap<Uint8Array, KeyObject>();

function mlKemPublicKey(type: MlKemType, raw: Uint8Array): KeyObject {
  let key = publicKeys.get(raw);
  if (!key) {
    const der = ML_KEM_DER[type];
    if (raw.length !== der.publicKeyBytes) throw new Error(`a ${type} public key has ${der.publicKeyBytes} bytes`);
    key = nodeCrypto.createPublicKey({ key: Buffer.concat([der.spki, raw]), format: 'der', type: 'spki' });
    publicKeys.set(raw, key);
  }
  return key;
}

function mlKemPrivateKey(type: MlKemType, seed: Uint8Array): KeyObject {
  const der = Buffer.concat([ML_KEM_DER[type].seed, seed]);
  try {
    return nodeCrypto.createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } finally {
    der.fill(0);
  }
}

function rawPublicKey(key: KeyObject, prefix: Buffer): Buffer {
  return nodeCrypto.createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(prefix.length);
}

/** The private key handed to decap is OpenSSL's own object; it holds no bytes of ours to wipe. */
function mlKem(id: number, name: string, type: MlKemType): HpkeKem<KeyObject> {
  const der = ML_KEM_DER[type];
  return {
    id,
    name,
    seedBytes: 64,
    publicKeyBytes: der.publicKeyBytes,
    encBytes: der.encBytes,
    publicKeyOf: (seed) => rawPublicKey(mlKemPrivateKey(type, seed), der.spki),
    encap(publicKey, randomness) {
      if (randomness) throw new Error('node:crypto encapsulates with randomness of its own');
      const { sharedKey, ciphertext } = nodeCrypto.encapsulate(mlKemPublicKey(type, publicKey));
      return { sharedSecret: sharedKey, enc: ciphertext };
    },
    decapsulationKeyOf: (seed) => mlKemPrivateKey(type, seed),
    decap: (enc, key) => nodeCrypto.decapsulate(key, enc),
    forget: () => undefined,
  };
}

/** An X-Wing private key expanded from its seed: the ML-KEM-768 and X25519 keys, and X25519's public key. */
interface XWingKey {
  readonly mlKem: KeyObject;
  readonly x25519: KeyObject;
  readonly publicX: Buffer;
}

/** X-Wing's label, the ASCII art `\.//^\` (draft-connolly-cfrg-xwing-kem, section 5.3). */
const XWING_LABEL = Buffer.from('5c2e2f2f5e5c', 'hex');
const XWING_ML_KEM_PUBLIC_BYTES = 1184;
const XWING_ML_KEM_ENC_BYTES = 1088;

/**
 * X-Wing (https://datatracker.ietf.org/doc/draft-connolly-cfrg-xwing-kem/), its steps as the
 * draft's sections 5.2 to 5.4 give them: the 32-byte seed expands with SHAKE256 to 96 bytes, the
 * first 64 the ML-KEM-768 seed d ‖ z and the last 32 the X25519 private key; the shared secret is
 * SHA3-256(ss_M ‖ ss_X ‖ ct_X ‖ pk_X ‖ label); public key and ciphertext are ML-KEM-768's then
 * X25519's.
 */
function xWing(): HpkeKem<XWingKey> {
  const expand = (seed: Uint8Array): XWingKey => {
    const expanded = nodeCrypto.createHash('shake256', { outputLength: 96 }).update(seed).digest();
    const x25519Der = Buffer.concat([X25519_PKCS8, expanded.subarray(64)]);
    try {
      const x25519 = nodeCrypto.createPrivateKey({ key: x25519Der, format: 'der', type: 'pkcs8' });
      return { mlKem: mlKemPrivateKey('ml-kem-768', expanded.subarray(0, 64)), x25519, publicX: rawPublicKey(x25519, X25519_SPKI) };
    } finally {
      expanded.fill(0);
      x25519Der.fill(0);
    }
  };
  const x25519Public = (raw: Uint8Array) => nodeCrypto.createPublicKey({ key: Buffer.concat([X25519_SPKI, raw]), format: 'der', type: 'spki' });
  const combine = (ssM: Uint8Array, ssX: Uint8Array, ctX: Uint8Array, pkX: Uint8Array) =>
    nodeCrypto.createHash('sha3-256').update(ssM).update(ssX).update(ctX).update(pkX).update(XWING_LABEL).digest();
  return {
    id: 0x647a,
    name: 'MLKEM768-X25519',
    seedBytes: 32,
    publicKeyBytes: XWING_ML_KEM_PUBLIC_BYTES + X25519_BYTES,
    encBytes: XWING_ML_KEM_ENC_BYTES + X25519_BYTES,
    publicKeyOf(seed) {
      const key = expand(seed);
      return Buffer.concat([rawPublicKey(key.mlKem, ML_KEM_DER['ml-kem-768'].spki), key.publicX]);
    },
    encap(publicKey, randomness) {
      if (randomness) throw new Error('node:crypto encapsulates with randomness of its own');
      if (publicKey.length !== XWING_ML_KEM_PUBLIC_BYTES + X25519_BYTES) throw new Error('an X-Wing public key has 1216 bytes');
      const pkX = publicKey.subarray(XWING_ML_KEM_PUBLIC_BYTES);
      const ephemeral = nodeCrypto.generateKeyPairSync('x25519');
      const ctX = rawPublicKey(ephemeral.privateKey, X25519_SPKI);
      const ssX = nodeCrypto.diffieHellman({ privateKey: ephemeral.privateKey, publicKey: x25519Public(pkX) });
      const { sharedKey: ssM, ciphertext: ctM } = nodeCrypto.encapsulate(mlKemPublicKey('ml-kem-768', publicKeyPart(publicKey)));
      const sharedSecret = combine(ssM, ssX, ctX, pkX);
      ssM.fill(0);
      ssX.fill(0);
      return { sharedSecret, enc: Buffer.concat([ctM, ctX]) };
    },
    decapsulationKeyOf: expand,
    decap(enc, key) {
      const ctX = enc.subarray(XWING_ML_KEM_ENC_BYTES);
      const ssM = nodeCrypto.decapsulate(key.mlKem, enc.subarray(0, XWING_ML_KEM_ENC_BYTES));
      // X25519 of a low-order point is all zeros (RFC 7748, section 6.1), which OpenSSL refuses
      // to return; X-Wing takes the value as it is, and the AEAD's tag then fails.
      let ssX: Buffer;
      try {
        ssX = nodeCrypto.diffieHellman({ privateKey: key.x25519, publicKey: x25519Public(ctX) });
      } catch {
        ssX = Buffer.alloc(X25519_BYTES);
      }
      const sharedSecret = combine(ssM, ssX, ctX, key.publicX);
      ssM.fill(0);
      ssX.fill(0);
      return sharedSecret;
    },
    forget: () => undefined,
  };
}

/**
 * The ML-KEM-768 part of an X-Wing public key, as the same bytes object for the same key so that
 * its parse is cached too.
 */
const mlKemParts = new WeakMap<Uint8Array, Uint8Array>();
function publicKeyPart(publicKey: Uint8Array): Uint8Array {
  let part = mlKemParts.get(publicKey);
  if (!part) mlKemParts.set(publicKey, (part = publicKey.subarray(0, XWING_ML_KEM_PUBLIC_BYTES)));
  return part;
}

/**
 * node:crypto's KEMs, or null when the running Node lacks ML-KEM, X25519, SHAKE256 or SHA3-256.
 * Tried once, by a round trip of each KEM.
 */
export function nodeKems(): KemSet | null {
  if (typeof nodeCrypto.encapsulate !== 'function' || typeof nodeCrypto.decapsulate !== 'function') return null;
  const kems: KemSet = {
    mlKem768: mlKem(0x0041, 'ML-KEM-768', 'ml-kem-768'),
    mlKem1024: mlKem(0x0042, 'ML-KEM-1024', 'ml-kem-1024'),
    mlKem768X25519: xWing(),
  };
  try {
    for (const kem of Object.values(kems) as HpkeKem<unknown>[]) {
      const seed = nodeCrypto.randomBytes(kem.seedBytes);
      const { sharedSecret, enc } = kem.encap(kem.publicKeyOf(seed));
      if (!Buffer.from(kem.decap(enc, kem.decapsulationKeyOf(seed))).equals(Buffer.from(sharedSecret))) return null;
    }
  } catch {
    return null;
  }
  return kems;
}
