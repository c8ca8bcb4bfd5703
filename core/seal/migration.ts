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
 *
 * In an HA cluster, as Vault has it (the page above, "Migration steps"): each node is restarted
 * with the new configuration and unsealed with the shares and `migrate`; it checks them, unseals,
 * and stays a standby with the migration pending. The active node is stepped down, and the node
 * that takes its place moves the store before it loads anything. A node still running with the old
 * configuration goes on with the root key it holds (no migration changes it) until it is
 * restarted with the new one; restarted with the old one, it stays sealed and says why.
 */
import { BadRequestError, IntegrityError } from '../errors.js';
import type { Barrier } from '../../storage/barrier.js';
import type { Storage } from '../../storage/storage.js';
import { zeroize } from '../../storage/aead.js';
import type { AutoSeal } from './auto-seal.js';
import { decodeWrapped, encodeWrapped, type UnsealLog } from './auto-unseal.js';
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
  if (!seals.to && !from) throw new BadRequestError(staleShamirNode(config.type));
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
 * Why a sealed node does not unseal on its own: the last auto-unseal attempt's failure, or a store
 * auto-sealed (another node migrated it) while this node's configuration has no seal stanza.
 */
export function sealError(config: SealConfig | undefined, seals: { readonly autoSeal?: AutoSeal | undefined; readonly shamirFrom?: AutoSeal | undefined }, lastError: string | undefined): { sealError?: string } {
  if (lastError) return { sealError: lastError };
  if (!config || config.type === 'shamir' || seals.autoSeal || seals.shamirFrom) return {};
  return { sealError: staleShamirNode(config.type) };
}

/** What a node configured for Shamir shares says of a store an auto seal wraps. */
export function staleShamirNode(type: string): string {
  return `the store's root key is wrapped by the ${type} seal (a seal migration, perhaps through another node), and this node's configuration has no seal stanza: restart it with the ${type} seal's stanza and it unseals itself; the shares are recovery shares now and unseal nothing`;
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

/** Where a share's unseal moves the store. */
export type Migration = Exclude<UnsealPlan, { kind: 'unseal' }>;

/**
 * Moves the store where `migration` says with `key` (the unseal key for Shamir to auto, the
 * recovery key back to Shamir): `openForMigration`, then `commitMigration`. Returns the new
 * configuration, the barrier unsealed.
 * @throws BadRequestError for a wrong key; UnavailableError when the seal cannot be reached.
 * Nothing is stored then, and the barrier stays sealed.
 */
export async function migrate(migration: Migration, key: Buffer, store: MigratingStore, log: UnsealLog): Promise<SealConfig> {
  await openForMigration(migration, key, store);
  try {
    const config = await commitMigration(migration, key, store);
    logMigrated(migration, log);
    return config;
  } catch (err) {
    store.barrier.seal();
    throw err;
  }
}

/**
 * An HA node's migration, from its unseal with `migrate` until it is the active node: the key it
 * was unsealed with is kept in memory until then (as Vault's standbys keep it), and forgotten when
 * the store is moved or the node seals.
 */
export class PendingMigration {
  private pending: { readonly migration: Migration; readonly key: Buffer } | undefined;

  get held(): boolean {
    return this.pending !== undefined;
  }

  /** Checks the key and unseals (`openForMigration`); the move waits for `commit`. */
  async open(migration: Migration, key: Buffer, store: MigratingStore, log: UnsealLog): Promise<void> {
    await openForMigration(migration, key, store);
    this.forget();
    this.pending = { migration, key: Buffer.from(key) };
    log.info({ seal: migration.seal.type }, 'seal migration: the shares are checked; this node moves the store once it is the active node (step the active node down)');
  }

  /**
   * Moves the store, unless `stored` (the configuration read afresh) shows another node did; then
   * forgets the key. Answers the configuration now stored. Kept when the move fails.
   */
  async commit(stored: SealConfig | undefined, store: MigratingStore, log: UnsealLog): Promise<SealConfig | undefined> {
    const pending = this.pending;
    if (!pending) return stored;
    const done = pending.migration.kind === 'to-auto' ? stored?.type !== 'shamir' : stored?.type === 'shamir';
    let config = stored;
    if (done) {
      log.info({}, 'seal migration: another node moved the store already');
    } else {
      config = await commitMigration(pending.migration, pending.key, store);
      logMigrated(pending.migration, log);
    }
    this.forget();
    return config;
  }

  forget(): void {
    if (this.pending) zeroize(this.pending.key);
    this.pending = undefined;
  }
}

function logMigrated(migration: Migration, log: UnsealLog): void {
  log.info(
    { seal: migration.seal.type },
    migration.kind === 'to-shamir'
      ? 'seal migration: the root key is stored under the recovery key; the recovery shares are the unseal shares now'
      : 'seal migration: the root key is wrapped by the seal; the unseal key shares are its recovery shares now and unseal nothing',
  );
}

/**
 * The first half, which writes nothing: opens the root key (with the unseal key, or through the
 * disabled seal), unseals the barrier with it (opening the keyring proves the root key), and
 * checks a recovery key against its verifier. An HA node stops here until it is the active node
 * (seal-manager.ts), as Vault's standbys do.
 * @throws as `migrate`; the barrier stays sealed then.
 */
export async function openForMigration(migration: Migration, key: Buffer, store: MigratingStore): Promise<void> {
  const rootKey = migration.kind === 'to-auto' ? await openRootKeyRecord(store.physical, key) : await openThroughSeal(migration.seal, store.physical);
  try {
    await store.barrier.unseal(rootKey);
  } finally {
    zeroize(rootKey);
  }
  if (migration.kind === 'to-auto') return;
  try {
    await store.recovery.open(key);
  } catch (err) {
    store.barrier.seal();
    throw err;
  }
}

/**
 * The second half, with the barrier unsealed by the first: checks `key` again against what is
 * stored now (another node may have rekeyed since), then writes the store's move in one batch, so
 * a crash leaves either the old seal or the new one working. To an auto seal: the root key
 * wrapped by the seal (the wrapping checked to open), the seal's configuration, and the unseal key
 * as the recovery key (the old shares become the recovery shares, as the seal-migration page
 * above says). To Shamir: the root key under the recovery key with the recovery shares' scheme,
 * and the recovery configuration dropped. Returns the new configuration.
 * @throws BadRequestError when `key` is not the current one; UnavailableError when the seal cannot be reached.
 */
export async function commitMigration(migration: Migration, key: Buffer, store: MigratingStore): Promise<SealConfig> {
  if (migration.kind === 'to-auto') {
    const rootKey = await openRootKeyRecord(store.physical, key);
    try {
      const { seal, scheme } = migration;
      const wrapped = await seal.wrap(rootKey, aad(KEYS.rootKeyUnderUnsealKey));
      zeroize(await seal.unwrap(wrapped, aad(KEYS.rootKeyUnderUnsealKey)));
      const config: AutoSealConfig = { type: seal.type, secret_shares: 1, secret_threshold: 1, stored_shares: 1 };
      const { type: _type, ...shares } = scheme;
      await store.physical.batch([
        { type: 'put', key: KEYS.rootKeyUnderUnsealKey, value: encodeWrapped(wrapped) },
        store.recovery.recordOp(key, shares),
        { type: 'put', key: KEYS.sealConfig, value: encodeConfig(config) },
      ]);
      return config;
    } finally {
      zeroize(rootKey);
    }
  }
  await store.recovery.open(key);
  const { verifier: _verifier, ...shares } = migration.scheme;
  const config: ShamirSealConfig = { type: 'shamir', ...shares };
  const rootKey = store.barrier.copyRootKey();
  try {
    await store.physical.batch([...shamirRecordOps(rootKey, key, config), store.recovery.dropOp()]);
    return config;
  } finally {
    zeroize(rootKey);
  }
}

/** The root key as the disabled seal opens it. @throws BadRequestError when that seal does not hold this store. */
async function openThroughSeal(seal: AutoSeal, physical: Storage): Promise<Buffer> {
  const raw = await physical.get(KEYS.rootKeyUnderUnsealKey);
  if (!raw) throw new BadRequestError('Vault is not initialized');
  try {
    return await seal.unwrap(decodeWrapped(raw), aad(KEYS.rootKeyUnderUnsealKey));
  } catch (err) {
    // The operator's configuration names a seal that does not hold this store: theirs to fix, not a server fault.
    if (err instanceof IntegrityError) throw new BadRequestError(`migrate: the disabled ${seal.type} seal cannot open the stored root key: ${err.message}`);
    throw err;
  }
}
