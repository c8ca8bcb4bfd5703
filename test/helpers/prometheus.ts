/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests that scrape
 * sys/metrics as Prometheus does. It fails on anything Prometheus would refuse or misread: a sample
 * before its family's TYPE, a sample name that does not belong to the family, malformed labels or
 * values, a label set twice, a histogram whose buckets are not cumulative or whose +Inf bucket is
 * not its count. (parse-prometheus-text-format, the npm parser, drops the labels of labelled
 * histograms, so it could not check ours.)
 */
export interface Sample {
  readonly labels: Record<string, string>;
  /** Counters and gauges. */
  readonly value?: number;
  /** Histograms: cumulative counts by upper bound (`+Inf` included), count and sum. */
  readonly buckets?: Record<string, number>;
  readonly count?: number;
  readonly sum?: number;
}

export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  readonly metrics: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parseExposition(text: string): Family[] {
  const families = new Map<string, Family & { series: Map<string, { labels: Record<string, string>; buckets: Record<string, number>; count?: number; sum?: number; value?: number }> }>();
  const help = new Map<string, string>();
  let current: string | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    const fail = (problem: string): never => {
      throw new Error(`exposition line ${index + 1}: ${problem}: ${raw}`);
    };
    if (line === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) return;
      const [, kind, name, rest = ''] = meta;
      if (!NAME.test(name!)) fail('bad metric name');
      if (kind === 'HELP') help.set(name!, rest);
      else {
        if (!TYPES.has(rest)) fail(`unknown type "${rest}"`);
        if (families.has(name!)) fail('a second TYPE for the family');
        families.set(name!, { name: name!, help: help.get(name!) ?? '', type: rest as Family['type'], metrics: [], series: new Map() });
        current = name;
      }
      return;
    }
    const m = SAMPLE.exec(line) ?? fail('not a sample line');
    const [, name, labelText = '', valueText] = m;
    const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : Number(valueText);
    if (valueText !== 'NaN' && Number.isNaN(value)) fail('bad value');
    const family = current ? families.get(current) : undefined;
    if (!family) fail('a sample before any TYPE');
    const suffix = name === family!.name ? '' : name!.startsWith(family!.name) ? name!.slice(family!.name.length) : fail(`sample of another family than ${family!.name}`);
    if (suffix !== '' && !(family!.type === 'histogram' && ['_bucket', '_sum', '_count'].includes(suffix))) fail(`suffix ${suffix} in a ${family!.type}`);
    if (family!.type === 'histogram' && suffix === '') fail('a histogram sample without _bucket, _sum or _count');
    const labels = parseLabels(labelText, fail);
    const { le, ...seriesLabels } = labels;
    const key = JSON.stringify(Object.entries(seriesLabels).sort());
    let series = family!.series.get(key);
    if (!series) family!.series.set(key, (series = { labels: seriesLabels, buckets: {} }));
    if (suffix === '_bucket') {
      if (le === undefined) fail('a bucket without le');
      series.buckets[le!] = value;
    } else if (suffix === '_sum') series.sum = value;
    else if (suffix === '_count') series.count = value;
    else {
      if (series.value !== undefined) fail('the same series twice');
      series.value = value;
    }
  });
  return [...families.values()].map(({ series, ...family }) => {
    for (const s of series.values()) {
      if (family.type === 'histogram') {
        const bounds = Object.keys(s.buckets).sort((a, b) => (a === '+Inf' ? 1 : b === '+Inf' ? -1 : Number(a) - Number(b)));
        const counts = bounds.map((b) => s.buckets[b]!);
        if (counts.some((c, i) => i > 0 && c < counts[i - 1]!)) throw new Error(`${family.name}: buckets are not cumulative`);
        if (s.buckets['+Inf'] !== s.count) throw new Error(`${family.name}: the +Inf bucket is not the count`);
        if (s.sum === undefined) throw new Error(`${family.name}: no _sum`);
        family.metrics.push({ labels: s.labels, buckets: s.buckets, count: s.count, sum: s.sum });
      } else {
        family.metrics.push({ labels: s.labels, value: s.value! });
      }
    }
    return family;
  });
}

/** `a="x",b="y\"z"` into labels, with the format's escapes (\\, \", \n). */
function parseLabels(text: string, fail: (problem: string) => never): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text) ?? fail('malformed labels');
    const [, name, escaped] = m;
    if (name! in labels) fail(`label ${name} twice`);
    labels[name!] = escaped!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    at = re.lastIndex;
  }
  return labels;
}
