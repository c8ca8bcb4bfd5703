/**
 * A worker of several (core/cluster/) answers `sys/metrics` and `sys/in-flight-req` for the whole
 * server, not for itself alone: it asks the primary process, which gathers every worker's own
 * report and merges them (docs/architecture.md, "Workers").
 */
import type { InFlightEntry } from '../pipeline/in-flight.js';
import type { MetricsOfWorkers } from '../metrics/metrics.js';

export interface WholeServer extends MetricsOfWorkers {
  /** Every worker's requests in flight, by request id. */
  inFlight(): Promise<Record<string, InFlightEntry>>;
}
