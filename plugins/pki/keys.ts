/**
 * Key pairs of the engine's certificates: RSA, ECDSA on the NIST curves and Ed25519, as Vault's
 * `key_type` and `key_bits` name them (https://developer.hashicorp.com/vault/api-docs/secret/pki),
 * and the signature algorithm each issuer key signs with (SHA-256 for RSA, the curve's hash for
 * ECDSA, as Go's x509 picks them).
 */
import { generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { BadRequestError } from '../../sdk/index.js';

const generate = promisify(generateKeyPair);

export type KeyType = 'rsa' | 'ec' | 'ed25519';

const CURVES: Readonly<Record<number, string>> = { 224: 'P-224', 256: 'P-256', 384: 'P-384', 521: 'P-521' };
const RSA_BITS = [2048, 3072, 4096, 8192];

/** The bits a key type defaults to (Vault's: 2048 for RSA, 256 for EC, none for Ed25519). */
export function defaultBits(type: KeyType): number {
  return type === 'rsa' ? 2048 : type === 'ec' ? 256 : 0;
}

/** @throws BadRequestError for a key type or size Vault does not offer. */
export function checkKey(type: string, bits: number): { type: KeyType; bits: number } {
  if (type !== 'rsa' && type !== 'ec' && type !== 'ed25519') throw new BadRequestError(`unknown key_type value "${type}": expected rsa, ec or ed25519`);
  const chosen = bits === 0 ? defaultBits(type) : bits;
  if (type === 'rsa' && !RSA_BITS.includes(chosen)) throw new BadRequestError(`unsupported bit length for RSA key: ${chosen}`);
  if (type === 'ec' && !CURVES[chosen]) throw new BadRequestError(`unsupported bit length for EC key: ${chosen}`);
  return { type, bits: type === 'ed25519' ? 0 : chosen };
}

/** A new key pair, made off the event loop's thread (an RSA key takes a while). */
export async function generateKey(type: KeyType, bits: number): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  switch (type) {
    case 'rsa':
      return generate('rsa', { modulusLength: bits });
    case 'ec':
      return generate('ec', { namedCurve: CURVES[bits]! });
    case 'ed25519':
      return generate('ed25519');
  }
}

/** Vault's name of a key's type (`rsa`, `ec`, `ed25519`), and its size in bits. */
export function describeKey(key: KeyObject): { type: KeyType; bits: number } {
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { type: 'rsa', bits: details.modulusLength ?? 0 };
    case 'ec': {
      const bits = Number(Object.entries(CURVES).find(([, curve]) => curve === curveName(details.namedCurve))?.[0] ?? 0);
      return { type: 'ec', bits };
    }
    case 'ed25519':
      return { type: 'ed25519', bits: 0 };
    default:
      throw new BadRequestError(`unsupported key type ${key.asymmetricKeyType ?? 'unknown'}`);
  }
}

/** node names the NIST curves by their OpenSSL names. */
function curveName(name: string | undefined): string | undefined {
  return { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521', secp224r1: 'P-224' }[name ?? ''] ?? name;
}

/** A private key as Vault answers it: PKCS#1 for RSA, SEC 1 for EC, PKCS#8 for Ed25519 or when asked. */
export function privateKeyPem(key: KeyObject, format: string): string {
  const type = format === 'pkcs8' || key.asymmetricKeyType === 'ed25519' ? 'pkcs8' : key.asymmetricKeyType === 'rsa' ? 'pkcs1' : 'sec1';
  return (key.export({ type, format: 'pem' }) as string).trim();
}

export interface SignatureAlgorithm {
  readonly oid: string;
  /** null for Ed25519, which hashes itself. */
  readonly hash: string | null;
  /** RSA's algorithm identifiers carry NULL parameters; ECDSA's and Ed25519's none. */
  readonly nullParameters: boolean;
}

export function signatureAlgorithmOf(key: KeyObject): SignatureAlgorithm {
  const { type, bits } = describeKey(key);
  if (type === 'rsa') return { oid: '1.2.840.113549.1.1.11', hash: 'sha256', nullParameters: true };
  if (type === 'ed25519') return { oid: '1.3.101.112', hash: null, nullParameters: false };
  if (bits === 384) return { oid: '1.2.840.10045.4.3.3', hash: 'sha384', nullParameters: false };
  if (bits === 521) return { oid: '1.2.840.10045.4.3.4', hash: 'sha512', nullParameters: false };
  return { oid: '1.2.840.10045.4.3.2', hash: 'sha256', nullParameters: false };
}
