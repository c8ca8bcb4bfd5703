/**
 * sys/metrics without `format=prometheus`: the metrics in the shape of Vault's in-memory sink
 * (`Timestamp`, `Gauges`, `Counters`, `Samples`), which tools reading Vault's JSON know. Counters
 * carry their total in `Count`; histograms become samples with their count, sum, mean and
 * cumulative buckets.
 */
import type { MetricObjectWithValues, MetricValue } from 'prom-client';

type Labels = Record<string, string>;

/** A histogram's values name the sample they belong to (`_bucket`, `_sum`, `_count`). */
type NamedValue = MetricValue<string> & { readonly metricName?: string };

export interface MetricsJson {
  readonly Timestamp: string;
  readonly Gauges: { Name: string; Value: number; Labels: Labels }[];
  readonly Counters: { Name: string; Count: number; Labels: Labels }[];
  readonly Samples: { Name: string; Count: number; Sum: number; Mean: number; Labels: Labels; Buckets: Record<string, number> }[];
}

export function toVaultJson(metrics: readonly MetricObjectWithValues<MetricValue<string>>[], now: Date): MetricsJson {
  const out: MetricsJson = { Timestamp: now.toISOString(), Gauges: [], Counters: [], Samples: [] };
  for (const metric of metrics) {
    // prom-client's typings declare a numeric enum; at run time the type is its name.
    const type = metric.type as unknown as string;
    if (type === 'gauge') {
      for (const v of metric.values) out.Gauges.push({ Name: metric.name, Value: v.value, Labels: labelsOf(v.labels) });
    } else if (type === 'counter') {
      for (const v of metric.values) out.Counters.push({ Name: metric.name, Count: v.value, Labels: labelsOf(v.labels) });
    } else if (type === 'histogram') {
      out.Samples.push(...samplesOf(metric.name, metric.values));
    }
  }
  return out;
}

/** A histogram's values (every bucket, sum and count of every series) grouped back into one sample per series. */
function samplesOf(name: string, values: readonly NamedValue[]): MetricsJson['Samples'] {
  const series = new Map<string, MetricsJson['Samples'][number]>();
  for (const v of values) {
    const { le, ...rest } = v.labels as Labels;
    const labels = labelsOf(rest);
    const key = JSON.stringify(labels);
    let sample = series.get(key);
    if (!sample) series.set(key, (sample = { Name: name, Count: 0, Sum: 0, Mean: 0, Labels: labels, Buckets: {} }));
    if (v.metricName === `${name}_bucket` && le !== undefined) sample.Buckets[String(le)] = v.value;
    else if (v.metricName === `${name}_sum`) sample.Sum = v.value;
    else if (v.metricName === `${name}_count`) sample.Count = v.value;
  }
  for (const sample of series.values()) sample.Mean = sample.Count > 0 ? sample.Sum / sample.Count : 0;
  return [...series.values()];
}

function labelsOf(labels: Partial<Record<string, string | number>>): Labels {
  const out: Labels = {};
  for (const [key, value] of Object.entries(labels)) if (value !== undefined) out[key] = String(value);
  return out;
}
