/**
 * Signatures of transit keys (docs/transit.md, "Ciphertexts, signatures and HMACs"): ECDSA
 * P-256/384/521, Ed25519 (Ed25519ctx and Ed25519ph in ed25519-variants.ts) and RSA (PSS or
 * PKCS#1 v1.5), as `vault:v<N>:<signature>` with asn1
 * (standard base64) or jws (base64url without padding; ECDSA as fixed-width r‖s) marshaling.
 *
 * node:crypto signs and verifies whenever it is handed the message. For `prehashed` input it is
 * handed a digest instead, which node's sign/verify cannot take (they always hash, and for EC keys
 * a null algorithm means SHA-256), so those cases are built here from primitives node does have:
 *  - RSA PKCS#1 v1.5: the DigestInfo (or, for hash `none`, the bare input) through privateEncrypt /
 *    publicDecrypt with PKCS#1 type-1 padding;
 *  - RSA-PSS: EMSA-PSS encoding and verification per RFC 8017 §9.1, around the raw RSA operation
 *    (RSA_NO_PADDING);
 *  - ECDSA: k·G from node's ECDH (OpenSSL's constant-time scalar multiplication), the rest of
 *    SEC 1 §4.1.3 in bigint arithmetic with a random blinding factor; verification (public data
 *    only) entirely in bigint arithmetic.
 * Every one of these is checked in the tests against node's own sign/verify on the same message.
 */
import {
  constants,
  createECDH,
  createHash,
  privateEncrypt,
  publicDecrypt,
  randomBytes,
  sign as nodeSign,
  verify as nodeVerify,
  type KeyObject,
} from 'node:crypto';
import { BadRequestError, InternalError } from '../../../sdk/index.js';
import { decodeBase64 } from './base64.js';
import { ed25519Variant, isContextVariant, signEd25519Variant, verifyEd25519Variant } from './ed25519-variants.js';
import { parseGoInt } from './hmac.js';

export const SIGNATURE_HASHES = ['none', 'sha1', 'sha2-224', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'] as const;
export type SignatureHash = (typeof SIGNATURE_HASHES)[number];
export type SignatureAlgorithm = 'pss' | 'pkcs1v15';
export type Marshaling = 'asn1' | 'jws';
export type SigningFamily = 'ecdsa' | 'ed25519' | 'rsa';

export interface SignOptions {
  readonly hash: SignatureHash;
  /** The input is already a digest (RSA: of `hash`). */
  readonly prehashed: boolean;
  /** RSA only. */
  readonly signatureAlgorithm: SignatureAlgorithm;
  /** RSA-PSS only, Go's convention: 0 = auto (largest when signing, detected when verifying), -1 = the hash length, n > 0 = n bytes. */
  readonly saltLength: number;
  readonly marshaling: Marshaling;
}

interface HashInfo {
  readonly node: string;
  readonly size: number;
  /** DER of the algorithm's OBJECT IDENTIFIER, for the PKCS#1 v1.5 DigestInfo. */
  readonly oid: Buffer;
}

const NIST_HASH_ARC = '0609608648016503040201';
const HASHES: Readonly<Record<Exclude<SignatureHash, 'none'>, HashInfo>> = {
  sha1: { node: 'sha1', size: 20, oid: Buffer.from('06052b0e03021a', 'hex') },
  'sha2-224': { node: 'sha224', size: 28, oid: Buffer.from(NIST_HASH_ARC.slice(0, -2) + '04', 'hex') },
  'sha2-256': { node: 'sha256', size: 32, oid: Buffer.from(NIST_HASH_ARC.slice(0, -2) + '01', 'hex') },
  'sha2-384': { node: 'sha384', size: 48, oid: Buffer.from(NIST_HASH_ARC.slice(0, -2) + '02', 'hex') },
  'sha2-512': { node: 'sha512', size: 64, oid: Buffer.from(NIST_HASH_ARC.slice(0, -2) + '03', 'hex') },
  'sha3-224': { node: 'sha3-224', size: 28, oid: Buffer.from(NIST_HASH_ARC.slice(0, -2) + '07', 'hex') },
  'sha3-256': { node: 'sha3-256', size: 32, oid: Buffer.from(NIST_HASH_ARC.slice(0, -2) + '08', 'hex') },
  'sha3-384': { node: 'sha3-384', size: 48, oid: Buffer.from(NIST_HASH_ARC.slice(0, -2) + '09', 'hex') },
  'sha3-512': { node: 'sha3-512', size: 64, oid: Buffer.from(NIST_HASH_ARC.slice(0, -2) + '0a', 'hex') },
};

const PREFIX = 'vault:v';
export const NONE_REQUIRES = 'hash_algorithm=none requires both prehashed=true and signature_algorithm=pkcs1v15';

export function isSignatureHash(name: string): name is SignatureHash {
  return (SIGNATURE_HASHES as readonly string[]).includes(name);
}

/** `salt_length` as Vault reads it: `auto`, `hash` (any case) or an integer ≥ -1. */
export function parseSaltLength(raw: string): number {
  const lower = raw.toLowerCase();
  if (lower === 'auto') return 0;
  if (lower === 'hash') return -1;
  const n = parseGoInt(lower);
  if (n === undefined) throw new BadRequestError(`salt length neither 'auto', 'hash', nor an int: ${raw}`);
  if (n < -1) throw new BadRequestError(`salt length is invalid: ${n}`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Signing and verifying raw bytes

/**
 * Signs `input` with a private key of the family; returns the signature bytes as marshaled. For
 * ed25519 keys the options and `signatureContext` pick pure Ed25519, Ed25519ctx or Ed25519ph.
 */
export function signBytes(family: SigningFamily, key: KeyObject, input: Buffer, options: SignOptions, signatureContext?: Buffer): Buffer {
  switch (family) {
    case 'ed25519': {
      const variant = ed25519Variant(options, signatureContext);
      return isContextVariant(variant) ? signEd25519Variant(key, input, variant) : nodeSign(null, input, key);
    }
    case 'ecdsa':
      return signEcdsa(key, input, options);
    case 'rsa':
      return signRsa(key, input, options);
  }
}

/** Verifies marshaled signature bytes; false for a wrong signature, BadRequestError for malformed options. */
export function verifyBytes(family: SigningFamily, key: KeyObject, input: Buffer, signature: Buffer, options: SignOptions, signatureContext?: Buffer): boolean {
  switch (family) {
    case 'ed25519': {
      const variant = ed25519Variant(options, signatureContext);
      if (isContextVariant(variant)) return verifyEd25519Variant(key, input, signature, variant);
      return signature.length === 64 && nodeVerify(null, input, key, signature);
    }
    case 'ecdsa':
      return verifyEcdsa(key, input, signature, options);
    case 'rsa':
      return verifyRsa(key, input, signature, options);
  }
}

function messageHash(options: SignOptions): HashInfo {
  if (options.hash === 'none') throw new BadRequestError(NONE_REQUIRES);
  return HASHES[options.hash];
}

// ---------------------------------------------------------------------------------------------
// RSA

function modulusBits(key: KeyObject): number {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (!bits) throw new InternalError('RSA key without a modulus length');
  return bits;
}

/** The largest PSS salt for a key and hash (Go's rule, as Vault checks it). */
function maxPssSaltLength(bits: number, hashSize: number): number {
  return Math.ceil((bits - 1) / 8) - 2 - hashSize;
}

/** The salt length in bytes for signing or checking; auto (0) and hash (-1) resolved. */
function pssSaltLength(bits: number, hash: HashInfo, requested: number): number {
  const max = maxPssSaltLength(bits, hash.size);
  if (requested < -1 || requested > max) throw new BadRequestError(`requested salt length ${requested} is invalid`);
  return requested === -1 ? hash.size : requested === 0 ? max : requested;
}

function signRsa(key: KeyObject, input: Buffer, options: SignOptions): Buffer {
  const bits = modulusBits(key);
  if (options.signatureAlgorithm === 'pss') {
    const hash = messageHash(options);
    const saltLength = pssSaltLength(bits, hash, options.saltLength);
    if (!options.prehashed) return nodeSign(hash.node, input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength });
    checkDigestLength(input, options.hash, hash);
    const em = emsaPssEncode(input, bits - 1, hash, randomBytes(saltLength));
    return privateEncrypt({ key, padding: constants.RSA_NO_PADDING }, leftPad(em, Math.ceil(bits / 8)));
  }
  if (!options.prehashed) return nodeSign(messageHash(options).node, input, { key, padding: constants.RSA_PKCS1_PADDING });
  const payload = pkcs1Payload(input, options);
  if (payload.length > Math.ceil(bits / 8) - 11) throw new BadRequestError('input is too long for the RSA key size');
  return privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, payload);
}

function verifyRsa(key: KeyObject, input: Buffer, signature: Buffer, options: SignOptions): boolean {
  const bits = modulusBits(key);
  const k = Math.ceil(bits / 8);
  if (options.signatureAlgorithm === 'pss') {
    const hash = messageHash(options);
    pssSaltLength(bits, hash, options.saltLength);
    if (!options.prehashed) {
      const saltLength = options.saltLength === 0 ? constants.RSA_PSS_SALTLEN_AUTO : options.saltLength === -1 ? constants.RSA_PSS_SALTLEN_DIGEST : options.saltLength;
      return nodeVerify(hash.node, input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }, signature);
    }
    if (input.length !== hash.size || signature.length !== k) return false;
    const m = rawPublic(key, signature);
    if (!m) return false;
    const emLen = Math.ceil((bits - 1) / 8);
    // When emLen < k the integer's extra leading byte must be zero (RFC 8017 §8.1.2 step 2c).
    if (m.subarray(0, k - emLen).some((b) => b !== 0)) return false;
    return emsaPssVerify(input, m.subarray(k - emLen), bits - 1, hash, options.saltLength === 0 ? undefined : options.saltLength === -1 ? hash.size : options.saltLength);
  }
  if (!options.prehashed) return nodeVerify(messageHash(options).node, input, { key, padding: constants.RSA_PKCS1_PADDING }, signature);
  if (signature.length !== k) return false;
  let expected: Buffer;
  try {
    expected = pkcs1Payload(input, options);
  } catch (err) {
    if (err instanceof BadRequestError) return false;
    throw err;
  }
  try {
    return publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, signature).equals(expected);
  } catch {
    return false;
  }
}

/** s^e mod n as k bytes, or undefined when the signature is not below the modulus. */
function rawPublic(key: KeyObject, signature: Buffer): Buffer | undefined {
  try {
    return publicDecrypt({ key, padding: constants.RSA_NO_PADDING }, signature);
  } catch {
    return undefined;
  }
}

/** What PKCS#1 v1.5 signs for a digest: its DigestInfo, or with hash `none` the input itself (no OID). */
function pkcs1Payload(input: Buffer, options: SignOptions): Buffer {
  if (options.hash === 'none') return input;
  const hash = HASHES[options.hash];
  checkDigestLength(input, options.hash, hash);
  return digestInfo(hash, input);
}

function checkDigestLength(input: Buffer, name: string, hash: HashInfo): void {
  if (input.length !== hash.size) {
    throw new BadRequestError(`prehashed input must be a ${hash.size}-byte ${name} digest, got ${input.length} bytes`);
  }
}

/** DigestInfo ::= SEQUENCE { SEQUENCE { OID, NULL }, OCTET STRING digest } (RFC 8017 §9.2). */
function digestInfo(hash: HashInfo, digest: Buffer): Buffer {
  const algorithm = derTlv(0x30, Buffer.concat([hash.oid, Buffer.from([0x05, 0x00])]));
  return derTlv(0x30, Buffer.concat([algorithm, derTlv(0x04, digest)]));
}

function mgf1(hash: HashInfo, seed: Buffer, length: number): Buffer {
  const blocks: Buffer[] = [];
  const counter = Buffer.alloc(4);
  for (let i = 0, have = 0; have < length; i++, have += hash.size) {
    counter.writeUInt32BE(i);
    blocks.push(createHash(hash.node).update(seed).update(counter).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** EMSA-PSS-ENCODE (RFC 8017 §9.1.1) of a digest, with the given salt. */
function emsaPssEncode(mHash: Buffer, emBits: number, hash: HashInfo, salt: Buffer): Buffer {
  const emLen = Math.ceil(emBits / 8);
  if (emLen < hash.size + salt.length + 2) throw new BadRequestError(`requested salt length ${salt.length} is invalid`);
  const h = createHash(hash.node).update(Buffer.alloc(8)).update(mHash).update(salt).digest();
  const db = Buffer.alloc(emLen - hash.size - 1);
  db[db.length - salt.length - 1] = 0x01;
  salt.copy(db, db.length - salt.length);
  const mask = mgf1(hash, h, db.length);
  for (let i = 0; i < db.length; i++) db[i]! ^= mask[i]!;
  db[0]! &= 0xff >>> (8 * emLen - emBits);
  return Buffer.concat([db, h, Buffer.from([0xbc])]);
}

/** EMSA-PSS-VERIFY (RFC 8017 §9.1.2); `saltLength` undefined detects it, as Go's auto mode does. */
function emsaPssVerify(mHash: Buffer, em: Buffer, emBits: number, hash: HashInfo, saltLength?: number): boolean {
  const emLen = Math.ceil(emBits / 8);
  if (em.length !== emLen || emLen < hash.size + (saltLength ?? 0) + 2) return false;
  if (em[emLen - 1] !== 0xbc) return false;
  const masked = em.subarray(0, emLen - hash.size - 1);
  const h = em.subarray(emLen - hash.size - 1, emLen - 1);
  const topBits = 0xff << (8 - (8 * emLen - emBits)) & 0xff;
  if ((masked[0]! & topBits) !== 0) return false;
  const db = mgf1(hash, h, masked.length);
  for (let i = 0; i < db.length; i++) db[i]! ^= masked[i]!;
  db[0]! &= 0xff >>> (8 * emLen - emBits);
  const one = db.findIndex((b) => b !== 0);
  if (one < 0 || db[one] !== 0x01) return false;
  if (saltLength !== undefined && one !== db.length - saltLength - 1) return false;
  const salt = db.subarray(one + 1);
  const expected = createHash(hash.node).update(Buffer.alloc(8)).update(mHash).update(salt).digest();
  return expected.equals(h);
}

function leftPad(bytes: Buffer, length: number): Buffer {
  return bytes.length >= length ? bytes : Buffer.concat([Buffer.alloc(length - bytes.length), bytes]);
}

// ---------------------------------------------------------------------------------------------
// ECDSA

interface Curve {
  /** OpenSSL's name (KeyObject.asymmetricKeyDetails.namedCurve and createECDH). */
  readonly name: string;
  readonly p: bigint;
  readonly n: bigint;
  /** Bytes of a coordinate, a scalar and each half of a jws signature. */
  readonly size: number;
  readonly orderBits: number;
}

const hexInt = (...groups: string[]): bigint => BigInt(`0x${groups.join('')}`);

/** NIST curves (FIPS 186-4 D.1.2); a = -3. The generator is taken from node (the scalar 1 through ECDH). */
const CURVES: Readonly<Record<string, Curve>> = {
  prime256v1: {
    name: 'prime256v1',
    p: 2n ** 256n - 2n ** 224n + 2n ** 192n + 2n ** 96n - 1n,
    n: hexInt('ffffffff', '00000000', 'ffffffff', 'ffffffff', 'bce6faad', 'a7179e84', 'f3b9cac2', 'fc632551'),
    size: 32,
    orderBits: 256,
  },
  secp384r1: {
    name: 'secp384r1',
    p: 2n ** 384n - 2n ** 128n - 2n ** 96n + 2n ** 32n - 1n,
    n: hexInt('ffffffff', 'ffffffff', 'ffffffff', 'ffffffff', 'ffffffff', 'ffffffff', 'c7634d81', 'f4372ddf', '581a0db2', '48b0a77a', 'ecec196a', 'ccc52973'),
    size: 48,
    orderBits: 384,
  },
  secp521r1: {
    name: 'secp521r1',
    p: 2n ** 521n - 1n,
    n: hexInt(
      '01ff', 'ffffffff', 'ffffffff', 'ffffffff', 'ffffffff', 'ffffffff', 'ffffffff', 'ffffffff', 'fffffffa',
      '51868783', 'bf2f966b', '7fcc0148', 'f709a5d0', '3bb5c9b8', '899c47ae', 'bb6fb71e', '91386409',
    ),
    size: 66,
    orderBits: 521,
  },
};

export function curveOf(key: KeyObject): Curve {
  const name = key.asymmetricKeyDetails?.namedCurve;
  const curve = name ? CURVES[name] : undefined;
  if (!curve) throw new InternalError(`unsupported curve ${name}`);
  return curve;
}

export const toBigInt = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`));

export function toBytes(value: bigint, length: number): Buffer {
  const hex = value.toString(16).padStart(length * 2, '0');
  if (hex.length > length * 2) throw new RangeError('integer too large');
  return Buffer.from(hex, 'hex');
}

function signEcdsa(key: KeyObject, input: Buffer, options: SignOptions): Buffer {
  const curve = curveOf(key);
  if (!options.prehashed) {
    return nodeSign(messageHash(options).node, input, { key, dsaEncoding: options.marshaling === 'jws' ? 'ieee-p1363' : 'der' });
  }
  const d = toBigInt(Buffer.from(key.export({ format: 'jwk' }).d!, 'base64url'));
  const { r, s } = ecdsaSignDigest(curve, d, input);
  return encodeEcdsa(curve, r, s, options.marshaling);
}

function verifyEcdsa(key: KeyObject, input: Buffer, signature: Buffer, options: SignOptions): boolean {
  const curve = curveOf(key);
  const { r, s } = options.marshaling === 'jws' ? splitJws(signature) : parseDerSignature(signature);
  if (r <= 0n || s <= 0n || r >= curve.n || s >= curve.n) return false;
  if (!options.prehashed) {
    const p1363 = Buffer.concat([toBytes(r, curve.size), toBytes(s, curve.size)]);
    return nodeVerify(messageHash(options).node, input, { key, dsaEncoding: 'ieee-p1363' }, p1363);
  }
  const jwk = key.export({ format: 'jwk' });
  const q = { x: toBigInt(Buffer.from(jwk.x!, 'base64url')), y: toBigInt(Buffer.from(jwk.y!, 'base64url')) };
  return ecdsaVerifyDigest(curve, q, input, r, s);
}

function encodeEcdsa(curve: Curve, r: bigint, s: bigint, marshaling: Marshaling): Buffer {
  if (marshaling === 'jws') return Buffer.concat([toBytes(r, curve.size), toBytes(s, curve.size)]);
  return derTlv(0x30, Buffer.concat([derInteger(r), derInteger(s)]));
}

/** Go's reading of a jws signature: the first half is r, the second s, whatever the length. */
function splitJws(bytes: Buffer): { r: bigint; s: bigint } {
  const half = Math.floor(bytes.length / 2);
  return { r: toBigInt(bytes.subarray(0, half)), s: toBigInt(bytes.subarray(half)) };
}

/** The leftmost orderBits bits of the digest as an integer (SEC 1 §4.1.3 step 5; Go's hashToInt). */
function digestToInt(curve: Curve, digest: Buffer): bigint {
  const orderBytes = Math.ceil(curve.orderBits / 8);
  const used = digest.length > orderBytes ? digest.subarray(0, orderBytes) : digest;
  const excess = used.length * 8 - curve.orderBits;
  const z = toBigInt(used);
  return excess > 0 ? z >> BigInt(excess) : z;
}

function randomScalar(curve: Curve): bigint {
  const bytes = Math.ceil(curve.orderBits / 8);
  const topMask = 0xff >>> (bytes * 8 - curve.orderBits);
  for (;;) {
    const raw = randomBytes(bytes);
    raw[0]! &= topMask;
    const k = toBigInt(raw);
    if (k > 0n && k < curve.n) return k;
  }
}

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

/** x-coordinate of k·G, computed by OpenSSL (constant time) through ECDH. */
function baseMultiplyX(curve: Curve, k: bigint): bigint {
  const ecdh = createECDH(curve.name);
  ecdh.setPrivateKey(toBytes(k, curve.size));
  return toBigInt(ecdh.getPublicKey().subarray(1, 1 + curve.size));
}

/**
 * ECDSA signature of a digest with private scalar `d` (SEC 1 §4.1.3). `k` is the per-signature
 * nonce, given only by known-answer tests; otherwise it is drawn at random for each attempt.
 * s = k⁻¹(z + r·d) is computed as (b·k)⁻¹·(b·z + b·r·d) with a fresh random b, so BigInt's
 * variable-time arithmetic never works on k or on d·r unmasked.
 */
export function ecdsaSignDigest(curve: Curve, d: bigint, digest: Buffer, k?: bigint): { r: bigint; s: bigint } {
  const n = curve.n;
  const z = digestToInt(curve, digest);
  for (;;) {
    const nonce = k ?? randomScalar(curve);
    const r = baseMultiplyX(curve, nonce) % n;
    if (r === 0n) continue;
    const b = randomScalar(curve);
    const inverse = modPow((b * nonce) % n, n - 2n, n);
    const s = (inverse * (((b * z) % n) + ((((b * r) % n) * d) % n))) % n;
    if (s !== 0n) return { r, s };
  }
}

interface Jacobian {
  readonly x: bigint;
  readonly y: bigint;
  readonly z: bigint;
}

const generators = new Map<string, { x: bigint; y: bigint }>();

function generatorOf(curve: Curve): { x: bigint; y: bigint } {
  let g = generators.get(curve.name);
  if (!g) {
    const ecdh = createECDH(curve.name);
    ecdh.setPrivateKey(toBytes(1n, curve.size));
    const point = ecdh.getPublicKey();
    g = { x: toBigInt(point.subarray(1, 1 + curve.size)), y: toBigInt(point.subarray(1 + curve.size)) };
    generators.set(curve.name, g);
  }
  return g;
}

/** Verification of an ECDSA signature over a digest (SEC 1 §4.1.4): public values only. */
export function ecdsaVerifyDigest(curve: Curve, q: { x: bigint; y: bigint }, digest: Buffer, r: bigint, s: bigint): boolean {
  const { n, p } = curve;
  if (r <= 0n || s <= 0n || r >= n || s >= n) return false;
  const w = modPow(s, n - 2n, n);
  const z = digestToInt(curve, digest);
  const u1 = (z * w) % n;
  const u2 = (r * w) % n;
  const mod = (v: bigint): bigint => {
    const m = v % p;
    return m < 0n ? m + p : m;
  };
  const infinity: Jacobian = { x: 1n, y: 1n, z: 0n };
  const double = (a: Jacobian): Jacobian => {
    if (a.z === 0n || a.y === 0n) return infinity;
    // dbl-2001-b (a = -3)
    const delta = mod(a.z * a.z);
    const gamma = mod(a.y * a.y);
    const beta = mod(a.x * gamma);
    const alpha = mod(3n * (a.x - delta) * (a.x + delta));
    const x = mod(alpha * alpha - 8n * beta);
    const z = mod((a.y + a.z) * (a.y + a.z) - gamma - delta);
    const y = mod(alpha * (4n * beta - x) - 8n * gamma * gamma);
    return { x, y, z };
  };
  const add = (a: Jacobian, b: Jacobian): Jacobian => {
    if (a.z === 0n) return b;
    if (b.z === 0n) return a;
    // add-2007-bl
    const z1z1 = mod(a.z * a.z);
    const z2z2 = mod(b.z * b.z);
    const u1p = mod(a.x * z2z2);
    const u2p = mod(b.x * z1z1);
    const s1 = mod(a.y * b.z * z2z2);
    const s2 = mod(b.y * a.z * z1z1);
    const h = mod(u2p - u1p);
    const rr = mod(2n * (s2 - s1));
    if (h === 0n) return rr === 0n ? double(a) : infinity;
    const i = mod(4n * h * h);
    const j = mod(h * i);
    const v = mod(u1p * i);
    const x = mod(rr * rr - j - 2n * v);
    const y = mod(rr * (v - x) - 2n * s1 * j);
    const z = mod(((a.z + b.z) * (a.z + b.z) - z1z1 - z2z2) * h);
    return { x, y, z };
  };
  const g = generatorOf(curve);
  const gj: Jacobian = { x: g.x, y: g.y, z: 1n };
  const qj: Jacobian = { x: q.x, y: q.y, z: 1n };
  const both = add(gj, qj);
  // Shamir's trick: u1·G + u2·Q in one pass over the bits.
  let acc = infinity;
  const bits = Math.max(u1.toString(2).length, u2.toString(2).length);
  for (let i = bits - 1; i >= 0; i--) {
    acc = double(acc);
    const bit = BigInt(i);
    const a = (u1 >> bit) & 1n;
    const b = (u2 >> bit) & 1n;
    if (a && b) acc = add(acc, both);
    else if (a) acc = add(acc, gj);
    else if (b) acc = add(acc, qj);
  }
  if (acc.z === 0n) return false;
  const zInverse = modPow(acc.z, p - 2n, p);
  const x = mod(acc.x * mod(zInverse * zInverse));
  return x % n === r;
}

// ---------------------------------------------------------------------------------------------
// DER

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  if (length < 0x100) return Buffer.from([0x81, length]);
  return Buffer.from([0x82, length >> 8, length & 0xff]);
}

function derTlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), derLength(content.length), content]);
}

function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.alloc(1), bytes]);
  return derTlv(0x02, bytes);
}

/**
 * SEQUENCE { INTEGER r, INTEGER s } read as strictly as Go's encoding/asn1 reads it: minimal
 * lengths and integers; bytes after the sequence are "extra data". A negative integer reads as -1
 * (never a valid r or s).
 */
function parseDerSignature(bytes: Buffer): { r: bigint; s: bigint } {
  const invalid = (): BadRequestError => new BadRequestError('supplied signature is invalid');
  const read = (at: number, tag: number): { start: number; end: number } => {
    if (bytes[at] !== tag || at + 1 >= bytes.length) throw invalid();
    let length = bytes[at + 1]!;
    let start = at + 2;
    if (length & 0x80) {
      const count = length & 0x7f;
      if (count === 0 || count > 2 || start + count > bytes.length) throw invalid();
      length = 0;
      for (let i = 0; i < count; i++) length = length * 256 + bytes[start + i]!;
      if (length < 0x80 || (count === 2 && length < 0x100)) throw invalid();
      start += count;
    }
    if (start + length > bytes.length) throw invalid();
    return { start, end: start + length };
  };
  const integer = (at: number): { value: bigint; end: number } => {
    const { start, end } = read(at, 0x02);
    const content = bytes.subarray(start, end);
    if (content.length === 0) throw invalid();
    if (content.length > 1 && ((content[0] === 0x00 && content[1]! < 0x80) || (content[0] === 0xff && content[1]! >= 0x80))) throw invalid();
    return { value: content[0]! & 0x80 ? -1n : toBigInt(content), end };
  };
  const sequence = read(0, 0x30);
  const r = integer(sequence.start);
  const s = integer(r.end);
  if (s.end !== sequence.end) throw invalid();
  if (sequence.end !== bytes.length) throw new BadRequestError('supplied signature contains extra data');
  return { r: r.value, s: s.value };
}

// ---------------------------------------------------------------------------------------------
// Text form

export function formatSignature(version: number, signature: Buffer, marshaling: Marshaling): string {
  return `${PREFIX}${version}:${signature.toString(marshaling === 'jws' ? 'base64url' : 'base64')}`;
}

/** Splits `vault:v<N>:<text>` with Vault's error texts; the version is checked by the caller. */
export function parseSignature(value: string): { version: number; text: string } {
  if (!value.startsWith(PREFIX)) throw new BadRequestError('invalid signature: no prefix');
  const rest = value.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon < 0) throw new BadRequestError('invalid signature: wrong number of fields');
  const version = parseGoInt(rest.slice(0, colon));
  if (version === undefined) throw new BadRequestError('invalid signature: version number could not be decoded');
  return { version, text: rest.slice(colon + 1) };
}

/** The signature bytes: standard base64 for asn1, unpadded base64url for jws (both strict). */
export function decodeSignatureText(text: string, marshaling: Marshaling): Buffer {
  const invalid = new BadRequestError('invalid base64 signature value');
  if (marshaling === 'asn1') {
    try {
      return decodeBase64(text, 'signature');
    } catch {
      throw invalid;
    }
  }
  const raw = text.replace(/[\r\n]/g, '');
  if (!/^[A-Za-z0-9_-]*$/.test(raw) || raw.length % 4 === 1) throw invalid;
  return Buffer.from(raw, 'base64url');
}
