/**
 * Tidy of the identity access list and the role-tag deny list: entries whose expiration time
 * plus a safety buffer has passed are removed. Started by `tidy/*` requests (in the background)
 * and by the backend's periodic hook, which the host's timer calls; at most one tidy per list
 * runs at a time.
 */
import { errorMessage } from '../../sdk/index.js';
import type { CloudAuthContext } from './context.js';
import { deleteAccessListEntry, listAccessList, readAccessListEntry } from './access-list.js';
import { deleteDenyListEntry, listDenyList, migrateDenyList, readDenyListEntry } from './deny-list.js';
import { DEFAULT_SAFETY_BUFFER, readTidyConfig, type TidyList } from './tidy-config.js';

/** The host's timer runs far more often; a periodic tidy of each list runs at most this often. */
export const PERIODIC_TIDY_INTERVAL_MS = 3600 * 1000;

export class Tidier {
  private readonly running = new Map<TidyList, Promise<void>>();
  /** The first periodic call after the mount starts tidies. */
  private nextPeriodicTidy = 0;

  constructor(private readonly ctx: CloudAuthContext) {}

  /** Starts a tidy of one list in the background; false when one is already running. */
  start(list: TidyList, safetyBuffer: number): boolean {
    if (this.running.has(list)) return false;
    const run = this.tidy(list, safetyBuffer)
      .then((removed) => this.ctx.logger.info({ list, removed, safetyBuffer }, 'tidy finished'))
      .catch((err: unknown) => this.ctx.logger.error({ list, err: errorMessage(err) }, 'tidy failed'))
      .finally(() => this.running.delete(list));
    this.running.set(list, run);
    return true;
  }

  /**
   * The periodic hook: once an hour, each list whose tidy config does not disable it, with its
   * safety buffer. Each run first makes sure deny-list entries of earlier versions are under their
   * canonical keys (one read once that is done); the host runs periodic hooks on the active node
   * only, where writes are allowed.
   */
  async periodic(): Promise<void> {
    const now = this.ctx.clock.now().getTime();
    if (now < this.nextPeriodicTidy) return;
    this.nextPeriodicTidy = now + PERIODIC_TIDY_INTERVAL_MS;
    const moved = await migrateDenyList(this.ctx.storage);
    if (moved > 0) this.ctx.logger.info({ moved }, 'deny-list entries of earlier versions moved under their canonical keys');
    for (const list of ['accesslist', 'denylist'] as const) {
      const config = await readTidyConfig(this.ctx.storage, list);
      if (config?.disable_periodic_tidy) continue;
      this.start(list, config?.safety_buffer ?? DEFAULT_SAFETY_BUFFER);
      await this.running.get(list);
    }
  }

  /** Waits for running tidies (before the mount's storage goes away). */
  async drain(): Promise<void> {
    await Promise.all(this.running.values());
  }

  /** Removes the list's entries past expiration + safety buffer; returns how many. */
  private async tidy(list: TidyList, safetyBuffer: number): Promise<number> {
    const expired = (expiration: string) => this.ctx.clock.now().getTime() > Date.parse(expiration) + safetyBuffer * 1000;
    let removed = 0;
    if (list === 'accesslist') {
      for (const instanceId of await listAccessList(this.ctx.storage)) {
        // Under the instance's lock: a login renewing the entry right now must not lose it.
        await this.ctx.accessListLocks.run(instanceId, async () => {
          const entry = await readAccessListEntry(this.ctx.storage, instanceId);
          if (entry && expired(entry.expiration_time)) {
            await deleteAccessListEntry(this.ctx.storage, instanceId);
            removed++;
          }
        });
      }
    } else {
      for (const tag of await listDenyList(this.ctx.storage)) {
        const entry = await readDenyListEntry(this.ctx.storage, tag);
        if (entry && expired(entry.expiration_time)) {
          await deleteDenyListEntry(this.ctx.storage, tag);
          removed++;
        }
      }
    }
    return removed;
  }
}
