/**
 * Init, unseal and seal (Shamir). The key hierarchy (docs/architecture.md): a random 32-byte unseal key,
 * split into shares and never stored; the root key, stored encrypted under the unseal key; the
 * barrier's keyring, encrypted under the root key. Rekey (rekey.ts) and root token generation
 * (root-generation.ts) work on the same keys through `SealKeys` (seal-keys.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AlreadyInitializedError, BadRequestError, IntegrityError, SealedError } from '../errors.js';
import type { Clock } from '../clock.js';
import type { Barrier } from '../../storage/barrier.js';
import type { Storage } from '../../storage/storage.js';
import { gcmOpen, gcmSeal, zeroize } from '../../storage/aead.js';
import { acceptShare, ShareQuorum, splitUnsealKey, type ShareScheme } from './shares.js';
import { Rekey } from './rekey.js';
import type { KeyBackup, SealConfig, SealKeys } from './seal-keys.js';
import { RootGeneration } from './root-generation.js';
import { SerialQueue } from './serial.js';

/** Physical (outside the barrier) storage keys. */
const KEYS = {
  // Plaintext seal configuration: readable while sealed (seal-status needs t and n). Its presence
  // is what "initialized" means, so it is written last during init.
  sealConfig: 'core/seal-config',
  // The root key, AES-256-GCM-encrypted under the unseal key (AAD = this path).
  rootKeyUnderUnsealKey: 'core/hsm/barrier-unseal-keys',
  // The PGP-encrypted shares of a rekey with `backup` (Vault's path), until an operator deletes
  // them. Outside the barrier as in Vault: they are encrypted to their holders already.
  keyBackup: 'core/unseal-keys-backup',
} as const;

export interface SealStatus {
  type: 'shamir';
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  nonce: string;
}

export interface InitResult {
  /** The shares (or, with one share, the unseal key itself). */
  readonly keys: Buffer[];
  readonly rootToken: string;
}

/** What the seal manager calls back into (the host) and runs with. */
export interface SealDeps {
  /** After the barrier unseals: load mounts, policies, tokens. Called with the barrier unsealed. */
  afterUnseal(): Promise<void>;
  /** Before the barrier seals: tear backends down. */
  beforeSeal(): Promise<void>;
  /** Mint a root token: during init (with the barrier briefly unsealed) and by root generation. */
  createRootToken(): Promise<string>;
  /** Revoke a root token root generation minted but could not hand out. */
  revokeRootToken(token: string): Promise<void>;
  /** Root generation attempts expire by it. */
  readonly clock: Clock;
  /** A lock shared by every node on the store (HA); init runs under it. */
  readonly clusterLock?: <T>(name: string, work: () => Promise<T>) => Promise<T>;
}

/** An unseal in progress: the shares so far and the nonce seal-status shows. */
interface UnsealAttempt {
  readonly nonce: string;
  readonly quorum: ShareQuorum;
}

export class SealManager {
  private unsealing: UnsealAttempt | undefined;
  private config: SealConfig | undefined;
  private readonly queue = new SerialQueue();
  readonly rekey: Rekey;
  readonly rootGeneration: RootGeneration;

  constructor(
    private readonly physical: Storage,
    private readonly barrier: Barrier,
    private readonly deps: SealDeps,
  ) {
    const keys: SealKeys = {
      config: () => this.unsealedConfig(),
      openRootKey: (unsealKey) => this.openRootKey(unsealKey),
      rewrapRootKey: (rootKey, unsealKey, scheme) => this.rewrapRootKey(rootKey, unsealKey, scheme),
      writeKeyBackup: (backup) => this.physical.put(KEYS.keyBackup, Buffer.from(JSON.stringify(backup), 'utf8')),
    };
    this.rekey = new Rekey(keys);
    this.rootGeneration = new RootGeneration(keys, { create: () => deps.createRootToken(), revoke: (token) => deps.revokeRootToken(token) }, deps.clock);
  }

  /**
   * The stored configuration, cached. `fresh` reads it again: another node of an HA cluster may
   * have rekeyed since, and a share must be checked against the current scheme.
   */
  private async loadConfig(fresh = false): Promise<SealConfig | undefined> {
    if (this.config && !fresh) return this.config;
    const raw = await this.physical.get(KEYS.sealConfig);
    if (!raw) return undefined;
    this.config = JSON.parse(Buffer.from(raw).toString('utf8')) as SealConfig;
    return this.config;
  }

  private async unsealedConfig(): Promise<SealConfig> {
    if (this.barrier.sealed) throw new SealedError();
    const config = await this.loadConfig();
    if (!config) throw new BadRequestError('Vault is not initialized');
    return config;
  }

  async isInitialized(): Promise<boolean> {
    return (await this.loadConfig()) !== undefined;
  }

  async status(): Promise<SealStatus> {
    const sealed = this.barrier.sealed;
    // A sealed node re-reads, so that operators unsealing it see the current t and n.
    const config = await this.loadConfig(sealed && !this.unsealing);
    return {
      type: 'shamir',
      initialized: config !== undefined,
      sealed,
      t: config?.secret_threshold ?? 0,
      n: config?.secret_shares ?? 0,
      progress: sealed ? (this.unsealing?.quorum.progress ?? 0) : 0,
      nonce: sealed ? (this.unsealing?.nonce ?? '') : '',
    };
  }

  /** `sys/init`: creates the key hierarchy and the root token; leaves the server sealed. */
  async initialize(shares: number, threshold: number): Promise<InitResult> {
    validateShamirConfig(shares, threshold);
    const { clusterLock } = this.deps;
    if (clusterLock) return clusterLock('init', () => this.initializeNow(shares, threshold));
    return this.initializeNow(shares, threshold);
  }

  private initializeNow(shares: number, threshold: number): Promise<InitResult> {
    return this.queue.run(async () => {
      if (await this.isInitialized()) throw new AlreadyInitializedError();
      // A crash during an earlier init may have left a keyring without a seal config: start over.
      if (await this.barrier.isInitialized()) await this.physical.delete('core/keyring');

      const unsealKey = randomBytes(32);
      const rootKey = randomBytes(32);
      try {
        await this.barrier.initialize(rootKey);
        await this.physical.put(KEYS.rootKeyUnderUnsealKey, gcmSeal(unsealKey, rootKey, aad(KEYS.rootKeyUnderUnsealKey)));
        await this.barrier.unseal(rootKey);
        let rootToken: string;
        try {
          rootToken = await this.deps.createRootToken();
        } finally {
          this.barrier.seal();
        }
        const { keys, scheme } = splitUnsealKey(unsealKey, shares, threshold);
        const config: SealConfig = { type: 'shamir', ...scheme };
        await this.physical.put(KEYS.sealConfig, encodeConfig(config));
        this.config = config;
        return { keys, rootToken };
      } finally {
        zeroize(unsealKey);
        zeroize(rootKey);
      }
    });
  }

  /** `sys/unseal` with `reset`: forgets the shares collected so far. */
  reset(): void {
    this.clearUnsealing();
  }

  /**
   * `sys/unseal`: one share (hex or base64). A malformed or unknown share is refused with 400
   * and progress unchanged; a repeated share is ignored. At the threshold the shares are combined
   * (and forgotten, whatever the outcome) and the barrier unsealed.
   */
  async submitShare(encoded: string): Promise<SealStatus> {
    return this.queue.run(async () => {
      const config = await this.loadConfig(!this.unsealing);
      if (!config) throw new BadRequestError('Vault is not initialized');
      if (!this.barrier.sealed) return this.status();
      const share = acceptShare(config, encoded);
      this.unsealing ??= { nonce: randomUUID(), quorum: new ShareQuorum(config.secret_threshold) };
      if (this.unsealing.quorum.holds(share)) return this.status();
      const unsealKey = this.unsealing.quorum.add(share);
      if (!unsealKey) return this.status();
      this.unsealing = undefined;
      try {
        await this.unsealWith(unsealKey);
      } finally {
        zeroize(unsealKey);
      }
      return this.status();
    });
  }

  /** Unseals with the whole unseal key (dev mode keeps it beside its data). */
  async unsealWithKey(unsealKey: Buffer): Promise<void> {
    await this.queue.run(() => this.unsealWith(unsealKey));
  }

  private async unsealWith(unsealKey: Buffer): Promise<void> {
    const rootKey = await this.openRootKey(unsealKey);
    try {
      await this.barrier.unseal(rootKey);
    } finally {
      zeroize(rootKey);
    }
    try {
      await this.deps.afterUnseal();
    } catch (err) {
      this.barrier.seal();
      throw err;
    }
  }

  private async openRootKey(unsealKey: Buffer): Promise<Buffer> {
    const sealed = await this.physical.get(KEYS.rootKeyUnderUnsealKey);
    if (!sealed) throw new BadRequestError('Vault is not initialized');
    try {
      return gcmOpen(unsealKey, sealed, aad(KEYS.rootKeyUnderUnsealKey));
    } catch (err) {
      if (err instanceof IntegrityError) throw new BadRequestError('unseal failed, invalid key');
      throw err;
    }
  }

  /**
   * The rekey's commit: one batch, so a crash leaves either the old shares or the new ones working,
   * never a wrapping that matches neither configuration.
   */
  private rewrapRootKey(rootKey: Buffer, unsealKey: Buffer, scheme: ShareScheme): Promise<void> {
    return this.queue.run(async () => {
      if (this.barrier.sealed) throw new SealedError();
      const config: SealConfig = { type: 'shamir', ...scheme };
      await this.physical.batch([
        { type: 'put', key: KEYS.rootKeyUnderUnsealKey, value: gcmSeal(unsealKey, rootKey, aad(KEYS.rootKeyUnderUnsealKey)) },
        { type: 'put', key: KEYS.sealConfig, value: encodeConfig(config) },
      ]);
      this.config = config;
    });
  }

  /** `GET sys/rekey/backup`: undefined when there is none. */
  async readKeyBackup(): Promise<KeyBackup | undefined> {
    const raw = await this.physical.get(KEYS.keyBackup);
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as KeyBackup) : undefined;
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
    this.rootGeneration.forget();
  }

  async seal(): Promise<void> {
    await this.queue.run(async () => {
      if (this.barrier.sealed) return;
      try {
        await this.deps.beforeSeal();
      } finally {
        this.barrier.seal();
        this.clearUnsealing();
        this.rekey.forget();
        this.rootGeneration.forget();
      }
    });
  }

  private clearUnsealing(): void {
    this.unsealing?.quorum.clear();
    this.unsealing = undefined;
  }
}

/** Vault's rules for shares and threshold. */
export function validateShamirConfig(shares: number, threshold: number): void {
  if (!Number.isInteger(shares) || shares < 1) throw new BadRequestError('secret_shares must be at least 1');
  if (!Number.isInteger(threshold) || threshold < 1) throw new BadRequestError('secret_threshold must be at least 1');
  if (shares > 255) throw new BadRequestError('secret_shares must be at most 255');
  if (threshold > shares) throw new BadRequestError('secret_threshold cannot be larger than secret_shares');
  if (shares > 1 && threshold < 2) throw new BadRequestError('secret_threshold must be greater than one for multiple shares');
}

function encodeConfig(config: SealConfig): Buffer {
  return Buffer.from(JSON.stringify(config), 'utf8');
}

function aad(path: string): Buffer {
  return Buffer.from(path, 'utf8');
}
