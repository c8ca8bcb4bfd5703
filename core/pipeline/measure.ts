/**
 * Around the whole pipeline, measure: every answered request is counted by mount, operation and
 * status and timed (keywarden_requests_total, keywarden_request_duration_seconds), and a request
 * to an auth method's unauthenticated paths (its logins) is counted as a login with its result.
 * Composed in only when metrics are collected; what it records per request is two label lookups
 * in maps of label objects made once, one counter increment and one histogram observation.
 */
import type { Metrics } from '../metrics/metrics.js';
import type { Route } from './types.js';

/** What the pipeline learnt of a request on its way, for the measurement at its end. */
export interface Observed {
  /** Undefined when the request failed before it was routed. */
  route: Route | undefined;
  /** The final operation (`create` once the existence check ran), or `none` before the read stage. */
  operation: string;
}

/** The mount label of requests that were never routed (an invalid path, a sealed server). */
const UNROUTED = 'none';

export class MeasureStage {
  constructor(private readonly metrics: Metrics) {}

  /** Records a request answered with `status`, begun at `startedMs` (performance.now()). */
  record(observed: Observed, status: number, startedMs: number): void {
    const route = observed.route;
    const live = route?.live;
    const mount = route ? (live ? live.routePrefix : 'sys/') : UNROUTED;
    this.metrics.request(mount, observed.operation, status, (performance.now() - startedMs) / 1000);
    if (live && route.unauthenticated && live.entry.table === 'auth' && (observed.operation === 'update' || observed.operation === 'create')) {
      this.metrics.login(live.entry.type, mount, status < 400);
    }
  }
}
