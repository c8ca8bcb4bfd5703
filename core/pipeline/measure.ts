/**
 * Around the whole pipeline, measure: every answered request is counted by mount, operation and
 * status and timed (keywarden_requests_total, keywarden_request_duration_seconds), and a request
 * to an auth method's unauthenticated paths (its logins) is counted as a login with its result.
 * Composed in only when metrics are collected; what it records per request is two label lookups
 * in maps of label objects made once, one counter increment and one histogram observation.
 */
import type { Metrics } from '../metrics/metrics.js';
import type { RunningRequest } from './in-flight.js';

/** The mount label of requests that were never routed (an invalid path, a sealed server). */
const UNROUTED = 'none';

/** Where answered requests and logins are counted. */
export type RequestMetrics = Pick<Metrics, 'request' | 'login'>;

export class MeasureStage {
  constructor(private readonly metrics: RequestMetrics) {}

  /** Records a request answered with `status`: where it went and what it did, from its record. */
  record(request: RunningRequest, status: number): void {
    const route = request.route;
    const live = route?.live;
    const mount = route ? (live ? live.routePrefix : 'sys/') : UNROUTED;
    this.metrics.request(mount, request.operation, status, (performance.now() - request.started) / 1000);
    if (live && route.unauthenticated && live.entry.table === 'auth' && (request.operation === 'update' || request.operation === 'create')) {
      this.metrics.login(live.entry.type, mount, status < 400);
    }
  }
}
