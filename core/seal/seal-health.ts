/**
 * The periodic health check of the configured seals while the node runs, as OpenBao has it
 * (https://openbao.org/docs/configuration/seal/#health-checks): each seal encrypts and decrypts a
 * small random payload, so a seal that broke is reported (`sys/seal-backend-status`, the log)
 * before a restart needs it, and one that answers again after failing has the root key wrapped
 * under it then (seal-manager.ts), not at the next start.
 */
import type { UnsealLog } from './auto-unseal.js';

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
