/** What every path and hook of one AppRole mount shares. */
import { randomBytes } from 'node:crypto';
import { KeyedLock, type Clock, type Logger, type Storage, type SystemView } from '../../sdk/index.js';
import { STORAGE_KEYS } from './storage.js';

export class AppRoleContext {
  /** Per-role locks around every read-change-write of a role (and its role ID index). */
  readonly roleLocks = new KeyedLock();
  /**
   * Per-secret-ID locks (by the secret ID's HMAC) around every read-change-write of a secret ID:
   * a login spends one of its uses, and concurrent logins must each see the count the last left.
   */
  readonly secretIdLocks = new KeyedLock();
  private salt: Promise<Buffer> | undefined;
  private readonly saltLock = new KeyedLock();

  constructor(
    readonly storage: Storage,
    readonly system: SystemView,
    readonly clock: Clock,
    readonly logger: Logger,
  ) {}

  /** The mount's salt of the role ID and accessor indexes: read, or made and stored the first time. */
  indexSalt(): Promise<Buffer> {
    this.salt ??= this.saltLock
      .run('salt', async () => {
        const stored = await this.storage.get(STORAGE_KEYS.salt);
        if (stored) return Buffer.from(stored);
        const made = randomBytes(32);
        await this.storage.put(STORAGE_KEYS.salt, made);
        return made;
      })
      .catch((err: unknown) => {
        this.salt = undefined;
        throw err;
      });
    return this.salt;
  }
}
