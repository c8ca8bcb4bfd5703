/** What the seal manager (seal-manager.ts) answers, and what it calls back into. */
import type { Clock } from '../clock.js';
import type { AutoSeal, AutoSealType } from './auto-seal.js';
import type { Backoff, UnsealLog } from './auto-unseal.js';
import type { HealthIntervals } from './seal-health.js';

export interface SealStatus {
  type: 'shamir' | AutoSealType;
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  nonce: string;
  /** An auto seal: the shares operators hold (t and n) are recovery shares, not unseal shares. */
  recoverySeal: boolean;
  /** Why the last auto-unseal attempt failed, while the node stays sealed. */
  sealError?: string;
  /**
   * A Shamir store with a seal stanza, or an auto-sealed one whose stanzas are all disabled:
   * unsealing with the shares (the recovery shares) and `migrate` moves it to the seal (to Shamir).
   */
  migration: boolean;
}

export interface InitResult {
  /** The shares (or, with one share, the unseal key itself). */
  readonly keys: Buffer[];
  readonly rootToken: string;
}

/** `sys/init` with an auto seal: the recovery shares (none with recovery_shares = 0). */
export interface AutoInitResult {
  readonly recoveryKeys: Buffer[];
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
  /** The configuration's `seal` stanza, made: the root key is wrapped by it instead of shares. */
  readonly autoSeal?: AutoSeal;
  /**
   * The seals when every stanza is disabled: they only open the root key, while the store moves
   * back to Shamir shares (migration.ts). Never set with `autoSeal`.
   */
  readonly shamirFrom?: AutoSeal;
  /** Where auto-unseal attempts are logged. */
  readonly log?: UnsealLog;
  /** Between auto-unseal attempts (tests shorten it). */
  readonly backoff?: Backoff;
  /** Between the seals' health checks (tests shorten them). */
  readonly healthIntervals?: HealthIntervals;
  /** Whether this node is the active one of its cluster (or has none): only it checks the seals and re-wraps. */
  isActive?(): boolean;
  /**
   * An HA node on a shared store: unsealed with `migrate`, it moves the store only once it is the
   * active node (`SealManager.migratePending`), as Vault's standbys do. Not the workers of one
   * server, which all follow the worker that unsealed.
   */
  readonly migrateWhenActive?: boolean;
  /**
   * The other workers of this server (core/cluster/worker-link.ts): told once this node unsealed
   * or sealed, outside the queue, and they follow before the operation answers.
   */
  readonly siblings?: {
    unsealed(): Promise<void>;
    sealed(): Promise<void>;
    /**
     * Runs a step of a Shamir unseal on the one worker that collects every worker's shares, so
     * that shares sent over different connections (different workers) add up.
     */
    unsealStep?(step: UnsealStep): Promise<SealStatus>;
  };
}

/** One step of an unseal by shares: submit one, drop those collected, or read the progress. */
export type UnsealStep = { readonly key: string; readonly migrate: boolean } | { readonly reset: true } | { readonly status: true };
