/**
 * Init, unseal and seal. The key hierarchy (docs/architecture.md): a random 32-byte unseal key,
 * split into shares and never stored; the root key, stored encrypted under the unseal key; the
 * barrier's keyring, encrypted under the root key. With an auto seal (auto-seal.ts) there is no
 * unseal key: the seal wraps the root key itself, and the node unseals itself (auto-unseal.ts).
 * Rekey (rekey.ts) and root token generation (root-generation.ts) work on key shares through
 * `SealKeys` (seal-keys.ts): the unseal key's with Shamir, the recovery key's (recovery.ts) with an
 * auto seal.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AlreadyInitializedError, BadRequestError, SealedError } from '../errors.js';
import type { Barrier } from '../../storage/barrier.js';
import type { SharedStorage, Storage } from '../../storage/storage.js';
import { zeroize } from '../../storage/aead.js';
import { acceptShare, ShareQuorum, splitUnsealKey, validateShamirConfig, type ShareScheme } from './shares.js';
import { Rekey } from './rekey.js';
import { eitherKeys, type KeyBackup, type SealConfig, type SealKeys, type ShamirSealConfig } from './seal-keys.js';
import { RecoveryKeys } from './recovery.js';
import { RootGeneration } from './root-generation.js';
import { SerialQueue } from './serial.js';
import type { AutoSealType } from './auto-seal.js';
import { AutoUnsealer, encodeWrapped, type UnsealLog } from './auto-unseal.js';
import { SealHealth } from './seal-health.js';
import type { AutoInitResult, InitResult, SealDeps, SealStatus, UnsealStep } from './seal-api.js';
import { aad, encodeConfig, KEYS, openRootKeyRecord, readKeyBackup, readSealConfig, rootKeyUnderUnsealKey, shamirRecordOps, writeKeyBackup } from './seal-records.js';
import { SealSet, type SealBackend } from './seal-set.js';
import { migrate, PendingMigration, planUnseal, sealError, type Migration } from './migration.js';

/** An unseal in progress: the shares so far and the nonce seal-status shows. */
interface UnsealAttempt {
  readonly nonce: string;
  readonly quorum: ShareQuorum;
}

export class SealManager {
  private unsealing: UnsealAttempt | undefined;
  private config: SealConfig | undefined;
  /**
   * Whether the post-unseal setup (mounts, policies, tokens) is done. Until it is, seal-status and
   * health say sealed, as Vault's do: a client that waits for `sealed: false` finds its mounts.
   */
  private setUp = false;
  /**
   * An HA node unsealed with `migrate`: the migration and the key it was unsealed with, kept until
   * the node is the active one and moves the store (migration.ts), or seals.
   */
  private readonly pendingMigration = new PendingMigration();
  private readonly queue = new SerialQueue();
  /** With an auto seal: the node unsealing itself (auto-unseal.ts). */
  private readonly autoUnsealer: AutoUnsealer | undefined;
  /** With an auto seal: its health checked while unsealed, on the active node (seal-health.ts). */
  private readonly health: SealHealth | undefined;
  readonly rekey: Rekey;
  /** With an auto seal: the recovery key's shares, and their rekey (`sys/rekey-recovery-key/*`). */
  readonly recovery: RecoveryKeys;
  readonly recoveryRekey: Rekey;
  readonly rootGeneration: RootGeneration;

  constructor(
    private readonly physical: Storage,
    private readonly barrier: Barrier,
    private readonly deps: SealDeps,
  ) {
    const keys: SealKeys = {
      config: () => this.unsealedConfig(),
      open: (unsealKey) => this.openRootKey(unsealKey),
      replace: (rootKey, unsealKey, scheme) => this.rewrapRootKey(rootKey, unsealKey, scheme),
      writeKeyBackup: (backup) => writeKeyBackup(this.physical, backup),
    };
    this.rekey = new Rekey(keys);
    // Another node of the cluster (or worker of this server) migrated or rekeyed: the cached
    // configuration is stale, and a rekey or seal-status must not go by it. After the change feed
    // reconnected it is read again, the cached one standing while the store does not answer (a
    // standby cut off from the database still answers sys/health).
    (physical as Partial<SharedStorage>).onRemoteChange?.((change) => {
      if ('resync' in change) void readSealConfig(physical).then((config) => (this.config = config), () => undefined);
      else if (change.keys.includes(KEYS.sealConfig)) this.config = undefined;
    });
    const autoSealed = async () => ((await this.loadConfig())?.type ?? 'shamir') !== 'shamir';
    this.recovery = new RecoveryKeys(physical, barrier, autoSealed);
    this.recoveryRekey = new Rekey(this.recovery);
    // As Vault: root generation takes whichever shares the store's seal has.
    const authorizing = eitherKeys(async () => ((await autoSealed()) ? this.recovery : keys));
    this.rootGeneration = new RootGeneration(authorizing, { create: () => deps.createRootToken(), revoke: (token) => deps.revokeRootToken(token) }, deps.clock);
    if (deps.autoSeal) {
      this.autoUnsealer = new AutoUnsealer(
        deps.autoSeal,
        {
          physical,
          barrier,
          queue: this.queue,
          wrappedKeyPath: KEYS.rootKeyUnderUnsealKey,
          storedConfig: () => this.loadConfig(true),
          afterUnseal: () => this.afterUnseal(),
          log: deps.log ?? QUIET,
        },
        deps.backoff,
      );
    }
    if (deps.autoSeal instanceof SealSet) {
      const health = { seals: deps.autoSeal, physical, barrier, queue: this.queue, storedConfig: () => this.loadConfig(true), isActive: () => deps.isActive?.() ?? true, log: deps.log ?? QUIET };
      this.health = new SealHealth(health, deps.healthIntervals);
    }
  }

  /**
   * The stored configuration, cached. `fresh` reads it again: another node of an HA cluster may
   * have rekeyed since, and a share must be checked against the current scheme.
   */
  private async loadConfig(fresh = false): Promise<SealConfig | undefined> {
    if (this.config && !fresh) return this.config;
    this.config = await readSealConfig(this.physical);
    return this.config;
  }

  private async unsealedConfig(): Promise<ShamirSealConfig> {
    if (this.barrier.sealed) throw new SealedError();
    const config = await this.loadConfig();
    if (!config) throw new BadRequestError('Vault is not initialized');
    if (config.type !== 'shamir') {
      throw new BadRequestError(`the ${config.type} seal wraps the root key: there are no unseal key shares to rekey; the recovery key's shares are rekeyed at sys/rekey-recovery-key`);
    }
    return config;
  }

  /**
   * With an auto seal, starts unsealing in the background (the server's start): at once, then
   * with backoff while it fails. Does nothing without one, or before init (init unseals).
   */
  startAutoUnseal(): void {
    this.autoUnsealer?.start();
  }

  /** The configured auto seal's type; undefined for Shamir. */
  get autoSealType(): AutoSealType | undefined {
    return this.deps.autoSeal?.type;
  }

  /** `sys/seal-backend-status`: each configured seal's health; undefined with Shamir shares. */
  sealBackends(): { readonly backends: SealBackend[]; readonly fullyWrapped: boolean } | undefined {
    const seal = this.deps.autoSeal;
    return seal instanceof SealSet ? { backends: seal.backends(), fullyWrapped: seal.fullyWrapped } : undefined;
  }

  async isInitialized(): Promise<boolean> {
    return (await this.loadConfig()) !== undefined;
  }

  /** Seal state and unseal progress: while sealed, a worker of several reads the progress from the worker that collects the shares. */
  status(): Promise<SealStatus> {
    // The collector may be unsealed already while this worker is still following it.
    return this.onCollector({ status: true })?.then((status) => ({ ...status, sealed: true })) ?? this.statusHere();
  }

  /** A step of an unseal by shares, run here: on the worker that collects them (core/cluster/worker-link.ts), or a server of one. */
  async runUnsealStep(step: UnsealStep): Promise<SealStatus> {
    if ('key' in step) return this.submitShareHere(step.key, step.migrate);
    if ('reset' in step) this.clearUnsealing();
    return this.statusHere();
  }

  /** The step run on the collecting worker, when this is a sealed worker of several; undefined otherwise. */
  private onCollector(step: UnsealStep): Promise<SealStatus> | undefined {
    return this.barrier.sealed ? this.deps.siblings?.unsealStep?.(step) : undefined;
  }

  private async statusHere(): Promise<SealStatus> {
    const sealed = this.barrier.sealed || !this.setUp;
    // A sealed node re-reads, so that operators unsealing it see the current t and n.
    const config = await this.loadConfig(sealed && !this.unsealing);
    // An auto-sealed store shows the configured seal (the stored type is the one it was initialized
    // with), or Shamir when every stanza is disabled: the shares unseal it from now on.
    const autoSealed = config ? config.type !== 'shamir' : this.deps.autoSeal !== undefined;
    const type = autoSealed && !this.deps.shamirFrom ? (this.deps.autoSeal?.type ?? config?.type ?? 'shamir') : 'shamir';
    // Vault's t and n for an auto seal are its recovery shares'.
    const shares = autoSealed ? config && (await this.recovery.stored()) : config;
    return {
      type,
      initialized: config !== undefined,
      sealed,
      t: shares?.secret_threshold ?? 0,
      n: shares?.secret_shares ?? 0,
      progress: sealed ? (this.unsealing?.quorum.progress ?? 0) : 0,
      nonce: sealed ? (this.unsealing?.nonce ?? '') : '',
      recoverySeal: autoSealed,
      migration:
        this.pendingMigration.held || (sealed && config !== undefined && (autoSealed ? this.deps.shamirFrom !== undefined : this.deps.autoSeal !== undefined)),
      ...(sealed ? sealError(config, this.deps, this.autoUnsealer?.lastError) : {}),
    };
  }

  /** `sys/init`: creates the key hierarchy and the root token; leaves the server sealed. */
  async initialize(shares: number, threshold: number): Promise<InitResult> {
    if (this.deps.autoSeal) throw new BadRequestError(`the ${this.deps.autoSeal.type} seal wraps the root key: initialize without secret_shares and secret_threshold`);
    validateShamirConfig(shares, threshold);
    const { clusterLock } = this.deps;
    const init = () =>
      this.initializeNow(async (rootKey) => {
        const unsealKey = randomBytes(32);
        try {
          const { keys, scheme } = splitUnsealKey(unsealKey, shares, threshold);
          return { keys, config: { type: 'shamir', ...scheme }, stored: rootKeyUnderUnsealKey(unsealKey, rootKey) };
        } finally {
          zeroize(unsealKey);
        }
      });
    return clusterLock ? clusterLock('init', init) : init();
  }

  /**
   * `sys/init` with an auto seal: the root key is wrapped by the seal and stored, a recovery key is
   * split into `recoveryShares` (recovery.ts; none with 0, as OpenBao allows), and the node unseals
   * itself at once, as Vault does. The caller has validated the recovery counts.
   * @throws UnavailableError when the seal cannot wrap (nothing is stored then).
   */
  async initializeAuto(recoveryShares = 0, recoveryThreshold = 0): Promise<AutoInitResult> {
    const seal = this.deps.autoSeal;
    if (!seal) throw new BadRequestError('there is no seal stanza: initialize with secret_shares and secret_threshold');
    const { clusterLock } = this.deps;
    let recoveryKeys: Buffer[] = [];
    const init = () =>
      this.initializeNow(
        async (rootKey) => ({
          keys: [],
          config: { type: seal.type, secret_shares: 1, secret_threshold: 1, stored_shares: 1 },
          stored: encodeWrapped(await seal.wrap(rootKey, aad(KEYS.rootKeyUnderUnsealKey))),
        }),
        async () => {
          recoveryKeys = await this.recovery.create(recoveryShares, recoveryThreshold);
        },
      );
    const { rootToken } = await (clusterLock ? clusterLock('init', init) : init());
    await this.autoUnsealer!.unsealAfterInit();
    await this.deps.siblings?.unsealed();
    return { rootToken, recoveryKeys };
  }

  /**
   * Creates the keyring under a new root key and the root token, with the root key stored as
   * `protect` makes it (under an unseal key, or wrapped by the auto seal). `protect` runs first: a
   * seal that cannot be reached leaves nothing behind. `whileOpen` runs with the barrier briefly
   * unsealed (the recovery key's verifier is derived from the keyring). The seal configuration is
   * written last, so that its presence means "initialized".
   */
  private initializeNow(
    protect: (rootKey: Buffer) => Promise<{ keys: Buffer[]; config: SealConfig; stored: Buffer }>,
    whileOpen: () => Promise<void> = async () => undefined,
  ): Promise<InitResult> {
    return this.queue.run(async () => {
      if (await this.isInitialized()) throw new AlreadyInitializedError();
      // A crash during an earlier init may have left a keyring without a seal config: start over.
      if (await this.barrier.isInitialized()) await this.physical.delete('core/keyring');
      const rootKey = randomBytes(32);
      try {
        const { keys, config, stored } = await protect(rootKey);
        await this.barrier.initialize(rootKey);
        await this.physical.put(KEYS.rootKeyUnderUnsealKey, stored);
        await this.barrier.unseal(rootKey);
        let rootToken: string;
        try {
          rootToken = await this.deps.createRootToken();
          await whileOpen();
        } finally {
          this.barrier.seal();
        }
        await this.physical.put(KEYS.sealConfig, encodeConfig(config));
        this.config = config;
        return { keys, rootToken };
      } finally {
        zeroize(rootKey);
      }
    });
  }

  /** `sys/unseal` with `reset`: forgets the shares collected so far. */
  /** `sys/unseal` with `reset`: drops the shares collected so far. */
  async reset(): Promise<void> {
    await (this.onCollector({ reset: true }) ?? this.runUnsealStep({ reset: true }));
  }

  /**
   * `sys/unseal`: one share (hex or base64). A malformed or unknown share is refused with 400
   * and progress unchanged; a repeated share is ignored. At the threshold the shares are combined
   * (and forgotten, whatever the outcome) and the barrier unsealed.
   */
  submitShare(encoded: string, migrate = false): Promise<SealStatus> {
    return this.onCollector({ key: encoded, migrate }) ?? this.submitShareHere(encoded, migrate);
  }

  private async submitShareHere(encoded: string, migrate: boolean): Promise<SealStatus> {
    let unsealedNow = false;
    const status = await this.queue.run(async () => {
      const config = await this.loadConfig(!this.unsealing);
      if (!config) throw new BadRequestError('Vault is not initialized');
      if (!this.barrier.sealed) return this.statusHere();
      const plan = await planUnseal(config, { to: this.deps.autoSeal, from: this.deps.shamirFrom }, migrate, this.recovery);
      const share = acceptShare(plan.scheme, encoded);
      this.unsealing ??= { nonce: randomUUID(), quorum: new ShareQuorum(plan.scheme.secret_threshold) };
      if (this.unsealing.quorum.holds(share)) return this.statusHere();
      const unsealKey = this.unsealing.quorum.add(share);
      if (!unsealKey) return this.statusHere();
      this.unsealing = undefined;
      try {
        await (plan.kind === 'unseal' ? this.unsealWith(unsealKey) : this.migrateWith(plan, unsealKey));
      } finally {
        zeroize(unsealKey);
      }
      unsealedNow = true;
      return this.statusHere();
    });
    if (unsealedNow) await this.deps.siblings?.unsealed();
    return status;
  }

  /** Unseals with the whole unseal key (dev mode keeps it beside its data). */
  async unsealWithKey(unsealKey: Buffer): Promise<void> {
    await this.queue.run(() => this.unsealWith(unsealKey));
    await this.deps.siblings?.unsealed();
  }

  /**
   * Another worker of this server unsealed: this one follows with the root key it sent (nothing
   * is told back). Unsealed already, nothing changes.
   */
  async followUnseal(rootKey: Uint8Array): Promise<void> {
    await this.queue.run(async () => {
      // The other worker's unseal may have migrated the store to another seal.
      this.config = undefined;
      if (!this.barrier.sealed) return;
      await this.barrier.unseal(rootKey);
      await this.setUpOrSeal();
    });
  }

  private async unsealWith(unsealKey: Buffer): Promise<void> {
    const rootKey = await this.openRootKey(unsealKey);
    try {
      await this.barrier.unseal(rootKey);
    } finally {
      zeroize(rootKey);
    }
    await this.setUpOrSeal();
  }

  /**
   * Unseals with the combined key and moves the store where `migration` says (migration.ts); an
   * HA node moves it only once it is the active node (`migratePending`).
   */
  private async migrateWith(migration: Migration, key: Buffer): Promise<void> {
    const store = this.migratingStore();
    if (this.deps.migrateWhenActive) {
      await this.pendingMigration.open(migration, key, store, this.deps.log ?? QUIET);
    } else {
      this.config = await migrate(migration, key, store, this.deps.log ?? QUIET);
    }
    try {
      await this.setUpOrSeal();
    } catch (err) {
      this.pendingMigration.forget();
      throw err;
    }
  }

  /**
   * The node became the active one (core/ha/cluster-node.ts): the migration it was unsealed for
   * moves the store now, unless another node did already. Kept for the next election when it fails.
   * Outside the queue: a seal waits in it for the election round this runs in.
   * @throws UnavailableError when the seal cannot be reached; BadRequestError when the shares are no longer the current ones.
   */
  async migratePending(): Promise<void> {
    if (!this.pendingMigration.held || this.barrier.sealed) return;
    this.config = await this.pendingMigration.commit(await this.loadConfig(true), this.migratingStore(), this.deps.log ?? QUIET);
  }

  private migratingStore() {
    return { physical: this.physical, barrier: this.barrier, recovery: this.recovery };
  }

  /** The post-unseal setup, with the barrier unsealed; a failure seals it again. */
  private async setUpOrSeal(): Promise<void> {
    try {
      await this.afterUnseal();
    } catch (err) {
      this.barrier.seal();
      throw err;
    }
  }

  private async afterUnseal(): Promise<void> {
    await this.deps.afterUnseal();
    this.setUp = true;
    this.health?.start();
  }

  private openRootKey(unsealKey: Buffer): Promise<Buffer> {
    return openRootKeyRecord(this.physical, unsealKey);
  }

  /**
   * The rekey's commit: one batch, so a crash leaves either the old shares or the new ones working,
   * never a wrapping that matches neither configuration.
   */
  private rewrapRootKey(rootKey: Buffer, unsealKey: Buffer, scheme: ShareScheme): Promise<void> {
    return this.queue.run(async () => {
      if (this.barrier.sealed) throw new SealedError();
      const config: ShamirSealConfig = { type: 'shamir', ...scheme };
      await this.physical.batch(shamirRecordOps(rootKey, unsealKey, config));
      this.config = config;
    });
  }

  /** `GET sys/rekey/backup`: undefined when there is none. */
  readKeyBackup(): Promise<KeyBackup | undefined> {
    return readKeyBackup(this.physical);
  }

  /** `DELETE sys/rekey/backup`. */
  deleteKeyBackup(): Promise<void> {
    return this.physical.delete(KEYS.keyBackup);
  }

  /**
   * The whole store was replaced (a snapshot restored): the seal configuration is read again, and
   * a rekey or root generation started against the old one is dropped.
   */
  storeReplaced(): void {
    this.config = undefined;
    this.rekey.forget();
    this.recoveryRekey.forget();
    this.rootGeneration.forget();
  }

  /**
   * Seals; with an auto seal the node stays sealed until it starts again, as in Vault. The other
   * workers seal too, unless `localOnly` (this process stopping, or following another worker).
   */
  async seal(options: { readonly localOnly?: boolean } = {}): Promise<void> {
    this.autoUnsealer?.stop();
    this.health?.stop();
    let sealedNow = false;
    await this.queue.run(async () => {
      if (this.barrier.sealed) return;
      sealedNow = true;
      this.setUp = false;
      try {
        await this.deps.beforeSeal();
      } finally {
        this.barrier.seal();
        this.clearUnsealing();
        this.pendingMigration.forget();
        this.rekey.forget();
        this.recoveryRekey.forget();
        this.rootGeneration.forget();
      }
    });
    if (sealedNow && !options.localOnly) await this.deps.siblings?.sealed();
  }

  private clearUnsealing(): void {
    this.unsealing?.quorum.clear();
    this.unsealing = undefined;
  }
}

const QUIET: UnsealLog = { info: () => undefined, warn: () => undefined };
