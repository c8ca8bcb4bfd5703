/**
 * How a host joins an HA cluster over a shared store: remote changes are applied to its caches, a
 * standby refuses its own writes and forwards requests (StandbyStrategy), and on winning the
 * election the node catches up with every change before it loads what is missing.
 */
import type { Logger } from 'pino';
import type { Barrier } from '../../storage/barrier.js';
import type { SharedStorage } from '../../storage/storage.js';
import type { AuditBroker } from '../audit/broker.js';
import type { PolicyStore } from '../auth/policy-store.js';
import type { TokenStore } from '../auth/token-store.js';
import type { Quotas } from '../quotas/quotas.js';
import type { CorsSettings } from '../http/cors.js';
import type { Backend } from '../framework/backend.js';
import type { HostState } from '../host-state.js';
import { StandbyStrategy } from './standby.js';
import type { HaManager } from './ha-manager.js';
import { RemoteChanges } from './remote-changes.js';

export interface ClusterNodeDeps {
  readonly ha: HaManager;
  readonly shared: SharedStorage;
  readonly barrier: Barrier;
  readonly state: HostState;
  readonly audit: AuditBroker;
  readonly policies: PolicyStore;
  readonly tokens: TokenStore;
  readonly quotas: Quotas;
  readonly cors: CorsSettings;
  readonly system: Backend;
  readonly logger: Logger;
  /** Moves the store to the seal this node was unsealed with `migrate` for, before anything loads (core/seal/migration.ts). */
  readonly migrateSeal: () => Promise<void>;
  /** Work only the active node does once it has loaded (the configuration's audit devices); a failure gives the lock up. */
  readonly activated: () => Promise<void>;
}

/** Wires the node into its cluster; the pipeline runs requests through the returned strategy. */
export function joinCluster(deps: ClusterNodeDeps): StandbyStrategy {
  const { ha, shared, barrier, state, tokens, logger } = deps;
  const changes = new RemoteChanges({ barrier, state, audit: deps.audit, policies: deps.policies, tokens, quotas: deps.quotas, cors: deps.cors, ha, logger });
  const standby = new StandbyStrategy({ ha, shared, barrier, unsealed: state, changes, system: deps.system, logger });
  barrier.setWriteGuard(() => standby.refuseWrites());
  shared.onRemoteChange((change) => changes.apply(change));
  ha.attach(
    {
      // The node won the election: catch up with every change, finish a pending seal migration, then load what is missing.
      promote: async () => {
        await shared.sync();
        await changes.settled();
        await deps.migrateSeal();
        await state.load();
        await tokens.ensureSecrets();
        await deps.activated();
      },
      demote: (reason) => logger.info({ reason }, 'standby: writes are forwarded to the active node'),
    },
    standby.signer,
  );
  return standby;
}
