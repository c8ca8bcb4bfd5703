/**
 * The seal's records outside the barrier (readable while sealed): the seal configuration, the root
 * key under the unseal key (or, with an auto seal, as the seal wrapped it), and a rekey's backup of
 * PGP-encrypted shares.
 */
import { BadRequestError, IntegrityError } from '../errors.js';
import type { BatchOp, Storage } from '../../storage/storage.js';
import { gcmOpen, gcmSeal } from '../../storage/aead.js';
import type { KeyBackup, SealConfig, ShamirSealConfig } from './seal-keys.js';

/** Physical (outside the barrier) storage keys. */
export const KEYS = {
  // Plaintext seal configuration: readable while sealed (seal-status needs t and n). Its presence
  // is what "initialized" means, so it is written last during init.
  sealConfig: 'core/seal-config',
  // The root key, AES-256-GCM-encrypted under the unseal key (AAD = this path); with an auto seal,
  // the seal's WrappedKey as JSON (Vault keeps its stored keys at this path too).
  rootKeyUnderUnsealKey: 'core/hsm/barrier-unseal-keys',
  // The PGP-encrypted shares of a rekey with `backup` (Vault's path), until an operator deletes
  // them. Outside the barrier as in Vault: they are encrypted to their holders already.
  keyBackup: 'core/unseal-keys-backup',
} as const;

/** The stored seal configuration; undefined before init. */
export async function readSealConfig(physical: Storage): Promise<SealConfig | undefined> {
  const raw = await physical.get(KEYS.sealConfig);
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as SealConfig) : undefined;
}

/** The root key as stored under the unseal key (AES-256-GCM, the record's path as associated data). */
export function rootKeyUnderUnsealKey(unsealKey: Buffer, rootKey: Buffer): Buffer {
  return gcmSeal(unsealKey, rootKey, aad(KEYS.rootKeyUnderUnsealKey));
}

/** The root key, opened with the unseal key; a wrong key is a 400. */
export async function openRootKeyRecord(physical: Storage, unsealKey: Buffer): Promise<Buffer> {
  const sealed = await physical.get(KEYS.rootKeyUnderUnsealKey);
  if (!sealed) throw new BadRequestError('Vault is not initialized');
  try {
    return gcmOpen(unsealKey, sealed, aad(KEYS.rootKeyUnderUnsealKey));
  } catch (err) {
    if (err instanceof IntegrityError) throw new BadRequestError('unseal failed, invalid key');
    throw err;
  }
}

/** A rekey's commit as one batch: the root key under the new unseal key and the new scheme together. */
export function shamirRecordOps(rootKey: Buffer, unsealKey: Buffer, config: ShamirSealConfig): BatchOp[] {
  return [
    { type: 'put', key: KEYS.rootKeyUnderUnsealKey, value: rootKeyUnderUnsealKey(unsealKey, rootKey) },
    { type: 'put', key: KEYS.sealConfig, value: encodeConfig(config) },
  ];
}

export async function readKeyBackup(physical: Storage): Promise<KeyBackup | undefined> {
  const raw = await physical.get(KEYS.keyBackup);
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as KeyBackup) : undefined;
}

export function writeKeyBackup(physical: Storage, backup: KeyBackup): Promise<void> {
  return physical.put(KEYS.keyBackup, Buffer.from(JSON.stringify(backup), 'utf8'));
}

export function encodeConfig(config: SealConfig): Buffer {
  return Buffer.from(JSON.stringify(config), 'utf8');
}

export function aad(path: string): Buffer {
  return Buffer.from(path, 'utf8');
}
