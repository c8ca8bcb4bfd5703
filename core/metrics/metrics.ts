/**
 * What a server measures, in one prom-client registry per server (several servers share a process
 * in the tests, so nothing goes to prom-client's global registry). docs/metrics.md lists every
 * metric with its meaning; keep the two in step.
 *
 * Two kinds of source feed it. The request path records directly (requests, latency, transit
 * operations, logins, storage latency) into series.ts's counters and histograms: each label set's
 * series is found once and then updated with additions. Parts that count for themselves anyway
 * (the token store, the WASM dispatcher, the HA manager, the seal) are read only when metrics are
 * scraped, so they cost the request path nothing.
 *
 * A worker of several (core/cluster/) reports the whole server: the primary asks every worker for
 * its registry and merges them with prom-client's `AggregatorRegistry`, which sums a metric's
 * series of equal labels unless the metric names another aggregator. Counts and histograms sum;
 * what describes one process (its event loop, its memory, the leader changes it saw) carries a
 * `worker` label instead, so each worker's series stays apart.
 */
import os from 'node:os';
import { Counter, Gauge, Registry, type Metric, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { FastCounter, FastHistogram, type CounterSeries, type HistogramSeries } from './series.js';
import type { TelemetryConfig } from '../config/config.js';
import { Retention } from './retention.js';
import { RuntimeMetrics } from './runtime.js';
import { toVaultJson, type MetricsJson } from './json.js';

/** Read at scrape time from the parts that keep their own counts. */
export interface MetricSources {
  /** Whether the barrier is unsealed. */
  unsealed(): boolean;
  /** Tokens created by type and revoked, since start. */
  tokens(): { readonly created: Readonly<Record<'service' | 'batch', number>>; readonly revoked: number };
  /** Items each crypto engine took, by primitive family, since start (wasm/index.ts). */
  crypto(): Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** HA only: this node's role and counts. */
  readonly ha?: () => { readonly active: boolean; readonly leaderChanges: number; readonly forwarded: number; readonly forwardFailures: number };
}

/** A registry's metrics as `Registry.getMetricsAsJSON()` gives them. */
export type MetricsAsJson = MetricObjectWithValues<MetricValue<string>>[];

/** A worker of several: the whole server's metrics, which the primary aggregates (core/cluster/whole-server.ts). */
export interface MetricsOfWorkers {
  /** This worker's number, 1 to N: the `worker` label of the series that belong to one process. */
  readonly worker: number;
  /** Every worker's metrics, aggregated (prom-client's `AggregatorRegistry`). */
  metricsJson(): Promise<MetricsAsJson>;
  /** The same, in the Prometheus text exposition format. */
  metricsText(): Promise<string>;
}

/** Latency buckets in seconds: from a cached single-item encrypt to a 30 MB batch. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STORAGE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const BATCH_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 50000];

/** The series of one mount and operation: its duration, and its counts by status. */
interface RequestCell {
  readonly duration: HistogramSeries;
  readonly byStatus: Map<number, CounterSeries>;
}

export class Metrics {
  /** False with `telemetry { filter_default = false }`: nothing is recorded and sys/metrics is empty. */
  readonly enabled: boolean;
  private readonly registry = new Registry();
  private readonly telemetry: TelemetryConfig;
  private readonly retention: Retention;
  private readonly runtime: RuntimeMetrics | undefined;
  private readonly requests = new FastCounter('keywarden_requests_total', 'Requests answered, by mount, operation and HTTP status.');
  private readonly durations = new FastHistogram('keywarden_request_duration_seconds', 'Time from a request reaching the pipeline to its answer, by mount and operation.', LATENCY_BUCKETS);
  private readonly transitOps = new FastCounter('keywarden_transit_operations_total', 'Transit requests answered (a batch counts once), by operation and key type.');
  private readonly transitBatch = new FastHistogram('keywarden_transit_batch_items', 'Items per transit request (1 without batch_input), by operation.', BATCH_BUCKETS);
  private readonly logins = new FastCounter('keywarden_logins_total', 'Logins to auth methods, by method (mount type), mount and result.');
  private readonly quotaRefusals = new FastCounter('keywarden_quota_rate_limit_violations_total', 'Requests refused by a rate-limit quota on this node, by quota name.');
  private readonly storage = new FastHistogram('keywarden_storage_operation_duration_seconds', 'Physical storage operations under the barrier, by backend and operation.', STORAGE_BUCKETS);
  private readonly cells = new Map<string, Map<string, RequestCell>>();
  private readonly transitSeries = new Map<string, Map<string, { op: CounterSeries; batch: HistogramSeries }>>();
  private readonly storageSeries = new Map<string, HistogramSeries>();
  private inFlight: () => number = () => 0;
  private readonly wholeServer: MetricsOfWorkers | undefined;

  constructor(telemetry: TelemetryConfig, sources: MetricSources, wholeServer?: MetricsOfWorkers) {
    this.telemetry = telemetry;
    this.wholeServer = wholeServer;
    // A worker's label on the series of its own process; nothing on a single process.
    const own: Record<string, string> = wholeServer ? { worker: String(wholeServer.worker) } : {};
    const ownLabels = Object.keys(own);
    this.enabled = telemetry.collect;
    const registers = [this.registry];
    if (!telemetry.disableHostname) this.registry.setDefaultLabels({ host: os.hostname() });

    const direct = [this.requests, this.durations, this.transitOps, this.transitBatch, this.logins, this.quotaRefusals, this.storage];
    this.retention = new Retention(direct, telemetry.prometheusRetentionMs);
    if (!this.enabled) return;

    // They answer get() as prom-client's own metrics do; the registry asks nothing else of them.
    for (const metric of direct) this.registry.registerMetric(metric as unknown as Metric);
    // Read when collected: the pipeline's tracker is handed over after construction (countInFlight).
    const inFlight = () => this.inFlight();
    new Gauge({ name: 'keywarden_requests_in_flight', help: 'Requests being answered now.', registers, collect() { this.set(inFlight()); } });
    // Workers seal and unseal together; one still sealed (restarting) makes the server read as sealed.
    new Gauge({ name: 'keywarden_core_unsealed', help: '1 when this node is unsealed, 0 when sealed.', registers, aggregator: 'min', collect() { this.set(sources.unsealed() ? 1 : 0); } });
    new Counter({
      name: 'keywarden_tokens_created_total', help: 'Tokens created on this node, by type.', labelNames: ['type'], registers,
      collect() {
        const { created } = sources.tokens();
        this.reset();
        for (const type of ['service', 'batch'] as const) this.inc({ type }, created[type]);
      },
    });
    new Counter({ name: 'keywarden_tokens_revoked_total', help: 'Tokens revoked on this node (explicitly, with a parent, by use count or expiry).', registers, collect() { this.reset(); this.inc(sources.tokens().revoked); } });
    new Counter({
      name: 'keywarden_crypto_items_total', help: 'Batch crypto items by primitive and the engine that ran them (wasm, hybrid, node).', labelNames: ['primitive', 'engine'], registers,
      collect() {
        this.reset();
        for (const [primitive, engines] of Object.entries(sources.crypto())) {
          for (const [engine, items] of Object.entries(engines)) this.inc({ primitive, engine }, items);
        }
      },
    });
    const ha = sources.ha;
    if (ha) {
      new Gauge({ name: 'keywarden_ha_active', help: '1 while this node is the active node of its HA cluster, else 0.', registers, collect() { this.set(ha().active ? 1 : 0); } });
      new Counter({
        name: 'keywarden_ha_leader_changes_total', help: 'Times this node saw the active node change (itself included).', labelNames: ownLabels, registers,
        collect() {
          this.reset();
          this.inc(own, ha().leaderChanges);
        },
      });
      new Counter({
        name: 'keywarden_ha_forwarded_requests_total', help: 'Requests this standby forwarded to the active node, by result.', labelNames: ['result'], registers,
        collect() {
          const counts = ha();
          this.reset();
          this.inc({ result: 'success' }, counts.forwarded);
          this.inc({ result: 'failure' }, counts.forwardFailures);
        },
      });
    }
    this.runtime = new RuntimeMetrics(registers, own);
  }

  /** The in-flight request count, from the pipeline's tracker. */
  countInFlight(count: () => number): void {
    this.inFlight = count;
  }

  /** One answered request and its duration in seconds. */
  request(mount: string, operation: string, status: number, seconds: number): void {
    let byOperation = this.cells.get(mount);
    if (!byOperation) this.cells.set(mount, (byOperation = new Map<string, RequestCell>()));
    let cell = byOperation.get(operation);
    if (!cell) byOperation.set(operation, (cell = { duration: this.durations.series({ mount, operation }), byStatus: new Map() }));
    let count = cell.byStatus.get(status);
    if (!count) cell.byStatus.set(status, (count = this.requests.series({ mount, operation, status: String(status) })));
    FastCounter.inc(count);
    this.durations.observe(cell.duration, seconds);
  }

  /** One login attempt on an auth method (rare next to requests: looked up by label set). */
  login(method: string, mount: string, success: boolean): void {
    FastCounter.inc(this.logins.series({ method, mount, result: success ? 'success' : 'failure' }));
  }

  /** A request refused by the rate-limit quota `name`. */
  quotaRefused(name: string): void {
    if (this.enabled) FastCounter.inc(this.quotaRefusals.series({ name }));
  }

  /** One transit request: its operation, the key's type ("none" for keyless: hash, random) and batch size. */
  transit(operation: string, keyType: string, items: number): void {
    // By operation, then key type: two lookups of strings the caller holds, nothing built per request.
    let byType = this.transitSeries.get(operation);
    if (!byType) this.transitSeries.set(operation, (byType = new Map<string, { op: CounterSeries; batch: HistogramSeries }>()));
    let series = byType.get(keyType);
    if (!series) byType.set(keyType, (series = { op: this.transitOps.series({ operation, key_type: keyType }), batch: this.transitBatch.series({ operation }) }));
    FastCounter.inc(series.op);
    this.transitBatch.observe(series.batch, items);
  }

  /** One physical storage operation and its duration in seconds. */
  storageOperation(backend: string, operation: string, seconds: number): void {
    const key = `${backend} ${operation}`;
    let series = this.storageSeries.get(key);
    if (!series) this.storageSeries.set(key, (series = this.storage.series({ backend, operation })));
    this.storage.observe(series, seconds);
  }

  /** Whether `?format=prometheus` is served: off with `prometheus_retention_time = 0`, as in Vault. */
  get prometheusEnabled(): boolean {
    return this.telemetry.prometheusRetentionMs > 0;
  }

  /** The Prometheus text exposition, of every worker when there are several. */
  async prometheus(): Promise<{ contentType: string; text: string }> {
    const text = this.wholeServer ? await this.wholeServer.metricsText() : await (await this.ownRegistry()).metrics();
    return { contentType: this.registry.contentType, text };
  }

  /** Vault's JSON shape of sys/metrics (Gauges, Counters, Samples), of every worker when there are several. */
  async json(now: Date): Promise<MetricsJson> {
    return toVaultJson(this.wholeServer ? await this.wholeServer.metricsJson() : await this.ownJson(), now);
  }

  /** This process's metrics alone, which the primary of several workers aggregates. */
  async ownJson(): Promise<MetricsAsJson> {
    return (await this.ownRegistry()).getMetricsAsJSON();
  }

  private async ownRegistry(): Promise<Registry> {
    await this.retention.sweep();
    return this.registry;
  }

  /** Stops the runtime sampling (the event-loop monitor). */
  close(): void {
    this.runtime?.close();
  }
}
