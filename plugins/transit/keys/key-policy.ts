/**
 * A named key: its settings (the policy) and its versions. Policies are immutable values: every
 * change (rotate, config, trim) makes a new one, written under the key's lock and then swapped
 * into the cache, so a request that already holds a policy never sees it change under it.
 */
import { BadRequestError } from '../../../sdk/index.js';
import { pqParameters, type HybridEcType, type PqParameters } from '../crypto/pq-signing.js';
import { keyTypeInfo, type KeyType, type KeyTypeInfo } from './key-types.js';
import { parameterSetFor } from '../crypto/kem-parameters.js';
import type { KeyVersion } from './key-version.js';

export interface BackupInfo {
  readonly time: string;
  readonly version: number;
}

export interface PolicySettings {
  readonly name: string;
  readonly type: KeyType;
  readonly derived: boolean;
  /** 1 = HKDF-SHA-256 (every key made here); 0 = legacy HMAC-SHA256 counter mode (old backups). */
  readonly kdf: 0 | 1;
  readonly convergentEncryption: boolean;
  /** -1 for keys made now (the version lives on each key version), 1 or 2 for old restored keys. */
  readonly convergentVersion: number;
  readonly exportable: boolean;
  readonly allowPlaintextBackup: boolean;
  readonly deletionAllowed: boolean;
  readonly minDecryptionVersion: number;
  readonly minEncryptionVersion: number;
  readonly minAvailableVersion: number;
  readonly latestVersion: number;
  /** Seconds; 0 = off. */
  readonly autoRotatePeriod: number;
  /** Bytes, hmac keys only (0 otherwise). */
  readonly keySize: number;
  readonly imported: boolean;
  readonly allowImportedKeyRotation: boolean;
  readonly backupInfo?: BackupInfo;
  readonly restoreInfo?: BackupInfo;
  /** ml-dsa (44, 65, 87), slh-dsa (slh-dsa-sha2-128s …), hybrid (its ML-DSA set) and ml-kem (768, 1024) keys only. */
  readonly parameterSet?: string;
  /** hybrid keys only: the type of their elliptic-curve half. */
  readonly hybridEc?: HybridEcType;
}

export class KeyPolicy {
  readonly info: KeyTypeInfo;

  constructor(
    readonly settings: PolicySettings,
    /** Every version still available (≥ minAvailableVersion), by number. */
    readonly versions: ReadonlyMap<number, KeyVersion>,
  ) {
    this.info = keyTypeInfo(settings.type);
  }

  get name(): string {
    return this.settings.name;
  }

  /** The parameters of a post-quantum key (ml-dsa, slh-dsa, hybrid); undefined for the others. */
  get pq(): PqParameters | undefined {
    const { parameterSet, hybridEc } = this.settings;
    // An ml-kem key has a parameter set too; it is no signing key.
    if (this.info.family === 'kem') return undefined;
    return parameterSet ? { parameterSet, ...(hybridEc ? { hybridEc } : {}) } : undefined;
  }

  with(changes: Partial<PolicySettings>, versions: ReadonlyMap<number, KeyVersion> = this.versions): KeyPolicy {
    return new KeyPolicy({ ...this.settings, ...changes }, versions);
  }

  /** The version to encrypt, sign or HMAC with: 0 = latest; refused below min_encryption_version or above latest. */
  versionForWriting(requested: number, what = 'encryption'): KeyVersion {
    const s = this.settings;
    if (requested < 0) throw new BadRequestError(`requested version for ${what} is negative`);
    const version = requested === 0 ? s.latestVersion : requested;
    if (version > s.latestVersion) throw new BadRequestError(`requested version for ${what} is higher than the latest key version`);
    if (s.minEncryptionVersion > 0 && version < s.minEncryptionVersion) {
      throw new BadRequestError(`requested version for ${what} is less than the minimum encryption key version`);
    }
    // What it produced could never be decrypted or verified again.
    if (version < s.minDecryptionVersion) {
      throw new BadRequestError(`requested version for ${what} is less than the minimum decryption key version`);
    }
    const found = this.versions.get(version);
    if (!found) throw new BadRequestError(`key version ${version} is not available`);
    return found;
  }

  /** The version to decrypt or verify with: refused above latest or below min_decryption_version. */
  versionForReading(version: number, what: 'ciphertext' | 'signature' | 'HMAC' | 'CMAC' = 'ciphertext'): KeyVersion {
    const s = this.settings;
    if (version > s.latestVersion) throw new BadRequestError(`invalid ${what}: version is too new`);
    if (version < s.minDecryptionVersion) throw new BadRequestError('ciphertext or signature version is disallowed by policy (too old)');
    const found = this.versions.get(version);
    if (!found) throw new BadRequestError(`invalid ${what}: version ${version} is no longer available`);
    return found;
  }
}

/** Checks creation settings the way Vault does; returns the settings of a version-less key. */
export function newPolicySettings(input: {
  name: string;
  type: string;
  derived: boolean;
  convergent: boolean;
  exportable: boolean;
  allowPlaintextBackup: boolean;
  keySize: number;
  autoRotatePeriod: number;
  parameterSet?: string | undefined;
  hybridPqc?: string | undefined;
  hybridEc?: string | undefined;
}): PolicySettings {
  const info = keyTypeInfo(input.type);
  const pq = pqParameters(info.family, info.name, input);
  const kemParameterSet = parameterSetFor(info, input.parameterSet);
  if (input.convergent && !input.derived) throw new BadRequestError('convergent encryption requires derivation to be enabled');
  if (input.derived && !info.derivation) throw new BadRequestError(`key derivation and convergent encryption not supported for keys of type ${info.name}`);
  if (input.convergent && info.family === 'ed25519') throw new BadRequestError(`convergent encryption not supported for keys of type ${info.name}`);
  if (input.keySize !== 0 && info.family !== 'hmac') throw new BadRequestError(`key_size is not valid for algorithm ${info.name}`);
  if (info.family === 'hmac' && input.keySize !== 0 && (input.keySize < 32 || input.keySize > 512)) throw new BadRequestError(`invalid key_size ${input.keySize}`);
  checkAutoRotatePeriod(input.autoRotatePeriod);
  return {
    name: input.name,
    type: info.name,
    ...(kemParameterSet ? { parameterSet: kemParameterSet } : {}),
    derived: input.derived,
    kdf: 1,
    convergentEncryption: input.convergent,
    convergentVersion: -1,
    exportable: input.exportable,
    allowPlaintextBackup: input.allowPlaintextBackup,
    deletionAllowed: false,
    minDecryptionVersion: 1,
    minEncryptionVersion: 0,
    minAvailableVersion: 0,
    latestVersion: 0,
    autoRotatePeriod: input.autoRotatePeriod,
    keySize: info.family === 'hmac' ? input.keySize || 32 : 0,
    imported: false,
    allowImportedKeyRotation: false,
    ...(pq ?? {}),
  };
}

export function checkAutoRotatePeriod(seconds: number): void {
  if (seconds !== 0 && seconds < 3600) throw new BadRequestError('auto rotate period must be 0 to disable or at least an hour');
}
