/**
 * Seal migration from Shamir shares to an auto seal, as Vault does it
 * (https://developer.hashicorp.com/vault/docs/concepts/seal#seal-migration): the operator adds the
 * seal stanza, restarts, and unseals with the old shares and `migrate` (`keywarden operator unseal
 * -migrate`); at the threshold the root key is opened with the unseal key, wrapped by the seal, and
 * stored with the seal's configuration in one batch, so a crash leaves either the shares or the
 * seal working. From then on every node with the stanza unseals itself, and the shares open
 * nothing: the shares are the recovery shares from then on, the unseal key becoming the recovery
 * key. From one auto seal to another the seals themselves move the store (seal-set.ts).
 *
 * Back from an auto seal to Shamir shares, the same page's way: every seal stanza gets
 * `disabled = "true"`, and the operator unseals with the recovery shares and `migrate`. At the
 * threshold the disabled seal opens the root key, the shares are checked against the recovery
 * key's verifier, and the recovery key becomes the unseal key: the root key is stored under it with
 * the recovery shares' scheme, and the recovery configuration dropped, in one batch. The recovery
 * shares are the unseal shares from then on.
 */
import { BadRequestError, IntegrityError } from '../errors.js';
import type { Barrier } from '../../storage/barrier.js';
import type { Storage } from '../../storage/storage.js';
import { zeroize } from '../../storage/aead.js';
import type { AutoSeal } from './auto-seal.js';
import { decodeWrapped, encodeWrapped } from './auto-unseal.js';
import type { RecoveryConfig, RecoveryKeys } from './recovery.js';
import type { AutoSealConfig, SealConfig, ShamirSealConfig } from './seal-keys.js';
import { aad, encodeConfig, KEYS, openRootKeyRecord, shamirRecordOps } from './seal-records.js';

/**
 * What an unseal share counts toward: the scheme it is checked against, and where the store moves
 * at the threshold (nowhere for a plain unseal).
 */
export type UnsealPlan =
  | { readonly kind: 'unseal'; readonly scheme: ShamirSealConfig }
  | { readonly kind: 'to-auto'; readonly scheme: ShamirSealConfig; readonly seal: AutoSeal }
  | { readonly kind: 'to-shamir'; readonly scheme: RecoveryConfig; readonly seal: AutoSeal };

/**
 * The plan for `sys/unseal` on a sealed, initialized store. `seals.to` is the configured auto seal;
 * `seals.from`, the seals when every stanza is disabled (the store moves back to Shamir).
 * @throws BadRequestError when the store's seal takes no shares, or `migrate` does not match what is pending.
 */
export async function planUnseal(
  config: SealConfig,
  seals: { readonly to?: AutoSeal | undefined; readonly from?: AutoSeal | undefined },
  migrate: boolean,
  recovery: RecoveryKeys,
): Promise<UnsealPlan> {
  if (config.type === 'shamir') {
    const to = pendingMigration(config, seals.to, migrate);
    return to ? { kind: 'to-auto', scheme: config, seal: to } : { kind: 'unseal', scheme: config };
  }
  const from = seals.from;
  if (!from) {
    // The configured seal: the stored type is the one the store was initialized with, and seals move it on (seal-set.ts).
    throw new BadRequestError(`the ${seals.to?.type ?? config.type} seal unseals this store at start; it takes no unseal keys (a sealed node unseals itself when restarted)`);
  }
  if (!migrate) {
    throw new BadRequestError(
      `a seal migration to Shamir is pending: every seal stanza is disabled; unseal with the recovery shares and migrate=true (keywarden operator unseal -migrate), or enable the ${from.type} seal again`,
    );
  }
  const scheme = await recovery.stored();
  if (!scheme || scheme.secret_shares === 0) {
    throw new BadRequestError('migrate: the store has no recovery shares to become its unseal shares; enable the seal again, generate them at sys/rekey-recovery-key, then migrate');
  }
  return { kind: 'to-shamir', scheme, seal: from };
}

/**
 * The auto seal a share's unseal migrates to, or undefined for a plain unseal.
 * @throws BadRequestError when a migration is pending and `migrate` was not asked for, or asked
 * for with none pending (as Vault refuses both).
 */
function pendingMigration(config: SealConfig, seal: AutoSeal | undefined, migrate: boolean): AutoSeal | undefined {
  const pending = config.type === 'shamir' && seal !== undefined;
  if (pending && !migrate) {
    throw new BadRequestError(
      `a seal migration is pending: the configuration has seal "${seal.type}" and the store is sealed with Shamir shares; unseal with the shares and migrate=true (keywarden operator unseal -migrate), or remove the seal stanza`,
    );
  }
  if (!pending && migrate) throw new BadRequestError('migrate: no seal migration is pending (the configuration has no seal stanza for this Shamir store)');
  return pending ? seal : undefined;
}

/** What a migration reads and writes. */
interface MigratingStore {
  readonly physical: Storage;
  readonly barrier: Barrier;
  readonly recovery: RecoveryKeys;
}

/**
 * Opens the root key with the unseal key, unseals the barrier with it (opening the keyring proves
 * the root key before the store changes), wraps it with `seal`, checks the wrapping opens, and
 * stores it with the auto seal's configuration and the unseal key as the recovery key (the old
 * shares become the recovery shares, as the seal-migration page above says) in one batch. Returns
 * the auto seal's configuration, the barrier unsealed.
 * @throws BadRequestError for a wrong unseal key; UnavailableError when the seal cannot be reached.
 * Nothing is stored then, and the barrier stays sealed.
 */
export async function migrateToAutoSeal(seal: AutoSeal, unsealKey: Buffer, scheme: ShamirSealConfig, store: MigratingStore): Promise<AutoSealConfig> {
  const rootKey = await openRootKeyRecord(store.physical, unsealKey);
  try {
    await store.barrier.unseal(rootKey);
    try {
      const wrapped = await seal.wrap(rootKey, aad(KEYS.rootKeyUnderUnsealKey));
      zeroize(await seal.unwrap(wrapped, aad(KEYS.rootKeyUnderUnsealKey)));
      const config: AutoSealConfig = { type: seal.type, secret_shares: 1, secret_threshold: 1, stored_shares: 1 };
      const { type: _type, ...shares } = scheme;
      await store.physical.batch([
        { type: 'put', key: KEYS.rootKeyUnderUnsealKey, value: encodeWrapped(wrapped) },
        store.recovery.recordOp(unsealKey, shares),
        { type: 'put', key: KEYS.sealConfig, value: encodeConfig(config) },
      ]);
      return config;
    } catch (err) {
      store.barrier.seal();
      throw err;
    }
  } finally {
    zeroize(rootKey);
  }
}

/**
 * Opens the root key through the disabled `seal`, unseals the barrier with it, checks the recovery
 * key, and stores the root key under the recovery key with the recovery shares' scheme, dropping the
 * recovery configuration, in one batch. Returns the new Shamir configuration, the barrier unsealed.
 * @throws UnavailableError when the seal cannot be reached; BadRequestError when it cannot open the
 * stored root key or the shares do not make the recovery key. Nothing is stored then, and the barrier stays sealed.
 */
export async function migrateToShamir(
  seal: AutoSeal,
  recoveryKey: Buffer,
  scheme: RecoveryConfig,
  store: MigratingStore,
): Promise<ShamirSealConfig> {
  const raw = await store.physical.get(KEYS.rootKeyUnderUnsealKey);
  if (!raw) throw new BadRequestError('Vault is not initialized');
  let rootKey: Buffer;
  try {
    rootKey = await seal.unwrap(decodeWrapped(raw), aad(KEYS.rootKeyUnderUnsealKey));
  } catch (err) {
    // The operator's configuration names a seal that does not hold this store: theirs to fix, not a server fault.
    if (err instanceof IntegrityError) throw new BadRequestError(`migrate: the disabled ${seal.type} seal cannot open the stored root key: ${err.message}`);
    throw err;
  }
  try {
    await store.barrier.unseal(rootKey);
    try {
      await store.recovery.open(recoveryKey);
      const { verifier: _verifier, ...shares } = scheme;
      const config: ShamirSealConfig = { type: 'shamir', ...shares };
      await store.physical.batch([...shamirRecordOps(rootKey, recoveryKey, config), store.recovery.dropOp()]);
      return config;
    } catch (err) {
      store.barrier.seal();
      throw err;
    }
  } finally {
    zeroize(rootKey);
  }
}
