/**
 * The node unsealing itself with an auto seal: the wrapped root key as stored, and the attempts,
 * retried with backoff while the seal cannot be reached (a transit server or KMS that starts after
 * this node, a network that is down), so that the node unseals as soon as the seal answers.
 */
import { BadRequestError, IntegrityError } from '../errors.js';
import type { Barrier } from '../../storage/barrier.js';
import type { Storage } from '../../storage/storage.js';
import { zeroize } from '../../storage/aead.js';
import type { AutoSeal, WrappedKey } from './auto-seal.js';
import type { SealConfig } from './seal-keys.js';
import type { SerialQueue } from './serial.js';

/** Backoff between attempts: doubling from the first delay up to the longest. */
export interface Backoff {
  readonly firstMs: number;
  readonly longestMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { firstMs: 1_000, longestMs: 60_000 };

export interface UnsealLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * Runs `attempt` until it succeeds: at once, then after each delay. `stop` cancels the next one
 * (the node sealed or shuts down); `start` again begins anew. One attempt runs at a time.
 */
export class AutoUnsealLoop {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private delayMs: number;
  private generation = 0;

  constructor(
    private readonly attempt: () => Promise<void>,
    private readonly log: UnsealLog,
    private readonly backoff: Backoff = DEFAULT_BACKOFF,
  ) {
    this.delayMs = backoff.firstMs;
  }

  start(): void {
    this.stop();
    this.delayMs = this.backoff.firstMs;
    void this.run(this.generation);
  }

  stop(): void {
    this.generation++;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async run(generation: number): Promise<void> {
    if (this.running || generation !== this.generation) return;
    this.running = true;
    try {
      await this.attempt();
      this.log.info({}, 'auto-unseal: unsealed');
    } catch (err) {
      if (generation !== this.generation) return;
      const retryMs = this.delayMs;
      this.delayMs = Math.min(this.delayMs * 2, this.backoff.longestMs);
      this.log.warn({ err: err instanceof Error ? err.message : String(err), retry_ms: retryMs }, 'auto-unseal failed; the node stays sealed and tries again');
      this.timer = setTimeout(() => void this.run(generation), retryMs);
      // A node that is shutting down must not be kept alive by its next attempt.
      this.timer.unref();
    } finally {
      this.running = false;
    }
  }
}

/** What the auto unsealer is wired with by the seal manager (seal-manager.ts). */
export interface AutoUnsealDeps {
  readonly physical: Storage;
  readonly barrier: Barrier;
  /** The seal manager's queue: an attempt never runs beside an init, a share's unseal or a seal. */
  readonly queue: SerialQueue;
  /** Where the wrapped root key is stored (outside the barrier). */
  readonly wrappedKeyPath: string;
  /** The stored seal configuration, read afresh; undefined before init. */
  storedConfig(): Promise<SealConfig | undefined>;
  /** Loads mounts, policies and tokens, with the barrier unsealed. */
  afterUnseal(): Promise<void>;
  readonly log: UnsealLog;
}

/**
 * The node unsealing itself through its seal: one attempt, the attempts retried in the background
 * at start, and why the last one failed (`sys/seal-status`'s `seal_error`).
 */
export class AutoUnsealer {
  private readonly loop: AutoUnsealLoop;
  /** Why the last attempt failed; cleared when one succeeds. */
  private failure: string | undefined;

  constructor(
    private readonly seal: AutoSeal,
    private readonly deps: AutoUnsealDeps,
    backoff?: Backoff,
  ) {
    this.loop = new AutoUnsealLoop(() => this.unseal(), deps.log, backoff);
  }

  get lastError(): string | undefined {
    return this.failure;
  }

  /** Attempts at once, then with backoff while they fail. Does nothing before init (init unseals). */
  start(): void {
    this.loop.start();
  }

  /** Cancels the next attempt: the node seals or shuts down. */
  stop(): void {
    this.loop.stop();
  }

  /** Right after an auto-seal init, as Vault does; a failure leaves the attempts to the background. */
  async unsealAfterInit(): Promise<void> {
    try {
      await this.unseal();
    } catch {
      // Initialized all the same: the attempt is retried, and seal-status says why it failed.
      this.loop.start();
    }
  }

  /**
   * Unseals with the root key the seal wrapped; does nothing when the store is not initialized or
   * already unsealed. The failure is kept for `sys/seal-status`.
   * @throws UnavailableError when the seal cannot be reached; IntegrityError when it cannot open the root key.
   */
  async unseal(): Promise<void> {
    try {
      await this.deps.queue.run(() => this.unsealNow());
      this.failure = undefined;
    } catch (err) {
      this.failure = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }

  private async unsealNow(): Promise<void> {
    const { seal, deps } = this;
    const config = await deps.storedConfig();
    if (!config || !deps.barrier.sealed) return;
    // From one auto seal to another, the seals say whether they can open what is stored (seal-set.ts).
    if (config.type === 'shamir') {
      throw new BadRequestError(
        `a seal migration is pending: the store is sealed with Shamir unseal keys and the configuration has seal "${seal.type}"; unseal with the shares and migrate=true (keywarden operator unseal -migrate); or, when another node moved the store to Shamir shares, remove the stanza (or disable it) and restart this node`,
      );
    }
    await unsealWithSeal(seal, deps, deps.wrappedKeyPath);
    try {
      await deps.afterUnseal();
    } catch (err) {
      deps.barrier.seal();
      throw err;
    }
  }
}

/**
 * Opens the root key stored wrapped at `path` with `seal` and unseals `barrier` with it. When the
 * seal's key changed since (a new transit key version, a new static current_key), the root key is
 * wrapped again under the new key, so the old one is needed no more.
 * @throws UnavailableError when the seal cannot be reached; IntegrityError when what it opens is not this store's root key.
 */
export async function unsealWithSeal(seal: AutoSeal, store: { physical: Storage; barrier: Barrier; log: UnsealLog }, path: string): Promise<void> {
  const raw = await store.physical.get(path);
  if (!raw) throw new IntegrityError('the wrapped root key is missing from storage');
  const wrapped = decodeWrapped(raw);
  const aad = Buffer.from(path, 'utf8');
  const rootKey = await seal.unwrap(wrapped, aad);
  try {
    try {
      await store.barrier.unseal(rootKey);
    } catch (err) {
      if (err instanceof IntegrityError) throw new IntegrityError(`the ${seal.type} seal opened a root key that does not open the keyring: the store was not wrapped by this seal`);
      throw err;
    }
    try {
      if (await rewrapIfRotated(seal, store.physical, path, wrapped, rootKey)) {
        // What operators wait for before they retire the old key: from here on it is needed no more.
        store.log.info({}, 'auto-unseal: the root key is wrapped again under the seal\'s current keys');
      }
    } catch (err) {
      // The barrier is open and the old wrapping still opens the root key: unsealing goes on.
      store.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'auto-unseal: the root key could not be wrapped again to follow a rotated seal key; the stored wrapping still opens it, and the next start tries again');
    }
  } finally {
    zeroize(rootKey);
  }
}

/**
 * Wraps the root key again and keeps the new wrapping when its key id differs: only the seal
 * knows its current key, and wrapping is how it says. Returns whether it was kept.
 */
export async function rewrapIfRotated(seal: AutoSeal, physical: Storage, path: string, stored: WrappedKey, rootKey: Buffer): Promise<boolean> {
  const aad = Buffer.from(path, 'utf8');
  const fresh = await seal.wrap(rootKey, aad, stored);
  if (fresh.key_id === stored.key_id) return false;
  // Proves the new wrapping opens before the old one is replaced.
  zeroize(await seal.unwrap(fresh, aad));
  await physical.put(path, encodeWrapped(fresh));
  return true;
}

export function encodeWrapped(wrapped: WrappedKey): Buffer {
  return Buffer.from(JSON.stringify(wrapped), 'utf8');
}

/** @throws IntegrityError for anything but a stored WrappedKey. */
export function decodeWrapped(raw: Uint8Array): WrappedKey {
  let parsed: Partial<WrappedKey> | null;
  try {
    parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as Partial<WrappedKey> | null;
  } catch {
    parsed = null;
  }
  if (typeof parsed?.key_id !== 'string' || typeof parsed.ciphertext !== 'string' || typeof parsed.type !== 'string') {
    throw new IntegrityError('the stored wrapped root key is malformed');
  }
  return parsed as WrappedKey;
}
