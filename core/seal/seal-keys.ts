/**
 * What the seal (seal-manager.ts), rekey (rekey.ts) and root generation (root-generation.ts) share:
 * the stored seal configuration, and the operations on the root key that rekey and root generation
 * are given by the seal manager.
 */
import type { ShareScheme } from './shares.js';

/** The stored seal configuration: the current shares' scheme. */
export interface SealConfig extends ShareScheme {
  readonly type: 'shamir';
}

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
  /** The current seal configuration. @throws SealedError while sealed. */
  config(): Promise<SealConfig>;
  /** Opens the stored root key with `unsealKey` (the caller zeroizes it). @throws BadRequestError for a wrong key. */
  openRootKey(unsealKey: Buffer): Promise<Buffer>;
  /** Stores `rootKey` under `unsealKey` and `scheme` as the seal configuration, together. */
  rewrapRootKey(rootKey: Buffer, unsealKey: Buffer, scheme: ShareScheme): Promise<void>;
  writeKeyBackup(backup: KeyBackup): Promise<void>;
}
