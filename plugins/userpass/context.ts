/** What every path and hook of one userpass mount shares. */
import { randomBytes } from 'node:crypto';
import { KeyedLock, type Storage, type SystemView } from '../../sdk/index.js';
import { DEFAULT_BCRYPT_COST, type PasswordHasher } from './hasher.js';

export class UserpassContext {
  private dummy: Promise<string> | undefined;
  /** Per-user locks around every read-change-write of a user entry. */
  readonly userLocks = new KeyedLock();

  constructor(
    readonly storage: Storage,
    readonly system: SystemView,
    readonly hasher: PasswordHasher,
  ) {}

  /**
   * A hash of a random password at the default cost, checked at the login of a user that does not
   * exist: that login then takes as long as one with a wrong password, so timing does not tell
   * which usernames exist. Made once per mount, in the background from its start.
   */
  dummyHash(): Promise<string> {
    this.dummy ??= this.hasher.hash(randomBytes(16).toString('hex'), DEFAULT_BCRYPT_COST).catch((err: unknown) => {
      this.dummy = undefined;
      throw err;
    });
    return this.dummy;
  }
}
