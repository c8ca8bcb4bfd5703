/**
 * Recovery keys: with an auto seal there is no unseal key for operators to hold, so a random
 * recovery key is split into shares instead, as in Vault
 * (https://developer.hashicorp.com/vault/docs/concepts/seal#recovery-key). A threshold of them
 * authorizes what the unseal key's shares authorize with Shamir (root generation, rekey of the
 * recovery key itself), but they decrypt nothing: the recovery key is no key of the hierarchy, and
 * recovery shares never unseal.
 *
 * What is stored, in one record outside the barrier (`core/recovery-config`, Vault's path): the
 * shares' scheme (seal-status shows its t and n while sealed) and a verifier of the recovery key,
 * HMAC-SHA-256 of it under a key derived from the barrier's keyring. The recovery key itself is
 * stored nowhere. The verifier is checked only while unsealed; someone who can write the storage
 * but not read the keyring cannot forge one for shares of their own, and one record means a crash
 * leaves either the old shares or the new ones working. docs/security.md has the threat model.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { BadRequestError, SealedError } from '../errors.js';
import type { Barrier } from '../../storage/barrier.js';
import type { BatchOp, Storage } from '../../storage/storage.js';
import { zeroize } from '../../storage/aead.js';
import type { KeyBackup, SealKeys } from './seal-keys.js';
import { splitUnsealKey, validateShamirConfig, type ShareScheme } from './shares.js';

const KEYS = {
  config: 'core/recovery-config',
  // The PGP-encrypted recovery shares of a rekey with `backup` (Vault's path).
  backup: 'core/recovery-keys-backup',
} as const;

/** The label of the key the verifier is made under (`Barrier.deriveKey`). */
const VERIFIER_LABEL = 'recovery key verifier';

/** The stored recovery configuration. */
export interface RecoveryConfig extends ShareScheme {
  /** Hex HMAC-SHA-256 of the recovery key; '' while there are no shares (recovery_shares = 0). */
  readonly verifier: string;
}

/** The recovery shares' scheme with none handed out yet. */
const NO_SHARES: RecoveryConfig = { secret_shares: 0, secret_threshold: 0, share_digests: [], share_salt: '', verifier: '' };

export const RECOVERY_FIELDS = { shares: 'recovery_shares', threshold: 'recovery_threshold' } as const;

/**
 * OpenBao's rules (https://openbao.org/api-docs/system/init/): 0 shares with 0 threshold defers
 * them to a later authenticated rekey; otherwise Vault's rules for shares.
 */
export function validateRecoveryConfig(shares: number, threshold: number): void {
  if (shares === 0 && threshold === 0) return;
  if (shares === 0) throw new BadRequestError('recovery_threshold must be 0 when recovery_shares is 0');
  validateShamirConfig(shares, threshold, RECOVERY_FIELDS);
}

export class RecoveryKeys implements SealKeys {
  /** `autoSealed`: whether the store's seal is an auto seal; only then are there recovery keys. */
  constructor(
    private readonly physical: Storage,
    private readonly barrier: Barrier,
    private readonly autoSealed: () => Promise<boolean>,
  ) {}

  /**
   * The stored configuration, readable while sealed; undefined when there is none (a Shamir
   * store, or an auto-sealed one initialized before recovery keys existed, which has no shares).
   */
  async stored(): Promise<RecoveryConfig | undefined> {
    const raw = await this.physical.get(KEYS.config);
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as RecoveryConfig) : undefined;
  }

  async config(): Promise<RecoveryConfig> {
    if (this.barrier.sealed) throw new SealedError();
    if (!(await this.autoSealed())) throw new BadRequestError('the store has a Shamir seal: it has no recovery keys; its unseal key shares are rekeyed at sys/rekey');
    return (await this.stored()) ?? NO_SHARES;
  }

  /**
   * A new recovery key split into `shares`, stored as its scheme and verifier; needs the barrier
   * unsealed (init runs it while the barrier is briefly open). With 0 shares, stores that there
   * are none.
   */
  async create(shares: number, threshold: number): Promise<Buffer[]> {
    if (shares === 0) {
      await this.write(NO_SHARES);
      return [];
    }
    const key = randomBytes(32);
    try {
      const { keys, scheme } = splitUnsealKey(key, shares, threshold);
      await this.write({ ...scheme, verifier: this.verifierOf(key) });
      return keys;
    } finally {
      zeroize(key);
    }
  }

  /** Checks a recovery key combined from shares against the verifier; there is nothing to open. */
  async open(key: Buffer): Promise<Buffer> {
    const { verifier } = await this.config();
    const mine = Buffer.from(this.verifierOf(key), 'hex');
    const stored = Buffer.from(verifier, 'hex');
    if (stored.length !== mine.length || !timingSafeEqual(stored, mine)) throw new BadRequestError('recovery key verification failed: the shares do not make the current recovery key');
    return Buffer.alloc(0);
  }

  async replace(_opened: Buffer, newKey: Buffer, scheme: ShareScheme): Promise<void> {
    if (this.barrier.sealed) throw new SealedError();
    await this.write({ ...scheme, verifier: this.verifierOf(newKey) });
  }

  /** The batch operation that drops the recovery configuration (a migration to Shamir shares). */
  dropOp(): BatchOp {
    return { type: 'delete', key: KEYS.config };
  }

  writeKeyBackup(backup: KeyBackup): Promise<void> {
    return this.physical.put(KEYS.backup, Buffer.from(JSON.stringify(backup), 'utf8'));
  }

  /** `GET sys/rekey/recovery-key-backup`: undefined when there is none. */
  async readKeyBackup(): Promise<KeyBackup | undefined> {
    const raw = await this.physical.get(KEYS.backup);
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as KeyBackup) : undefined;
  }

  deleteKeyBackup(): Promise<void> {
    return this.physical.delete(KEYS.backup);
  }

  /**
   * The batch operation that makes `key`, split as `scheme` says, the recovery key (a migration from
   * Shamir shares, whose unseal key it was); needs the barrier unsealed.
   */
  recordOp(key: Buffer, scheme: ShareScheme): BatchOp {
    if (this.barrier.sealed) throw new SealedError();
    return { type: 'put', key: KEYS.config, value: encodeRecord({ ...scheme, verifier: this.verifierOf(key) }) };
  }

  private write(config: RecoveryConfig): Promise<void> {
    return this.physical.put(KEYS.config, encodeRecord(config));
  }

  private verifierOf(key: Uint8Array): string {
    const derived = this.barrier.deriveKey(VERIFIER_LABEL);
    try {
      return createHmac('sha256', derived).update(key).digest('hex');
    } finally {
      zeroize(derived);
    }
  }
}

function encodeRecord(config: RecoveryConfig): Buffer {
  return Buffer.from(JSON.stringify(config), 'utf8');
}
