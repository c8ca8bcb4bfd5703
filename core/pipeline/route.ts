/**
 * Stage 3, route: the sys backend is always there; every other path needs the unsealed mount
 * table. A mounted backend is held (`acquire`) until the request is done, so a reload or unmount
 * waits for the requests already inside it.
 */
import { NotFoundError, SealedError } from '../errors.js';
import type { Backend } from '../framework/backend.js';
import type { Unsealed } from '../unsealed.js';
import type { Route, SealState } from './types.js';

const nothingToRelease = (): void => {};

/** The sys path a listener may open to scrapers without a token. */
const METRICS_PATH = 'metrics';

export class RouteStage {
  constructor(
    private readonly system: Backend,
    private readonly barrier: SealState,
    private readonly unsealed: Pick<Unsealed, 'mounts'>,
  ) {}

  /** `openMetrics`: the request came through a listener that serves `sys/metrics` without a token. */
  route(path: string, openMetrics: boolean): Route {
    if (path === 'sys' || path.startsWith('sys/')) {
      const relative = path.slice('sys/'.length);
      const availableSealed = this.system.isAvailableSealed?.(relative) ?? false;
      if (this.barrier.sealed && !availableSealed) throw new SealedError();
      return {
        backend: this.system,
        relative,
        live: undefined,
        unauthenticated: this.system.isUnauthenticated(relative) || (openMetrics && relative === METRICS_PATH),
        availableSealed,
        release: nothingToRelease,
      };
    }
    if (this.barrier.sealed) throw new SealedError();
    const found = this.unsealed.mounts.resolve(path);
    if (!found) throw new NotFoundError(`no handler for route ${JSON.stringify(path)}. route entry not found.`);
    const { backend, release } = found.mount.acquire();
    try {
      return {
        backend,
        relative: found.relative,
        live: found.mount,
        unauthenticated: backend.isUnauthenticated(found.relative),
        availableSealed: false,
        release,
      };
    } catch (err) {
      release();
      throw err;
    }
  }
}
