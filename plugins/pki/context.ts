/** What every path of one pki mount shares. */
import type { Clock, KeyedLock, Logger, SystemView } from '../../sdk/index.js';
import type { PkiStore } from './store.js';

export interface PkiContext {
  readonly store: PkiStore;
  /** Validity periods and revocation times come from it, so tests move time instead of sleeping. */
  readonly clock: Clock;
  readonly logger: Logger;
  /** The mount's default and max lease TTLs: a certificate's TTL when its role sets none. */
  readonly system: SystemView;
  /** `issuer` around root generation and deletion; `crl` around every change of the revoked set and its CRL. */
  readonly locks: KeyedLock;
}
