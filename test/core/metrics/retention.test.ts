/** prometheus_retention_time: series that stop changing leave the output; live ones stay. */
import { expect } from 'chai';
import { Retention } from '../../../core/metrics/retention.js';
import { FastCounter, FastHistogram } from '../../../core/metrics/series.js';

describe('metrics retention', function () {
  it('hides a series unchanged for longer than the retention time, keeps one that moves, and shows it again from zero', async function () {
    const counter = new FastCounter('test_total', 'test');
    const old = counter.series({ mount: 'old/' });
    const busy = counter.series({ mount: 'busy/' });
    let now = 0;
    const retention = new Retention([counter], 60_000, () => now);
    FastCounter.inc(old);
    FastCounter.inc(busy);
    await retention.sweep();
    now = 50_000;
    FastCounter.inc(busy);
    await retention.sweep();
    now = 70_000;
    await retention.sweep();
    const shown = async () => Object.fromEntries((await counter.get()).values.map((v) => [v.labels.mount, v.value]));
    expect(await shown()).to.deep.equal({ 'busy/': 2 });
    FastCounter.inc(old);
    expect(await shown()).to.deep.equal({ 'busy/': 2, 'old/': 1 });
    // Later, busy/ has been still for longer than the retention time; old/ only just came back.
    now = 200_000;
    await retention.sweep();
    expect(await shown()).to.deep.equal({ 'old/': 1 });
  });

  it('hides a histogram series whole, buckets, sum and count', async function () {
    const histogram = new FastHistogram('test_seconds', 'test', [0.1, 1]);
    histogram.observe(histogram.series({ mount: 'a/' }), 0.5);
    let now = 0;
    const retention = new Retention([histogram], 1_000, () => now);
    await retention.sweep();
    expect((await histogram.get()).values).to.have.length(5);
    now = 2_000;
    await retention.sweep();
    expect((await histogram.get()).values).to.deep.equal([]);
  });

  it('keeps everything when the retention time is 0', async function () {
    const counter = new FastCounter('test_total', 'test');
    FastCounter.inc(counter.series({}));
    let now = 0;
    const retention = new Retention([counter], 0, () => now);
    await retention.sweep();
    now = 10 ** 9;
    await retention.sweep();
    expect((await counter.get()).values).to.have.length(1);
  });
});
