/**
 * The key types transit offers and what each supports. `vaultId` is Vault's numeric key type as it
 * appears in backups: the `KeyType` numbering of Vault's keysutil, hmac = 11
 * (https://github.com/hashicorp/vault/blob/main/sdk/helper/keysutil/policy.go). OpenBao numbers
 * from the same list without Vault's managed keys, so its hmac is 10 and its xchacha20-poly1305 11
 * (https://github.com/openbao/openbao/blob/main/sdk/helper/keysutil/policy.go): 11 is taken by
 * Vault's hmac, so xchacha20-poly1305 backups carry XCHACHA_BACKUP_ID, a number neither uses.
 * Vault's post-quantum types keep their numbers: ml-dsa 14, hybrid 15, slh-dsa 17.
 * aes128-cmac and aes256-cmac are Vault's 12 and 13 (OpenBao has no CMAC keys). Neither has a key
 * type that holds an X25519 key, so x25519 backups carry X25519_BACKUP_ID, again a number neither uses.
 */
import { BadRequestError } from '../../../sdk/index.js';

export type KeyType =
  | 'aes128-gcm96'
  | 'aes256-gcm96'
  | 'chacha20-poly1305'
  | 'xchacha20-poly1305'
  | 'ed25519'
  | 'ecdsa-p256'
  | 'ecdsa-p384'
  | 'ecdsa-p521'
  | 'rsa-2048'
  | 'rsa-3072'
  | 'rsa-4096'
  | 'hmac'
  | 'ml-dsa'
  | 'hybrid'
  | 'slh-dsa'
  | 'ml-kem'
  | 'mlkem768-x25519'
  | 'aes128-cmac'
  | 'aes256-cmac'
  | 'x25519';

export interface KeyTypeInfo {
  readonly name: KeyType;
  readonly vaultId: number;
  readonly encryption: boolean;
  readonly decryption: boolean;
  readonly signing: boolean;
  readonly derivation: boolean;
  /** Authenticated encryption with associated data. */
  readonly aead: boolean;
  readonly family: 'aes-gcm' | 'chacha' | 'ed25519' | 'ecdsa' | 'rsa' | 'hmac' | 'cmac' | 'x25519' | 'ml-dsa' | 'hybrid' | 'slh-dsa' | 'kem';
  /** Symmetric key length in bytes (AES, ChaCha, CMAC). */
  readonly keyBytes?: number;
  /** Nonce length in bytes of a symmetric cipher: 12, or 24 for XChaCha20-Poly1305. */
  readonly nonceBytes?: number;
  readonly curve?: 'P-256' | 'P-384' | 'P-521';
  readonly rsaBits?: number;
}

const t = (info: KeyTypeInfo) => info;

/** The backup type number of xchacha20-poly1305 keys (see above). */
export const XCHACHA_BACKUP_ID = 1011;

/** The backup type numbers of the key-encapsulation types, which neither anchor has (docs/transit-kem.md). */
export const ML_KEM_BACKUP_ID = 1020;
export const MLKEM768_X25519_BACKUP_ID = 1021;
/** The backup type number of x25519 keys (see above). */
export const X25519_BACKUP_ID = 1022;

export const KEY_TYPES: Readonly<Record<KeyType, KeyTypeInfo>> = {
  'aes256-gcm96': t({ name: 'aes256-gcm96', vaultId: 0, encryption: true, decryption: true, signing: false, derivation: true, aead: true, family: 'aes-gcm', keyBytes: 32 }),
  'ecdsa-p256': t({ name: 'ecdsa-p256', vaultId: 1, encryption: false, decryption: false, signing: true, derivation: false, aead: false, family: 'ecdsa', curve: 'P-256' }),
  ed25519: t({ name: 'ed25519', vaultId: 2, encryption: false, decryption: false, signing: true, derivation: true, aead: false, family: 'ed25519' }),
  'rsa-2048': t({ name: 'rsa-2048', vaultId: 3, encryption: true, decryption: true, signing: true, derivation: false, aead: false, family: 'rsa', rsaBits: 2048 }),
  'rsa-4096': t({ name: 'rsa-4096', vaultId: 4, encryption: true, decryption: true, signing: true, derivation: false, aead: false, family: 'rsa', rsaBits: 4096 }),
  'chacha20-poly1305': t({ name: 'chacha20-poly1305', vaultId: 5, encryption: true, decryption: true, signing: false, derivation: true, aead: true, family: 'chacha', keyBytes: 32 }),
  'ecdsa-p384': t({ name: 'ecdsa-p384', vaultId: 6, encryption: false, decryption: false, signing: true, derivation: false, aead: false, family: 'ecdsa', curve: 'P-384' }),
  'ecdsa-p521': t({ name: 'ecdsa-p521', vaultId: 7, encryption: false, decryption: false, signing: true, derivation: false, aead: false, family: 'ecdsa', curve: 'P-521' }),
  'aes128-gcm96': t({ name: 'aes128-gcm96', vaultId: 8, encryption: true, decryption: true, signing: false, derivation: true, aead: true, family: 'aes-gcm', keyBytes: 16 }),
  'rsa-3072': t({ name: 'rsa-3072', vaultId: 9, encryption: true, decryption: true, signing: true, derivation: false, aead: false, family: 'rsa', rsaBits: 3072 }),
  'xchacha20-poly1305': t({ name: 'xchacha20-poly1305', vaultId: XCHACHA_BACKUP_ID, encryption: true, decryption: true, signing: false, derivation: true, aead: true, family: 'chacha', keyBytes: 32, nonceBytes: 24 }),
  hmac: t({ name: 'hmac', vaultId: 11, encryption: false, decryption: false, signing: false, derivation: false, aead: false, family: 'hmac' }),
  'aes128-cmac': t({ name: 'aes128-cmac', vaultId: 12, encryption: false, decryption: false, signing: false, derivation: false, aead: false, family: 'cmac', keyBytes: 16 }),
  'aes256-cmac': t({ name: 'aes256-cmac', vaultId: 13, encryption: false, decryption: false, signing: false, derivation: false, aead: false, family: 'cmac', keyBytes: 32 }),
  x25519: t({ name: 'x25519', vaultId: X25519_BACKUP_ID, encryption: false, decryption: false, signing: false, derivation: false, aead: false, family: 'x25519' }),
  // Post-quantum signing keys (crypto/pq-signing.ts); each takes a parameter_set.
  'ml-dsa': t({ name: 'ml-dsa', vaultId: 14, encryption: false, decryption: false, signing: true, derivation: false, aead: false, family: 'ml-dsa' }),
  hybrid: t({ name: 'hybrid', vaultId: 15, encryption: false, decryption: false, signing: true, derivation: false, aead: false, family: 'hybrid' }),
  'slh-dsa': t({ name: 'slh-dsa', vaultId: 17, encryption: false, decryption: false, signing: true, derivation: false, aead: false, family: 'slh-dsa' }),
  'ml-kem': t({ name: 'ml-kem', vaultId: ML_KEM_BACKUP_ID, encryption: true, decryption: true, signing: false, derivation: false, aead: true, family: 'kem' }),
  'mlkem768-x25519': t({ name: 'mlkem768-x25519', vaultId: MLKEM768_X25519_BACKUP_ID, encryption: true, decryption: true, signing: false, derivation: false, aead: true, family: 'kem' }),
};

export const KEY_TYPE_NAMES = Object.keys(KEY_TYPES) as KeyType[];

/** The info of a type name; 400 `unknown key type X` otherwise (managed_key has its own message). */
export function keyTypeInfo(name: string): KeyTypeInfo {
  if (name === 'managed_key') throw new BadRequestError('managed keys are not available: no managed-key backend is configured');
  const info = (KEY_TYPES as Record<string, KeyTypeInfo | undefined>)[name];
  if (!info) throw new BadRequestError(`unknown key type ${name}`);
  return info;
}

/** Vault's numeric id → type (backups). */
export function keyTypeByVaultId(id: number): KeyTypeInfo | undefined {
  return Object.values(KEY_TYPES).find((k) => k.vaultId === id);
}
