/**
 * Brute-force protection of logins (https://developer.hashicorp.com/vault/docs/concepts/user-lockout):
 * failed logins are counted per user (the user a login names: a username, a role ID) and mount;
 * once a user reaches the mount's threshold it is locked out for the lockout duration, and every
 * login naming it is refused with Vault's 403 "permission denied" before its credentials are
 * checked. A successful login clears the count; `sys/locked-users/:accessor/unlock/:user` clears
 * a lock.
 *
 * Counts live in memory; a lock is also written to storage, under Vault's key
 * `core/login/lockedUsers/<mount accessor>/<user>`, so it outlasts a restart or a seal and
 * sys/locked-users can list it. The user in the key is base64url-encoded: a role ID may hold `/`.
 *
 * Logins naming the same user on the same mount run one at a time (a KeyedLock): each sees the
 * count the previous one left, so no burst of parallel guesses gets more than `threshold` of them
 * checked. Vault counts a failure only after it was checked, so every guess of a burst sent before
 * the first failure is counted passes its lock check.
 */
import type { Clock } from '../../clock.js';
import { InvalidCredentialsError, PermissionDeniedError } from '../../errors.js';
import type { MountEntry } from '../../mounts/mount-entry.js';
import { KeyedLock } from '../../../sdk/keyed-lock.js';
import type { Storage } from '../../../storage/storage.js';
import { StorageView } from '../../../storage/view.js';
import { effectiveLockout, type LockoutSettings, type UserLockoutStanzas } from './settings.js';

/** Vault's storage prefix of locked users, under the barrier. */
export const LOCKED_USERS_PREFIX = 'core/login/lockedUsers/';

/** Past this many counted users, entries that can no longer matter are swept before another is added. */
const SWEEP_AT = 4096;

interface FailedLogins {
  count: number;
  /** Unix ms of the last failure. */
  last: number;
  /** Unix ms after which the entry can no longer lock anyone nor add to a count. */
  forgettable: number;
}

/** One mount's locked users, as sys/locked-users lists them. */
export interface LockedUsersOfMount {
  readonly mount_accessor: string;
  readonly counts: number;
  readonly alias_identifiers: readonly string[];
}

export class UserLockout {
  private readonly failures = new Map<string, FailedLogins>();
  private readonly turns = new KeyedLock();
  private readonly locked: StorageView;
  private sweepAt = SWEEP_AT;

  /**
   * @param storage the barrier (locked users are kept under LOCKED_USERS_PREFIX).
   * @param stanzas the configuration file's `user_lockout` stanzas.
   */
  constructor(
    storage: Storage,
    private readonly clock: Clock,
    private readonly stanzas: UserLockoutStanzas,
  ) {
    this.locked = new StorageView(storage, LOCKED_USERS_PREFIX);
  }

  /** The settings of a mount: its tune, the configuration file, Vault's defaults. */
  settingsFor(entry: Pick<MountEntry, 'type' | 'config'>): LockoutSettings {
    return effectiveLockout(entry.type, this.stanzas, entry.config.user_lockout_config);
  }

  /**
   * Runs a login naming `user` on the mount `entry` under its lockout: refused with a 403 while
   * the user is locked; an InvalidCredentialsError it ends in counts against the user; success
   * clears the count.
   */
  async guard<T>(entry: Pick<MountEntry, 'type' | 'config' | 'accessor'>, user: string, login: () => Promise<T>): Promise<T> {
    const settings = this.settingsFor(entry);
    if (settings.disabled) return login();
    const key = keyOf(entry.accessor, user);
    return this.turns.run(key, async () => {
      if (await this.isLocked(entry.accessor, user, settings)) throw new PermissionDeniedError();
      try {
        const result = await login();
        this.failures.delete(key);
        return result;
      } catch (err) {
        if (err instanceof InvalidCredentialsError) await this.countFailure(entry.accessor, user, settings);
        throw err;
      }
    });
  }

  /** Clears a user's lock and count (idempotent: a user that is not locked is fine). */
  async unlock(accessor: string, user: string): Promise<void> {
    await this.turns.run(keyOf(accessor, user), async () => {
      this.failures.delete(keyOf(accessor, user));
      await this.locked.delete(storageKeyOf(accessor, user));
    });
  }

  /**
   * The users locked now, by mount, most first; only `accessor`'s (even with none) when given. Locks whose
   * duration has passed are removed on the way. `settingsOf` gives a mount's settings by accessor
   * (undefined for a mount that is gone: its locks are removed).
   */
  async lockedUsers(settingsOf: (accessor: string) => LockoutSettings | undefined, accessor?: string): Promise<LockedUsersOfMount[]> {
    const accessors = accessor ? [accessor] : (await this.locked.list('')).filter((k) => k.endsWith('/')).map((k) => k.slice(0, -1));
    const mounts: LockedUsersOfMount[] = [];
    for (const mount of accessors) {
      const settings = settingsOf(mount);
      const users: string[] = [];
      for (const encoded of await this.locked.list(`${mount}/`)) {
        if (encoded.endsWith('/')) continue;
        const user = Buffer.from(encoded, 'base64url').toString('utf8');
        const last = await this.lockedSince(mount, user);
        if (last === undefined) continue;
        if (settings && !settings.disabled && this.clock.now().getTime() - last < settings.duration * 1000) users.push(user);
        else await this.locked.delete(`${mount}/${encoded}`);
      }
      if (users.length > 0 || accessor) mounts.push({ mount_accessor: mount, counts: users.length, alias_identifiers: users.sort() });
    }
    return mounts.sort((a, b) => b.counts - a.counts);
  }

  private async isLocked(accessor: string, user: string, settings: LockoutSettings): Promise<boolean> {
    const now = this.clock.now().getTime();
    const counted = this.failures.get(keyOf(accessor, user));
    if (counted) return counted.count >= settings.threshold && now - counted.last < settings.duration * 1000;
    // Nothing counted in this process: a lock written before a restart, or by another node.
    const last = await this.lockedSince(accessor, user);
    if (last === undefined) return false;
    if (now - last < settings.duration * 1000) {
      this.remember(keyOf(accessor, user), { count: settings.threshold, last, forgettable: forgettableAfter(last, settings) });
      return true;
    }
    await this.locked.delete(storageKeyOf(accessor, user));
    return false;
  }

  private async countFailure(accessor: string, user: string, settings: LockoutSettings): Promise<void> {
    const key = keyOf(accessor, user);
    const now = this.clock.now().getTime();
    const previous = this.failures.get(key);
    const count = previous && now - previous.last <= settings.counterReset * 1000 ? previous.count + 1 : 1;
    this.remember(key, { count, last: now, forgettable: forgettableAfter(now, settings) });
    if (count >= settings.threshold) {
      await this.locked.put(storageKeyOf(accessor, user), Buffer.from(JSON.stringify(Math.floor(now / 1000)), 'utf8'));
    }
  }

  /** Unix ms of a stored lock, or undefined. */
  private async lockedSince(accessor: string, user: string): Promise<number | undefined> {
    const raw = await this.locked.get(storageKeyOf(accessor, user));
    if (!raw) return undefined;
    const seconds: unknown = JSON.parse(Buffer.from(raw).toString('utf8'));
    return typeof seconds === 'number' ? seconds * 1000 : undefined;
  }

  /** Adds an entry; first, when there are many, drops those past mattering (bounded memory under a spray of names). */
  private remember(key: string, entry: FailedLogins): void {
    if (!this.failures.has(key) && this.failures.size >= this.sweepAt) {
      const now = this.clock.now().getTime();
      for (const [k, e] of this.failures) if (e.forgettable < now) this.failures.delete(k);
      this.sweepAt = Math.max(SWEEP_AT, this.failures.size * 2);
    }
    this.failures.set(key, entry);
  }

  /** Users with counted failures right now (tests check memory stays bounded). */
  get counted(): number {
    return this.failures.size;
  }
}

function keyOf(accessor: string, user: string): string {
  return `${accessor}\n${user}`;
}

function storageKeyOf(accessor: string, user: string): string {
  return `${accessor}/${Buffer.from(user, 'utf8').toString('base64url')}`;
}

function forgettableAfter(last: number, settings: LockoutSettings): number {
  return last + Math.max(settings.duration, settings.counterReset) * 1000;
}
