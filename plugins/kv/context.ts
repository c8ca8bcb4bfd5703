/** What every path of one kv mount shares. */
import type { Clock, KeyedLock, Logger, Storage } from '../../sdk/index.js';
import type { KvConfigCache } from './store.js';

export interface KvContext {
  readonly storage: Storage;
  /** Creation and deletion times come from it, so tests move time instead of sleeping. */
  readonly clock: Clock;
  readonly logger: Logger;
  /** One lock per secret path around every read-modify-write of its metadata (check-and-set relies on it). */
  readonly locks: KeyedLock;
  /** Version 2: the mount's settings (`config`). */
  readonly config: KvConfigCache;
}
