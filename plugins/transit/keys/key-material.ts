/**
 * Key material in and out of transit, in the encodings Vault uses (docs/transit.md, "Export,
 * backup and bring your own key").
 *
 * Out (export): raw base64 for symmetric, HMAC and CMAC keys; PKCS#1 PEM (`RSA PRIVATE KEY`) for RSA;
 * SEC1 PEM (`EC PRIVATE KEY`) for ECDSA; base64 of Go's 64-byte seed‖public key for Ed25519;
 * PKIX PEM (`PUBLIC KEY`) or, for Ed25519 and X25519, base64 of the raw 32 bytes for public keys.
 * In (import): raw bytes for symmetric, HMAC and CMAC keys; PKCS#8 DER for asymmetric keys, with the two
 * quirks Vault accepts (RSA keys under the RSA-PSS OID, and Ed25519 seeds in an ECPrivateKey), and
 * also PKCS#1/SEC1 DER and raw Ed25519 seeds and X25519 private keys, which carry the same keys;
 * public keys as PEM, or for Ed25519 and X25519 also the base64 raw form that export returns.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { BadRequestError } from '../../../sdk/index.js';
import { ed25519FromSeed, ed25519RawPublic } from '../crypto/derive.js';
import { compositePrivateKey, compositePublicPem, rawPrivateKey, type PqParameters } from '../crypto/pq-signing.js';
import { X25519_BYTES, x25519FromRaw, x25519PublicFromRaw, x25519RawPublic } from '../crypto/x25519.js';
import { checkImportedRsaStrength, publicKeyOfPrivate } from './key-consistency.js';
import type { KeyTypeInfo } from './key-types.js';
import type { KeyVersion } from './key-version.js';

/** What an imported blob or public key becomes in a key version. */
export interface ImportedMaterial {
  /** Symmetric and HMAC keys, and a KEM key's private seed. */
  readonly key?: Buffer;
  /** KEM keys: the raw public key. */
  readonly encapsulationKey?: Buffer;
  readonly privateKey?: KeyObject;
  readonly publicKey?: KeyObject;
}

const OID = {
  ecPublicKey: '1.2.840.10045.2.1',
  rsaPss: '1.2.840.113549.1.1.10',
  // Ed25519 curve OIDs seen inside ECPrivateKey structures (NSS, and RFC 8410's X25519 OID misused).
  nssEd25519: '1.3.6.1.4.1.11591.15.1',
  rfc8410X25519: '1.3.101.110',
} as const;

const NODE_CURVES: Readonly<Record<string, string>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

// ---------------------------------------------------------------------------------------------
// Export encodings

/** `encryption-key`: raw base64 for AES/ChaCha and for a KEM key's private seed, PKCS#1 PEM for RSA; "" for a version without its private part. */
export function exportEncryptionKey(info: KeyTypeInfo, v: KeyVersion): string {
  if (info.family === 'rsa') return rsaPrivatePem(v);
  return v.key ? v.key.toString('base64') : '';
}

/**
 * `signing-key`: SEC1 PEM for ECDSA, seed‖public for Ed25519, PKCS#1 PEM for RSA; base64 of the
 * 32-byte seed for ML-DSA, of the 4n-byte private key for SLH-DSA, and
 * of the composite draft's private key (seed ‖ EC private key) for hybrid keys.
 */
export function exportSigningKey(info: KeyTypeInfo, v: KeyVersion, pq?: PqParameters): string {
  if (!v.privateKey) return '';
  switch (info.family) {
    case 'ml-dsa':
    case 'slh-dsa':
      return rawPrivateKey(v.privateKey).toString('base64');
    case 'hybrid':
      return compositePrivateKey(pq!, { privateKey: v.privateKey, publicKey: v.publicKey!, ecPrivateKey: v.ecPrivateKey! }).toString('base64');
    case 'ecdsa':
      return pemText(v.privateKey.export({ type: 'sec1', format: 'pem' })).trimEnd();
    case 'ed25519':
      return ed25519GoPrivateKey(v.privateKey).toString('base64');
    default:
      return rsaPrivatePem(v);
  }
}

/** `cmac-key`: the raw key of a CMAC key's version, base64. */
export function exportCmacKey(v: KeyVersion): string {
  return v.key!.toString('base64');
}

/** `hmac-key`: the version's HMAC key (for `hmac` keys, the key itself). */
export function exportHmacKey(v: KeyVersion): string {
  return v.hmacKey.toString('base64');
}

/**
 * `public-key`: PKIX PEM (RSA, ML-DSA and SLH-DSA with a trailing newline, ECDSA trimmed, as
 * Vault), raw base64 for Ed25519, the composite key as PEM under the draft's OID for hybrid keys.
 */
export function exportPublicKey(info: KeyTypeInfo, v: KeyVersion, pq?: PqParameters): string {
  if (info.family === 'kem') return v.encapsulationKey?.toString('base64') ?? '';
  if (!v.publicKey) return '';
  if (info.family === 'ed25519') return ed25519RawPublic(v.publicKey).toString('base64');
  if (info.family === 'hybrid') return compositePublicPem(pq!, { publicKey: v.publicKey, ecPublicKey: v.ecPublicKey! });
  if (info.family === 'x25519') return x25519RawPublic(v.publicKey).toString('base64');
  const pem = pemText(v.publicKey.export({ type: 'spki', format: 'pem' }));
  return info.family === 'ecdsa' ? pem.trimEnd() : withNewline(pem);
}

/** `certificate-chain`: the chain's PEM certificates joined by newlines; refused when none is set. */
export function exportCertificateChain(v: KeyVersion): string {
  if (v.certificateChain.length === 0) throw new BadRequestError(`key version ${v.version} does not have a certificate chain set`);
  return v.certificateChain.map(certificatePem).join('\n');
}

/** One base64 DER certificate as PEM, without a trailing newline. */
function certificatePem(base64Der: string): string {
  const lines = base64Der.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----`;
}

/** The bytes byok-export wraps: raw for symmetric, HMAC and CMAC keys and KEM seeds, PKCS#8 DER for other asymmetric ones. */
export function wrappableMaterial(info: KeyTypeInfo, v: KeyVersion): Buffer {
  if (info.family === 'aes-gcm' || info.family === 'chacha' || info.family === 'hmac' || info.family === 'cmac') return v.key!;
  // A hybrid key is two keys; no PKCS#8 structure carries both for an importer to read.
  if (info.family === 'hybrid') throw new BadRequestError('hybrid keys cannot be exported through byok-export: the import side has no format for them');
  if (info.family === 'kem') {
    if (!v.key) throw new BadRequestError(`version ${v.version} of the key has only a public key; there is no private key to export`);
    return v.key;
  }
  if (!v.privateKey) throw new BadRequestError(`version ${v.version} of the key has only a public key; there is no private key to export`);
  return v.privateKey.export({ type: 'pkcs8', format: 'der' });
}

/** Go's 64-byte Ed25519 private key: the 32-byte seed followed by the public key. */
export function ed25519GoPrivateKey(privateKey: KeyObject): Buffer {
  const jwk = privateKey.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]);
}

/** The inverse of ed25519GoPrivateKey; the public half must be the seed's. */
export function ed25519FromGoPrivateKey(bytes: Uint8Array, what: string): KeyObject {
  if (bytes.length !== 64) throw new BadRequestError(`${what}: an Ed25519 private key has 64 bytes (seed and public key), got ${bytes.length}`);
  const privateKey = ed25519FromSeed(bytes.subarray(0, 32));
  if (!ed25519RawPublic(createPublicKey(privateKey)).equals(Buffer.from(bytes.subarray(32)))) {
    throw new BadRequestError(`${what}: the public half of the Ed25519 key does not belong to its seed`);
  }
  return privateKey;
}

function rsaPrivatePem(v: KeyVersion): string {
  return v.privateKey ? withNewline(pemText(v.privateKey.export({ type: 'pkcs1', format: 'pem' }))) : '';
}

function pemText(value: string | Buffer): string {
  return typeof value === 'string' ? value : value.toString('utf8');
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

// ---------------------------------------------------------------------------------------------
// Import encodings

/**
 * The key material carried by an import ciphertext, checked against the key type. An asymmetric
 * key's public key is derived from its private part, never taken from the structure it came in.
 */
export async function materialFromImport(info: KeyTypeInfo, bytes: Buffer): Promise<ImportedMaterial> {
  switch (info.family) {
    case 'aes-gcm':
    case 'chacha':
    case 'cmac':
      if (bytes.length !== info.keyBytes) {
        throw new BadRequestError(`invalid key size ${bytes.length} bytes for key type ${info.name}: expected ${info.keyBytes} raw bytes`);
      }
      return { key: Buffer.from(bytes) };
    case 'hmac':
      if (bytes.length < 32 || bytes.length > 512) {
        throw new BadRequestError(`invalid key size ${bytes.length} bytes for key type hmac: expected 32 to 512 raw bytes`);
      }
      return { key: Buffer.from(bytes) };
    default: {
      const privateKey = parsePrivateKeyDer(info, bytes);
      checkKeyMatchesType(info, privateKey);
      checkImportedRsaStrength(info, privateKey);
      return { privateKey, publicKey: await publicKeyOfPrivate(info, privateKey, 'invalid key') };
    }
  }
}

/** The `public_key` field: PEM (PKIX, or PKCS#1 for RSA); for Ed25519 and X25519 also base64 of the raw 32 bytes. */
export function publicKeyFromImport(info: KeyTypeInfo, text: string): KeyObject {
  if (/PRIVATE KEY/.test(text)) throw new BadRequestError('public_key holds a private key; send private keys wrapped in ciphertext');
  let publicKey: KeyObject;
  const trimmed = text.trim();
  if (info.family === 'ed25519' && /^[A-Za-z0-9+/]{43}=$/.test(trimmed)) {
    publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(trimmed, 'base64').toString('base64url') }, format: 'jwk' });
  } else if (info.family === 'x25519' && /^[A-Za-z0-9+/]{43}=$/.test(trimmed)) {
    publicKey = x25519PublicFromRaw(Buffer.from(trimmed, 'base64'));
  } else {
    if (!trimmed.startsWith('-----BEGIN')) throw new BadRequestError('error parsing public key: not in PEM format');
    try {
      publicKey = createPublicKey(trimmed);
    } catch (err) {
      throw new BadRequestError(`error parsing public key: ${(err as Error).message}`);
    }
  }
  checkKeyMatchesType(info, publicKey);
  checkImportedRsaStrength(info, publicKey);
  return publicKey;
}

/** Refuses a key of another algorithm, RSA size or curve than the key type's. */
export function checkKeyMatchesType(info: KeyTypeInfo, key: KeyObject): void {
  const kind = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  switch (info.family) {
    case 'rsa': {
      if (kind !== 'rsa') throw wrongKind(info, kind);
      const bytes = Math.ceil((details.modulusLength ?? 0) / 8);
      if (bytes !== info.rsaBits! / 8) throw new BadRequestError(`invalid key size: expected ${info.rsaBits! / 8} bytes, got ${bytes} bytes`);
      return;
    }
    case 'ecdsa': {
      if (kind !== 'ec') throw wrongKind(info, kind);
      const curve = NODE_CURVES[details.namedCurve ?? ''] ?? details.namedCurve ?? 'an unknown curve';
      if (curve !== info.curve) throw new BadRequestError(`invalid curve: expected ${info.curve}, got ${curve}`);
      return;
    }
    case 'ed25519':
      if (kind !== 'ed25519') throw wrongKind(info, kind);
      return;
    case 'x25519':
      if (kind !== 'x25519') throw wrongKind(info, kind);
      return;
    default:
      throw new BadRequestError(`key type ${info.name} has no public or private key`);
  }
}

function wrongKind(info: KeyTypeInfo, kind: string | undefined): BadRequestError {
  const names: Record<string, string> = { rsa: 'an RSA key', 'rsa-pss': 'an RSA-PSS key', ec: 'an ECDSA key', ed25519: 'an Ed25519 key', ed448: 'an Ed448 key', x25519: 'an X25519 key' };
  return new BadRequestError(`invalid key type: expected ${info.name}, got ${names[kind ?? ''] ?? `a ${kind ?? 'non-asymmetric'} key`}`);
}

function parsePrivateKeyDer(info: KeyTypeInfo, bytes: Buffer): KeyObject {
  let key: KeyObject | undefined;
  try {
    key = createPrivateKey({ key: bytes, format: 'der', type: 'pkcs8' });
  } catch {
    key = parseQuirks(info, bytes);
  }
  if (!key && info.family === 'ed25519' && bytes.length === 32) key = ed25519FromSeed(bytes);
  if (!key && info.family === 'ed25519' && bytes.length === 64) key = ed25519FromGoPrivateKey(bytes, 'imported key');
  if (!key && info.family === 'x25519' && bytes.length === X25519_BYTES) key = x25519FromRaw(bytes);
  if (!key) throw new BadRequestError('error parsing asymmetric key: the key material is not a PKCS#8 DER private key');
  if (key.asymmetricKeyType === 'x25519') checkX25519PublicKey(bytes, key);
  // RSA keys under the RSA-PSS OID: the inner key is plain PKCS#1, usable for OAEP too (Vault accepts them).
  if (key.asymmetricKeyType === 'rsa-pss') key = innerPkcs1(bytes) ?? key;
  return key;
}

/** PKCS#1 or SEC1 DER, and Vault's Ed25519-in-ECPrivateKey form; undefined when nothing fits. */
function parseQuirks(info: KeyTypeInfo, bytes: Buffer): KeyObject | undefined {
  if (info.family === 'rsa') return tryKey(() => createPrivateKey({ key: bytes, format: 'der', type: 'pkcs1' }));
  if (info.family === 'ecdsa') return tryKey(() => createPrivateKey({ key: bytes, format: 'der', type: 'sec1' }));
  if (info.family !== 'ed25519') return undefined;
  const seed = ed25519SeedFromEcPrivateKey(bytes);
  return seed ? ed25519FromSeed(seed) : undefined;
}

/**
 * A PKCS#8 v2 X25519 key may carry its public key ([1] publicKey, RFC 8410 §7); OpenSSL ignores
 * it and computes the public key from the private one, so a key whose two halves disagree is
 * refused here instead of imported as something other than what its sender holds.
 */
function checkX25519PublicKey(der: Buffer, privateKey: KeyObject): void {
  const publicField = children(asn1Of(der)).find((node) => node.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && (node.type as number) === 1);
  if (!publicField || typeof publicField.value !== 'string') return;
  // A BIT STRING's contents: the count of unused bits (0), then the 32-byte key.
  const embedded = Buffer.from(publicField.value, 'binary').subarray(1);
  if (!embedded.equals(x25519RawPublic(createPublicKey(privateKey)))) {
    throw new BadRequestError('invalid key: the X25519 public key in the key material does not belong to its private key');
  }
}

function tryKey(make: () => KeyObject): KeyObject | undefined {
  try {
    return make();
  } catch {
    return undefined;
  }
}

function asn1Of(bytes: Uint8Array): forge.asn1.Asn1 | undefined {
  try {
    return forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(bytes).toString('binary')), true);
  } catch {
    return undefined;
  }
}

function children(node: forge.asn1.Asn1 | undefined): forge.asn1.Asn1[] {
  return node && Array.isArray(node.value) ? node.value : [];
}

function oidOf(node: forge.asn1.Asn1 | undefined): string | undefined {
  if (!node || node.type !== forge.asn1.Type.OID || typeof node.value !== 'string') return undefined;
  return forge.asn1.derToOid(forge.util.createBuffer(node.value));
}

function innerPkcs1(pkcs8: Buffer): KeyObject | undefined {
  const [, algorithm, inner] = children(asn1Of(pkcs8));
  if (oidOf(children(algorithm)[0]) !== OID.rsaPss || typeof inner?.value !== 'string') return undefined;
  return tryKey(() => createPrivateKey({ key: Buffer.from(inner.value as string, 'binary'), format: 'der', type: 'pkcs1' }));
}

/**
 * An Ed25519 seed inside an ECPrivateKey, either wrapped in PKCS#8 under id-ecPublicKey with an
 * Ed25519 curve OID, or bare with that OID in its parameters (the forms Vault's import accepts).
 */
function ed25519SeedFromEcPrivateKey(der: Buffer): Buffer | undefined {
  const ed25519Oids: readonly string[] = [OID.nssEd25519, OID.rfc8410X25519];
  let top = asn1Of(der);
  let curveChecked = false;
  const [, algorithm, wrapped] = children(top);
  if (algorithm && algorithm.type === forge.asn1.Type.SEQUENCE) {
    const [algorithmOid, curveOid] = children(algorithm);
    if (oidOf(algorithmOid) !== OID.ecPublicKey || !ed25519Oids.includes(oidOf(curveOid) ?? '')) return undefined;
    if (typeof wrapped?.value !== 'string') return undefined;
    top = asn1Of(Buffer.from(wrapped.value, 'binary'));
    curveChecked = true;
  }
  const [, privateOctets, ...rest] = children(top);
  if (!privateOctets || privateOctets.type !== forge.asn1.Type.OCTETSTRING || typeof privateOctets.value !== 'string') return undefined;
  if (!curveChecked) {
    const parameters = rest.find((node) => node.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && (node.type as number) === 0);
    if (!ed25519Oids.includes(oidOf(children(parameters)[0]) ?? '')) return undefined;
  }
  const seed = Buffer.from(privateOctets.value, 'binary');
  if (seed.length !== 32) throw new BadRequestError(`failed to parse private key as ed25519 private key: got ${seed.length} bytes but expected a 32-byte seed`);
  return seed;
}
