/**
 * What the seal (seal-manager.ts), rekey (rekey.ts) and root generation (root-generation.ts) share:
 * the stored seal configuration (Shamir's or an auto seal's), and the operations on the root key
 * that rekey and root generation are given by the seal manager.
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
 * What rekey and root generation need from the seal, on an unsealed server: the current scheme,
 * proof that a recovered unseal key is the real one, and replacing it.
 */
export interface SealKeys {
  /**
   * The current seal configuration. @throws SealedError while sealed; BadRequestError with an auto
   * seal, which has no unseal key shares.
   */
  config(): Promise<ShamirSealConfig>;
  /** Opens the stored root key with `unsealKey` (the caller zeroizes it). @throws BadRequestError for a wrong key. */
  openRootKey(unsealKey: Buffer): Promise<Buffer>;
  /** Stores `rootKey` under `unsealKey` and `scheme` as the seal configuration, together. */
  rewrapRootKey(rootKey: Buffer, unsealKey: Buffer, scheme: ShareScheme): Promise<void>;
  writeKeyBackup(backup: KeyBackup): Promise<void>;
}
