/**
 * `prometheus_retention_time`: a series that has not changed for that long leaves sys/metrics (a
 * mount disabled long ago, a status seen once), as Vault's Prometheus sink forgets it. Checked
 * when metrics are read, by comparing each series with what the previous read saw, so the request
 * path keeps no timestamps.
 */
import type { SeriesMetric } from './series.js';

interface Seen {
  /** The series' count (a counter's value, a histogram's observation count). */
  readonly value: number;
  /** When that value was first seen, in ms. */
  readonly since: number;
}

export class Retention {
  private readonly seen = new Map<SeriesMetric, Map<string, Seen>>();

  /** `retentionMs` 0: the Prometheus format is off and nothing expires (JSON shows everything). */
  constructor(
    private readonly metrics: readonly SeriesMetric[],
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Removes every series unchanged for longer than the retention time. */
  async sweep(): Promise<void> {
    if (this.retentionMs <= 0) return;
    const now = this.now();
    for (const metric of this.metrics) {
      let series = this.seen.get(metric);
      if (!series) this.seen.set(metric, (series = new Map<string, Seen>()));
      const current = new Set<string>();
      const { values } = await metric.get();
      for (const sample of values) {
        // A histogram's series is its _count sample; its buckets and sum move with it.
        if (sample.metricName !== undefined && !sample.metricName.endsWith('_count')) continue;
        const key = JSON.stringify(sample.labels);
        current.add(key);
        const before = series.get(key);
        if (!before || before.value !== sample.value) {
          series.set(key, { value: sample.value, since: now });
        } else if (now - before.since > this.retentionMs) {
          metric.remove(sample.labels);
          series.delete(key);
        }
      }
      for (const key of series.keys()) if (!current.has(key)) series.delete(key);
    }
  }
}
