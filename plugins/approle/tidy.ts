/**
 * Tidy of secret IDs: removes the expired ones, those left without an accessor index, and
 * accessor indexes left without their secret ID. Started by `tidy/secret-id` (in the background)
 * and by the backend's periodic hook, which the host's timer calls; one runs at a time.
 */
import type { AppRoleContext } from './context.js';
import { STORAGE_KEYS, hmacHex, readJson } from './storage.js';
import { NO_EXPIRATION, type SecretIdEntry } from './secret-id.js';

/** The host's timer may run more often; a periodic tidy runs at most this often (Vault's: every minute). */
export const PERIODIC_TIDY_INTERVAL_MS = 60 * 1000;

const SCOPES = [
  { secrets: STORAGE_KEYS.secretIdPrefix, accessors: STORAGE_KEYS.accessorPrefix },
  { secrets: STORAGE_KEYS.localSecretIdPrefix, accessors: STORAGE_KEYS.localAccessorPrefix },
] as const;

export class Tidier {
  private running: Promise<void> | undefined;
  private nextPeriodicTidy = 0;

  constructor(private readonly ctx: AppRoleContext) {}

  /** Starts a tidy in the background; false when one is already running. */
  start(): boolean {
    if (this.running) return false;
    this.running = this.tidy()
      .then((removed) => this.ctx.logger.info({ removed }, 'tidy of secret IDs finished'))
      .catch((err: unknown) => this.ctx.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'tidy of secret IDs failed'))
      .finally(() => {
        this.running = undefined;
      });
    return true;
  }

  /** The periodic hook: a tidy at most once a minute, waited for. */
  async periodic(): Promise<void> {
    const now = this.ctx.clock.now().getTime();
    if (now < this.nextPeriodicTidy) return;
    this.nextPeriodicTidy = now + PERIODIC_TIDY_INTERVAL_MS;
    this.start();
    await this.running;
  }

  /** Waits for a running tidy (before the mount's storage goes away). */
  async drain(): Promise<void> {
    await this.running;
  }

  /** Removes what needs removing; returns how many entries went. */
  private async tidy(): Promise<number> {
    const { storage, clock, secretIdLocks } = this.ctx;
    let removed = 0;
    for (const scope of SCOPES) {
      const live = new Set<string>();
      for (const roleFolder of await storage.list(scope.secrets)) {
        if (!roleFolder.endsWith('/')) continue;
        for (const hmac of await storage.list(scope.secrets + roleFolder)) {
          if (hmac.endsWith('/')) continue;
          await secretIdLocks.run(hmac, async () => {
            const key = scope.secrets + roleFolder + hmac;
            const entry = await readJson<SecretIdEntry>(storage, key);
            if (!entry) return;
            const accessorKey = await this.accessorKey(scope.accessors, entry.secret_id_accessor);
            const indexed = (await storage.get(accessorKey)) !== undefined;
            const expired = entry.expiration_time !== NO_EXPIRATION && clock.now().getTime() >= Date.parse(entry.expiration_time);
            if (indexed && !expired) {
              live.add(hmac);
              return;
            }
            await storage.delete(accessorKey);
            await storage.delete(key);
            removed++;
          });
        }
      }
      for (const name of await storage.list(scope.accessors)) {
        if (name.endsWith('/')) continue;
        const index = await readJson<{ secret_id_hmac: string }>(storage, scope.accessors + name);
        if (!index || live.has(index.secret_id_hmac)) continue;
        // Under the secret ID's lock: one being issued right now writes its index before its entry.
        await secretIdLocks.run(index.secret_id_hmac, async () => {
          if (await this.secretIdExists(scope.secrets, index.secret_id_hmac)) return;
          await storage.delete(scope.accessors + name);
          removed++;
        });
      }
    }
    return removed;
  }

  private async accessorKey(prefix: string, accessor: string): Promise<string> {
    return prefix + hmacHex(await this.ctx.indexSalt(), accessor, 'secret_id_accessor');
  }

  private async secretIdExists(prefix: string, hmac: string): Promise<boolean> {
    for (const roleFolder of await this.ctx.storage.list(prefix)) {
      if (roleFolder.endsWith('/') && (await this.ctx.storage.get(prefix + roleFolder + hmac)) !== undefined) return true;
    }
    return false;
  }
}
