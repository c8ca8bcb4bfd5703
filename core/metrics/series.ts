/**
 * The metrics the request path updates, kept as plain numbers in series objects that the caller
 * looks up once per label set and then updates with an addition. prom-client's own counters and
 * histograms validate and hash the labels on every update, a cost the request path felt
 * (bench/README.md, "Metrics on the request path"); these cost a few map lookups. They give
 * prom-client's registry the same `get()` answer its own metrics give, so exposition, JSON and
 * default labels are prom-client's.
 */

type Labels = Record<string, string>;

interface Exported {
  readonly labels: Labels;
  readonly value: number;
  readonly metricName?: string;
}

/** What the registry and the retention sweep read of a metric. */
export interface SeriesMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: Exported[] }>;
  /** Hides a series until it is updated again (prometheus_retention_time); it comes back from zero. */
  remove(labels: Labels): void;
}

export interface CounterSeries {
  readonly labels: Labels;
  value: number;
  hidden: boolean;
}

export interface HistogramSeries {
  readonly labels: Labels;
  /** Observations per bucket, not cumulative; the last is +Inf. */
  readonly counts: number[];
  sum: number;
  count: number;
  hidden: boolean;
}

abstract class SeriesMap<S extends { readonly labels: Labels; hidden: boolean }> {
  protected readonly all = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** The series of a label set, made on first use; callers keep it and update it directly. */
  series(labels: Labels): S {
    const key = JSON.stringify(labels);
    let series = this.all.get(key);
    if (!series) this.all.set(key, (series = this.create(labels)));
    return series;
  }

  remove(labels: Labels): void {
    const series = this.all.get(JSON.stringify(labels));
    if (series) this.clear(series);
  }

  protected abstract create(labels: Labels): S;
  protected abstract clear(series: S): void;
}

export class FastCounter extends SeriesMap<CounterSeries> implements SeriesMetric {
  readonly type = 'counter';

  /** Adds to a series (and shows it again if retention had hidden it). */
  static inc(series: CounterSeries, by = 1): void {
    series.value += by;
    series.hidden = false;
  }

  async get() {
    const values: Exported[] = [];
    for (const s of this.all.values()) if (!s.hidden) values.push({ labels: s.labels, value: s.value });
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum' as const, values };
  }

  protected create(labels: Labels): CounterSeries {
    return { labels, value: 0, hidden: false };
  }

  protected clear(series: CounterSeries): void {
    series.value = 0;
    series.hidden = true;
  }
}

export class FastHistogram extends SeriesMap<HistogramSeries> implements SeriesMetric {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    /** Upper bounds, ascending; +Inf is implied. */
    private readonly bounds: readonly number[],
  ) {
    super(name, help);
  }

  /** Records one observation in a series. */
  observe(series: HistogramSeries, value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    series.counts[i]!++;
    series.sum += value;
    series.count++;
    series.hidden = false;
  }

  async get() {
    const values: Exported[] = [];
    for (const s of this.all.values()) {
      if (s.hidden) continue;
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += s.counts[i]!;
        const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
        values.push({ labels: { ...s.labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum' as const, values };
  }

  protected create(labels: Labels): HistogramSeries {
    return { labels, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0, hidden: false };
  }

  protected clear(series: HistogramSeries): void {
    series.counts.fill(0);
    series.sum = 0;
    series.count = 0;
    series.hidden = true;
  }
}
