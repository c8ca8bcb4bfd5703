/**
 * The periodic health check of the configured seals while the node runs, as OpenBao has it
 * (https://openbao.org/docs/configuration/seal/#health-checks): each seal encrypts and decrypts a
 * small random payload, so a seal that broke is reported (`sys/seal-backend-status`, the log)
 * before a restart needs it, and one that answers again after failing has the root key wrapped
 * under it then (seal-manager.ts), not at the next start.
 */
import type { Barrier } from '../../storage/barrier.js';
import type { Storage } from '../../storage/storage.js';
import { zeroize } from '../../storage/aead.js';
import { decodeWrapped, rewrapIfRotated, type UnsealLog } from './auto-unseal.js';
import type { SealConfig } from './seal-keys.js';
import { KEYS } from './seal-records.js';
import type { SealSet } from './seal-set.js';
import type { SerialQueue } from './serial.js';

/** Between checks: OpenBao's defaults, `health_check_interval` and `health_check_interval_unhealthy`. */
export interface HealthIntervals {
  /** While every seal answers and wraps the root key. */
  readonly healthyMs: number;
  /** After a check that found a seal down, or the root key not wrapped by every seal. */
  readonly unhealthyMs: number;
}

export const DEFAULT_HEALTH_INTERVALS: HealthIntervals = { healthyMs: 10 * 60_000, unhealthyMs: 60_000 };

/**
 * Runs `check` (which answers whether everything was healthy) after each interval, the next one
 * chosen by its answer, each delay jittered by up to a tenth either way so that the nodes of a
 * cluster restarted together do not ask the seal service at the same moment. One check runs at a
 * time; `stop` cancels the next one (the node seals or shuts down) and `start` begins anew.
 */
export class SealHealthLoop {
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;

  constructor(
    private readonly check: () => Promise<boolean>,
    private readonly log: UnsealLog,
    private readonly intervals: HealthIntervals = DEFAULT_HEALTH_INTERVALS,
  ) {}

  start(healthy = true): void {
    this.stop();
    this.schedule(this.generation, healthy);
  }

  stop(): void {
    this.generation++;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(generation: number, healthy: boolean): void {
    const base = healthy ? this.intervals.healthyMs : this.intervals.unhealthyMs;
    this.timer = setTimeout(() => void this.run(generation), base * (0.9 + Math.random() * 0.2));
    // A node that is shutting down must not be kept alive by its next check.
    this.timer.unref();
  }

  private async run(generation: number): Promise<void> {
    let healthy = false;
    try {
      healthy = await this.check();
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'seal health check failed');
    }
    if (generation === this.generation) this.schedule(generation, healthy);
  }
}

/** What the health check is wired with by the seal manager (seal-manager.ts). */
export interface SealHealthDeps {
  readonly seals: SealSet;
  readonly physical: Storage;
  readonly barrier: Barrier;
  /** The seal manager's queue: a re-wrap never runs beside a migration, a rekey or a seal. */
  readonly queue: SerialQueue;
  /** The stored seal configuration, read afresh. */
  storedConfig(): Promise<SealConfig | undefined>;
  /** Only the active node of a cluster checks: it alone writes. */
  isActive(): boolean;
  readonly log: UnsealLog;
}

export class SealHealth {
  private readonly loop: SealHealthLoop;

  constructor(
    private readonly deps: SealHealthDeps,
    intervals?: HealthIntervals,
  ) {
    this.loop = new SealHealthLoop(() => this.check(), deps.log, intervals);
  }

  /** The node unsealed: checks begin, soon when a seal was down at this start. */
  start(): void {
    this.loop.start(this.allWell());
  }

  /** The node seals or shuts down. */
  stop(): void {
    this.loop.stop();
  }

  private allWell(): boolean {
    const { seals } = this.deps;
    return seals.fullyWrapped && seals.backends().every((b) => b.healthy || b.disabled);
  }

  /**
   * One check. A seal that answers again, or a root key not wrapped by every enabled seal, has it
   * wrapped again at once. Answers whether every seal answered and wraps it.
   */
  private async check(): Promise<boolean> {
    const { seals, barrier, queue } = this.deps;
    if (barrier.sealed || !this.deps.isActive()) return true;
    const { recovered } = await seals.checkHealth();
    if (recovered || !seals.fullyWrapped) await queue.run(() => this.rewrap());
    return this.allWell();
  }

  /**
   * Wraps the root key under every seal that answers, keeping it only when a seal's wrapping
   * changed (auto-unseal.ts). Nothing when the store has moved to Shamir shares meanwhile: a node
   * running with the old configuration must not wrap it back under a seal.
   */
  private async rewrap(): Promise<void> {
    const { seals, barrier, physical, log } = this.deps;
    if (barrier.sealed) return;
    const config = await this.deps.storedConfig();
    const raw = await physical.get(KEYS.rootKeyUnderUnsealKey);
    if (!config || config.type === 'shamir' || !raw) return;
    const rootKey = barrier.copyRootKey();
    try {
      if (await rewrapIfRotated(seals, physical, KEYS.rootKeyUnderUnsealKey, decodeWrapped(raw), rootKey)) {
        log.info({}, 'seal health check: the root key is wrapped again, under every seal that answers');
      }
    } finally {
      zeroize(rootKey);
    }
  }
}
