/**
 * One version of a key: its material and its own random HMAC key. Each version is stored in its
 * own entry, so a key with thousands of versions never builds one giant value.
 */
import { createPrivateKey, createPublicKey, generateKeyPair, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { BadRequestError } from '../../../sdk/index.js';
import { compositePublicPem, generatePqKeyPair, type PqParameters } from '../crypto/pq-signing.js';
import type { KeyTypeInfo } from './key-types.js';
import { kemForKey } from '../crypto/kem-parameters.js';

const generateKeyPairAsync = promisify(generateKeyPair);

export interface KeyVersion {
  readonly version: number;
  /** Symmetric key (AES, ChaCha, CMAC), the HMAC key of an `hmac`-type key, or a KEM key's private seed. */
  readonly key?: Buffer;
  /** KEM keys: the public (encapsulation) key, raw (docs/transit-kem.md). */
  readonly encapsulationKey?: Buffer;
  /** The version's independent 256-bit HMAC key (for `hmac` keys: the key itself). */
  readonly hmacKey: Buffer;
  readonly privateKey?: KeyObject;
  readonly publicKey?: KeyObject;
  /** hybrid keys only: the elliptic-curve half (privateKey and publicKey are the ML-DSA half). */
  readonly ecPrivateKey?: KeyObject;
  readonly ecPublicKey?: KeyObject;
  /** RFC 3339 with milliseconds. */
  readonly time: string;
  /** Seconds since the epoch. */
  readonly creationTime: number;
  /** 3 for convergent keys made now; 1/2 for versions restored from old backups; 0 otherwise. */
  readonly convergentVersion: number;
  /** Base64 DER certificates, end-entity first. */
  readonly certificateChain: readonly string[];
}

/** The stored form (JSON). */
interface StoredVersion {
  version: number;
  key?: string;
  encapsulation_key?: string;
  hmac_key: string;
  private_key?: string;
  public_key?: string;
  ec_private_key?: string;
  ec_public_key?: string;
  time: string;
  creation_time: number;
  convergent_version: number;
  certificate_chain: string[];
}

/** Fresh material for a new version of a key of this type. */
export async function generateVersion(
  info: KeyTypeInfo,
  version: number,
  now: Date,
  options: { keySize?: number; convergent: boolean; pq?: PqParameters | undefined; parameterSet?: string | undefined },
): Promise<KeyVersion> {
  const base = {
    version,
    time: now.toISOString(),
    creationTime: Math.floor(now.getTime() / 1000),
    convergentVersion: options.convergent ? 3 : 0,
    certificateChain: [] as string[],
  };
  switch (info.family) {
    case 'aes-gcm':
    case 'chacha':
    case 'cmac':
      return { ...base, key: randomBytes(info.keyBytes!), hmacKey: randomBytes(32) };
    case 'hmac': {
      const size = options.keySize || 32;
      if (size < 32 || size > 512) throw new BadRequestError(`invalid key_size ${size}`);
      const key = randomBytes(size);
      return { ...base, key, hmacKey: key };
    }
    case 'ed25519': {
      const { privateKey, publicKey } = await generateKeyPairAsync('ed25519');
      return { ...base, privateKey, publicKey, hmacKey: randomBytes(32) };
    }
    case 'x25519': {
      const { privateKey, publicKey } = await generateKeyPairAsync('x25519');
      return { ...base, privateKey, publicKey, hmacKey: randomBytes(32) };
    }
    case 'ecdsa': {
      const { privateKey, publicKey } = await generateKeyPairAsync('ec', { namedCurve: info.curve! });
      return { ...base, privateKey, publicKey, hmacKey: randomBytes(32) };
    }
    case 'rsa': {
      const { privateKey, publicKey } = await generateKeyPairAsync('rsa', { modulusLength: info.rsaBits!, publicExponent: 65537 });
      return { ...base, privateKey, publicKey, hmacKey: randomBytes(32) };
    }
    case 'ml-dsa':
    case 'slh-dsa':
    case 'hybrid': {
      if (!options.pq) throw new BadRequestError(`a ${info.name} key needs a parameter_set`);
      return { ...base, ...(await generatePqKeyPair(info.family, options.pq)), hmacKey: randomBytes(32) };
    }
    case 'kem': {
      const kem = kemForKey(info, options.parameterSet);
      const key = randomBytes(kem.seedBytes);
      return { ...base, key, encapsulationKey: Buffer.from(kem.publicKeyOf(key)), hmacKey: randomBytes(32) };
    }
  }
}

export function encodeVersion(v: KeyVersion): Buffer {
  const stored: StoredVersion = {
    version: v.version,
    ...(v.key ? { key: v.key.toString('base64') } : {}),
    ...(v.encapsulationKey ? { encapsulation_key: v.encapsulationKey.toString('base64') } : {}),
    hmac_key: v.hmacKey.toString('base64'),
    ...(v.privateKey ? { private_key: v.privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64') } : {}),
    ...(v.publicKey ? { public_key: v.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') } : {}),
    ...(v.ecPrivateKey ? { ec_private_key: v.ecPrivateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64') } : {}),
    ...(v.ecPublicKey ? { ec_public_key: v.ecPublicKey.export({ type: 'spki', format: 'der' }).toString('base64') } : {}),
    time: v.time,
    creation_time: v.creationTime,
    convergent_version: v.convergentVersion,
    certificate_chain: [...v.certificateChain],
  };
  return Buffer.from(JSON.stringify(stored), 'utf8');
}

export function decodeVersion(raw: Uint8Array): KeyVersion {
  const s = JSON.parse(Buffer.from(raw).toString('utf8')) as StoredVersion;
  const privateKey = s.private_key ? createPrivateKey({ key: Buffer.from(s.private_key, 'base64'), format: 'der', type: 'pkcs8' }) : undefined;
  const publicKey = s.public_key
    ? createPublicKey({ key: Buffer.from(s.public_key, 'base64'), format: 'der', type: 'spki' })
    : privateKey
      ? createPublicKey(privateKey)
      : undefined;
  const ecPrivateKey = s.ec_private_key ? createPrivateKey({ key: Buffer.from(s.ec_private_key, 'base64'), format: 'der', type: 'pkcs8' }) : undefined;
  const ecPublicKey = s.ec_public_key ? createPublicKey({ key: Buffer.from(s.ec_public_key, 'base64'), format: 'der', type: 'spki' }) : undefined;
  return {
    version: s.version,
    ...(s.key ? { key: Buffer.from(s.key, 'base64') } : {}),
    ...(s.encapsulation_key ? { encapsulationKey: Buffer.from(s.encapsulation_key, 'base64') } : {}),
    hmacKey: Buffer.from(s.hmac_key, 'base64'),
    ...(privateKey ? { privateKey } : {}),
    ...(publicKey ? { publicKey } : {}),
    ...(ecPrivateKey ? { ecPrivateKey } : {}),
    ...(ecPublicKey ? { ecPublicKey } : {}),
    time: s.time,
    creationTime: s.creation_time,
    convergentVersion: s.convergent_version,
    certificateChain: s.certificate_chain ?? [],
  };
}

/**
 * The public key as the read-key body shows it: PEM for ECDSA/RSA/ML-DSA/SLH-DSA, base64 raw 32
 * bytes for Ed25519 and X25519, and for hybrid keys the composite key as PEM under the draft's OID.
 */
export function formatPublicKey(info: KeyTypeInfo, v: KeyVersion, pq?: PqParameters): string {
  if (info.family === 'kem') return v.encapsulationKey?.toString('base64') ?? '';
  if (!v.publicKey) return '';
  if (info.family === 'hybrid') return compositePublicPem(pq!, { publicKey: v.publicKey, ecPublicKey: v.ecPublicKey! });
  if (info.family === 'ed25519' || info.family === 'x25519') {
    const der = v.publicKey.export({ type: 'spki', format: 'der' });
    return der.subarray(der.length - 32).toString('base64');
  }
  const pem = v.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}
