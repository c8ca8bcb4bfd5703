/**
 * What the seal (seal-manager.ts), rekey (rekey.ts) and root generation (root-generation.ts) share:
 * the stored seal configuration (Shamir's or an auto seal's), and the key shares that rekey and
 * root generation are given by the seal manager.
 */
import type { AutoSealType } from './auto-seal.js';
import type { ShareScheme } from './shares.js';

/** The stored seal configuration of a Shamir seal: the current shares' scheme. */
export interface ShamirSealConfig extends ShareScheme {
  readonly type: 'shamir';
}

/**
 * The stored seal configuration of an auto seal: one stored "share", the wrapped root key, as
 * Vault records it (secret_shares = secret_threshold = stored_shares = 1).
 */
export interface AutoSealConfig {
  readonly type: AutoSealType;
  readonly secret_shares: 1;
  readonly secret_threshold: 1;
  readonly stored_shares: 1;
}

export type SealConfig = ShamirSealConfig | AutoSealConfig;

/** The PGP-encrypted shares of the last rekey with `backup`, by recipient fingerprint (hex of each message). */
export interface KeyBackup {
  readonly nonce: string;
  readonly keys: Readonly<Record<string, string[]>>;
}

/**
 * The key shares that authorize rekey and root generation on an unsealed server: the unseal key's
 * with a Shamir seal, the recovery key's with an auto seal (recovery.ts). Both are checked and
 * replaced the same way; only what the recovered key proves differs (it opens the root key, or it
 * matches the stored recovery key's verifier).
 */
export interface SealKeys {
  /**
   * The current shares' scheme. @throws SealedError while sealed; BadRequestError when this kind
   * of share does not exist with the store's seal.
   */
  config(): Promise<ShareScheme>;
  /**
   * Proves that `key`, combined from shares, is the current one, and answers what `replace` needs
   * (the root key for an unseal key; nothing for a recovery key). The caller zeroizes both.
   * @throws BadRequestError for a wrong key.
   */
  open(key: Buffer): Promise<Buffer>;
  /** Makes `newKey`, split by `scheme`, the current key, in one write. */
  replace(opened: Buffer, newKey: Buffer, scheme: ShareScheme): Promise<void>;
  writeKeyBackup(backup: KeyBackup): Promise<void>;
}

/** Keys that are `pick`'s answer at each call: the shares the store's seal has at the time. */
export function eitherKeys(pick: () => Promise<SealKeys>): SealKeys {
  return {
    config: async () => (await pick()).config(),
    open: async (key) => (await pick()).open(key),
    replace: async (opened, newKey, scheme) => (await pick()).replace(opened, newKey, scheme),
    writeKeyBackup: async (backup) => (await pick()).writeKeyBackup(backup),
  };
}
