/**
 * The host's periodic work: every backend's periodic hook, the token and secret lease expiry sweeps and the barrier's
 * automatic rotation check, on a timer. In an HA cluster only the active node does it: periodic
 * work happens once per cluster, and only one node may rotate the keyring.
 */
import type { Logger } from 'pino';
import type { Barrier } from '../storage/barrier.js';
import type { TokenStore } from './auth/token-store.js';
import type { SecretLeases } from './leases/secret-leases.js';
import type { HaManager } from './ha/ha-manager.js';
import type { Unsealed } from './unsealed.js';
import { errorMessage } from './errors.js';

export interface PeriodicDeps {
  readonly barrier: Barrier;
  readonly tokens: TokenStore;
  readonly leases: Pick<SecretLeases, 'sweepExpired'>;
  /** Nothing runs while it is not loaded. */
  readonly unsealed: Unsealed;
  readonly ha: HaManager | undefined;
  readonly logger: Logger;
}

export class PeriodicWork {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  /** `intervalMs` 0 runs nothing on its own (tests call `run`). */
  constructor(
    private readonly deps: PeriodicDeps,
    intervalMs: number,
  ) {
    if (intervalMs > 0) {
      this.timer = setInterval(() => void this.run(), intervalMs);
      this.timer.unref();
    }
  }

  /** Runs the work once, unless a run is under way, the server is sealed, or this node is a standby. */
  async run(): Promise<void> {
    const { barrier, tokens, leases, ha, logger, unsealed } = this.deps;
    if (this.running || !unsealed.loaded) return;
    if (ha && ha.state !== 'active') return;
    this.running = true;
    try {
      await unsealed.mounts.runPeriodic();
      const swept = await tokens.sweepExpired();
      if (swept > 0) logger.info({ swept }, 'expired tokens removed');
      const revoked = await leases.sweepExpired();
      if (revoked > 0) logger.info({ revoked }, 'expired leases revoked');
    } catch (err) {
      logger.warn({ err: messageOf(err) }, 'periodic work failed');
    }
    try {
      // Rotates the barrier key when sys/rotate/config says it is due; otherwise stores the
      // encryption count, so it outlives this process.
      const reason = barrier.rotationDue();
      if (!reason) {
        await barrier.flushEncryptions();
      } else {
        const status = await barrier.rotate();
        logger.info({ reason, term: status.term }, 'barrier key rotated automatically');
      }
    } catch (err) {
      logger.warn({ err: messageOf(err) }, 'automatic barrier key rotation failed');
    } finally {
      this.running = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function messageOf(err: unknown): string {
  return errorMessage(err);
}
