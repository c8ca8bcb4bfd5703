/**
 * `sys/metrics` and `sys/in-flight-req` of a server of several workers (docs/architecture.md,
 * "Workers"): the worker a client asks calls the primary, the primary asks every worker for its
 * own report and merges them, so any worker answers for the whole server. Metrics merge with
 * prom-client's `AggregatorRegistry`, each metric by its aggregator (core/metrics/metrics.ts).
 */
import { AggregatorRegistry } from 'prom-client';
import type { Host } from '../host.js';
import type { InFlightEntry } from '../pipeline/in-flight.js';
import type { MetricsAsJson } from '../metrics/metrics.js';
import type { WholeServer } from '../system/whole-server.js';
import type { IpcPeer } from './ipc-peer.js';
import type { StoreOwner } from './store-owner.js';

/** A worker's side: it answers the primary with its own metrics and requests, and asks it for everyone's. */
export function workerReports(peer: IpcPeer, worker: number, host: () => Host | undefined): WholeServer {
  // Before the host is built there is nothing to report yet.
  peer.handle('ownMetrics', async () => (await host()?.metrics.ownJson()) ?? []);
  peer.handle('ownInFlight', async () => host()?.inFlight.snapshot() ?? {});
  return {
    worker,
    metricsJson: () => peer.call('metrics', { format: 'json' }),
    metricsText: () => peer.call('metrics', { format: 'prometheus' }),
    inFlight: () => peer.call('inFlight'),
  };
}

/** The primary's side, for the worker behind `peer`. */
export function gatherReports(peer: IpcPeer, owner: StoreOwner): void {
  peer.handle('metrics', async ({ format }) => {
    const reports = (await owner.broadcast(undefined, 'ownMetrics')).filter((report): report is MetricsAsJson => Array.isArray(report));
    const merged = AggregatorRegistry.aggregate(reports);
    return format === 'prometheus' ? merged.metrics() : merged.getMetricsAsJSON();
  });
  peer.handle('inFlight', async () => {
    const reports = await owner.broadcast(undefined, 'ownInFlight');
    return Object.assign({}, ...reports.filter((report) => typeof report === 'object')) as Record<string, InFlightEntry>;
  });
}
