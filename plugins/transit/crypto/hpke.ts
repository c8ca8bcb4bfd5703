/**
 * HPKE (RFC 9180, https://www.rfc-editor.org/rfc/rfc9180.html) in base mode, single-shot: the
 * sealing of one message to a KEM public key that transit's ml-kem and mlkem768-x25519 keys use
 * (docs/transit-kem.md). The KEMs are ML-KEM-768, ML-KEM-1024 (FIPS 203) and MLKEM768-X25519
 * (X-Wing) as draft-ietf-hpke-pq defines them for HPKE
 * (https://datatracker.ietf.org/doc/draft-ietf-hpke-pq/), from OpenSSL through node:crypto where the
 * running Node has them (kem-node.ts), from @noble/post-quantum (audited) where it does not; the
 * KDFs are HKDF-SHA-256 and HKDF-SHA-384, the AEADs AES-128-GCM, AES-256-GCM and
 * ChaCha20-Poly1305, all through node:crypto.
 *
 * The key schedule is written here rather than taken from an HPKE library: the JavaScript ones
 * run on WebCrypto and answer every call with a promise, where transit seals and opens a batch's
 * items in one synchronous pass like its other ciphers; the schedule itself is a handful of HMACs
 * (RFC 9180, section 5.1), checked against draft-ietf-hpke-pq's published vectors
 * (test/fixtures/transit-vectors/hpke-pq.json).
 */
// Keyed with KeyObjects: on Node 24 node:crypto turns key bytes into a key object on every call
// at several times the cost of making one (bench/README.md, "Storage reads").
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  type CipherChaCha20Poly1305,
  type CipherGCM,
  type DecipherChaCha20Poly1305,
  type DecipherGCM,
} from 'node:crypto';
import { ml_kem768, ml_kem1024 } from '@noble/post-quantum/ml-kem.js';
import { ml_kem768_x25519 } from '@noble/post-quantum/hybrid.js';
import { nodeKems } from './kem-node.js';
import type { HpkeKem, KemSet } from './hpke-kem.js';

export type { HpkeKem, KemSet } from './hpke-kem.js';

interface NobleKem {
  keygen(seed?: Uint8Array): { publicKey: Uint8Array; secretKey: Uint8Array };
  encapsulate(publicKey: Uint8Array, msg?: Uint8Array): { cipherText: Uint8Array; sharedSecret: Uint8Array };
  decapsulate(cipherText: Uint8Array, secretKey: Uint8Array): Uint8Array;
}

/**
 * ML-KEM keeps its private key as the 64-byte seed d ‖ z and expands it to decapsulate; X-Wing's
 * private key is its 32-byte seed, which its decapsulation takes as it is.
 */
function nobleKem(id: number, name: string, noble: NobleKem, sizes: { seed: number; publicKey: number; enc: number }, expands: boolean): HpkeKem<Uint8Array> {
  return {
    id,
    name,
    seedBytes: sizes.seed,
    publicKeyBytes: sizes.publicKey,
    encBytes: sizes.enc,
    publicKeyOf: (seed) => noble.keygen(seed).publicKey,
    encap(publicKey, randomness) {
      const { cipherText, sharedSecret } = noble.encapsulate(publicKey, randomness);
      return { sharedSecret, enc: cipherText };
    },
    decapsulationKeyOf: (seed) => (expands ? noble.keygen(seed).secretKey : Uint8Array.from(seed)),
    decap: (enc, decapsulationKey) => noble.decapsulate(enc, decapsulationKey),
    forget: (decapsulationKey) => decapsulationKey.fill(0),
  };
}

/** The engines the KEMs can run on: OpenSSL's through node:crypto (kem-node.ts), and @noble/post-quantum in JavaScript. */
export type KemEngine = 'node:crypto' | '@noble/post-quantum';

const ENGINES = new Map<KemEngine, KemSet>();
{
  const node = nodeKems();
  if (node) ENGINES.set('node:crypto', node);
  ENGINES.set('@noble/post-quantum', {
    mlKem768: nobleKem(0x0041, 'ML-KEM-768', ml_kem768, { seed: 64, publicKey: 1184, enc: 1088 }, true),
    mlKem1024: nobleKem(0x0042, 'ML-KEM-1024', ml_kem1024, { seed: 64, publicKey: 1568, enc: 1568 }, true),
    mlKem768X25519: nobleKem(0x647a, 'MLKEM768-X25519', ml_kem768_x25519, { seed: 32, publicKey: 1216, enc: 1120 }, false),
  });
}

/** node:crypto's when the running Node has ML-KEM (Node 24), @noble's otherwise; decided once, at load. */
let engine: KemEngine = ENGINES.keys().next().value!;
let active: KemSet = ENGINES.get(engine)!;

/** The engines this Node offers, the one in use first. */
export function kemEngines(): KemEngine[] {
  return [...ENGINES.keys()];
}

export function kemEngine(): KemEngine {
  return engine;
}

/** Runs the KEMs on `name` from now on; for the tests, which check both engines against the same vectors. */
export function useKemEngine(name: KemEngine): void {
  const set = ENGINES.get(name);
  if (!set) throw new Error(`the KEM engine ${name} is not available on this Node`);
  engine = name;
  active = set;
}

/** A KEM that runs on the engine in use; the sizes and identifiers are the same on every engine. */
function current(which: keyof KemSet): HpkeKem {
  const { id, name, seedBytes, publicKeyBytes, encBytes } = active[which];
  return {
    id,
    name,
    seedBytes,
    publicKeyBytes,
    encBytes,
    publicKeyOf: (seed) => active[which].publicKeyOf(seed),
    encap: (publicKey, randomness) => active[which].encap(publicKey, randomness),
    decapsulationKeyOf: (seed) => active[which].decapsulationKeyOf(seed),
    decap: (enc, key) => active[which].decap(enc, key),
    forget: (key) => active[which].forget(key),
  };
}

/** The KEMs, by their HPKE KEM identifiers (https://www.iana.org/assignments/hpke/hpke.xhtml). */
export const HPKE_KEMS = {
  mlKem768: current('mlKem768'),
  mlKem1024: current('mlKem1024'),
  mlKem768X25519: current('mlKem768X25519'),
} as const satisfies KemSet;

export interface HpkeKdf {
  readonly id: number;
  readonly hash: 'sha256' | 'sha384';
  /** Nh: bytes of the hash. */
  readonly bytes: number;
}

export const HPKE_KDFS = {
  hkdfSha256: { id: 0x0001, hash: 'sha256', bytes: 32 },
  hkdfSha384: { id: 0x0002, hash: 'sha384', bytes: 48 },
} as const satisfies Record<string, HpkeKdf>;

export interface HpkeAead {
  readonly id: number;
  readonly cipher: 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-poly1305';
  readonly keyBytes: number;
}

export const HPKE_AEADS = {
  aes128Gcm: { id: 0x0001, cipher: 'aes-128-gcm', keyBytes: 16 },
  aes256Gcm: { id: 0x0002, cipher: 'aes-256-gcm', keyBytes: 32 },
  chacha20Poly1305: { id: 0x0003, cipher: 'chacha20-poly1305', keyBytes: 32 },
} as const satisfies Record<string, HpkeAead>;

export interface HpkeSuite {
  readonly kem: HpkeKem;
  readonly kdf: HpkeKdf;
  readonly aead: HpkeAead;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const VERSION_LABEL = Buffer.from('HPKE-v1');
const MODE_BASE = 0;

/** What the key schedule gives a base-mode context (RFC 9180, section 5.1). */
export interface HpkeContextKeys {
  readonly key: Buffer;
  readonly baseNonce: Buffer;
  /** Computed when asked for: transit seals one message and exports nothing. */
  exporterSecret(): Buffer;
}

function suiteId(suite: HpkeSuite): Buffer {
  const id = Buffer.alloc(10);
  id.write('HPKE');
  id.writeUInt16BE(suite.kem.id, 4);
  id.writeUInt16BE(suite.kdf.id, 6);
  id.writeUInt16BE(suite.aead.id, 8);
  return id;
}

function labeledExtract(suite: HpkeSuite, salt: Uint8Array, label: string, ikm: Uint8Array): Buffer {
  return createHmac(suite.kdf.hash, createSecretKey(salt)).update(VERSION_LABEL).update(suiteId(suite)).update(label).update(ikm).digest();
}

/** HKDF-Expand (RFC 5869) of the labeled info. */
function labeledExpand(suite: HpkeSuite, prk: Uint8Array, label: string, info: Uint8Array, length: number): Buffer {
  const labeled = Buffer.alloc(2);
  labeled.writeUInt16BE(length);
  const fullInfo = Buffer.concat([labeled, VERSION_LABEL, suiteId(suite), Buffer.from(label), info]);
  const blocks: Buffer[] = [];
  let previous = Buffer.alloc(0);
  const key = createSecretKey(prk);
  for (let counter = 1, made = 0; made < length; counter++) {
    previous = createHmac(suite.kdf.hash, key).update(previous).update(fullInfo).update(Buffer.of(counter)).digest();
    blocks.push(previous);
    made += previous.length;
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/**
 * key_schedule_context for mode_base without `info`'s hash: its mode byte and psk_id_hash, the
 * same for every message of a suite, made once per suite. Next to OpenSSL's ML-KEM the
 * schedule's HMACs are most of a seal (bench/README.md, "What a batch item costs"), so those that
 * do not depend on the message are made once, and the exporter secret only when asked for.
 */
const contextHeads = new WeakMap<HpkeSuite, { head: Buffer; emptyInfoHash: Buffer }>();

function contextHead(suite: HpkeSuite): { head: Buffer; emptyInfoHash: Buffer } {
  let head = contextHeads.get(suite);
  if (!head) {
    const empty = Buffer.alloc(0);
    head = { head: Buffer.concat([Buffer.of(MODE_BASE), labeledExtract(suite, empty, 'psk_id_hash', empty)]), emptyInfoHash: labeledExtract(suite, empty, 'info_hash', empty) };
    contextHeads.set(suite, head);
  }
  return head;
}

/** KeySchedule for mode_base: no PSK, an empty psk_id. */
export function keySchedule(suite: HpkeSuite, sharedSecret: Uint8Array, info: Uint8Array): HpkeContextKeys {
  const empty = Buffer.alloc(0);
  const { head, emptyInfoHash } = contextHead(suite);
  const context = Buffer.concat([head, info.length === 0 ? emptyInfoHash : labeledExtract(suite, empty, 'info_hash', info)]);
  const secret = labeledExtract(suite, sharedSecret, 'secret', empty);
  return {
    key: labeledExpand(suite, secret, 'key', context, suite.aead.keyBytes),
    baseNonce: labeledExpand(suite, secret, 'base_nonce', context, NONCE_BYTES),
    exporterSecret: () => labeledExpand(suite, secret, 'exp', context, suite.kdf.bytes),
  };
}

/** The AEAD's cipher for the context's first message, for sealing in pieces (the caller sets the associated data). */
export function aeadCipher(aead: HpkeAead, keys: HpkeContextKeys): CipherGCM | CipherChaCha20Poly1305 {
  const options = { authTagLength: TAG_BYTES };
  // The two branches differ only in type: narrowing the cipher's name picks node's overload that
  // returns the AEAD's class (and so its setAAD and getAuthTag). The same in aeadDecipher.
  return aead.cipher === 'chacha20-poly1305'
    ? createCipheriv(aead.cipher, createSecretKey(keys.key), keys.baseNonce, options)
    : createCipheriv(aead.cipher, createSecretKey(keys.key), keys.baseNonce, options);
}

/** The AEAD's decipher for the context's first message, for opening in pieces. */
export function aeadDecipher(aead: HpkeAead, keys: HpkeContextKeys): DecipherGCM | DecipherChaCha20Poly1305 {
  const options = { authTagLength: TAG_BYTES };
  return aead.cipher === 'chacha20-poly1305'
    ? createDecipheriv(aead.cipher, createSecretKey(keys.key), keys.baseNonce, options)
    : createDecipheriv(aead.cipher, createSecretKey(keys.key), keys.baseNonce, options);
}

/** The AEAD's seal of the context's first message (sequence number 0, so the nonce is base_nonce). */
export function sealFirst(suite: HpkeSuite, keys: HpkeContextKeys, aad: Uint8Array, plaintext: Uint8Array): Buffer {
  const cipher = aeadCipher(suite.aead, keys);
  if (aad.length > 0) cipher.setAAD(aad, { plaintextLength: plaintext.length });
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/** The plaintext of the context's first message, or null when it does not authenticate. */
export function openFirst(suite: HpkeSuite, keys: HpkeContextKeys, aad: Uint8Array, sealed: Uint8Array): Buffer | null {
  if (sealed.length < TAG_BYTES) return null;
  const body = sealed.length - TAG_BYTES;
  const decipher = aeadDecipher(suite.aead, keys);
  decipher.setAuthTag(sealed.subarray(body));
  if (aad.length > 0) decipher.setAAD(aad, { plaintextLength: body });
  const plaintext = decipher.update(sealed.subarray(0, body));
  try {
    decipher.final();
  } catch {
    plaintext.fill(0);
    return null;
  }
  return plaintext;
}

/** Single-shot seal (RFC 9180, section 6.1): enc and the sealed plaintext. */
export function seal(suite: HpkeSuite, publicKey: Uint8Array, info: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): { enc: Uint8Array; sealed: Buffer } {
  const { sharedSecret, enc } = suite.kem.encap(publicKey);
  const keys = keySchedule(suite, sharedSecret, info);
  sharedSecret.fill(0);
  try {
    return { enc, sealed: sealFirst(suite, keys, aad, plaintext) };
  } finally {
    keys.key.fill(0);
  }
}

/** Single-shot open: the plaintext, or null when `sealed` does not open under the key (from decapsulationKeyOf). */
export function open(suite: HpkeSuite, decapsulationKey: unknown, enc: Uint8Array, info: Uint8Array, aad: Uint8Array, sealed: Uint8Array): Buffer | null {
  const sharedSecret = suite.kem.decap(enc, decapsulationKey);
  const keys = keySchedule(suite, sharedSecret, info);
  sharedSecret.fill(0);
  try {
    return openFirst(suite, keys, aad, sealed);
  } finally {
    keys.key.fill(0);
  }
}
