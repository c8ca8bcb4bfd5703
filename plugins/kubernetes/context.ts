/** What every path and hook of one Kubernetes auth mount shares. */
import type { Clock, Logger, Storage, SystemView } from '../../sdk/index.js';
import type { PodServiceAccount } from './pod-files.js';

export interface KubernetesAuthContext {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly system: SystemView;
  readonly pod: PodServiceAccount;
  /** Timeout of one call to the API server, ms. */
  readonly timeoutMs: number;
}
