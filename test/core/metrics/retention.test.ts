/** prometheus_retention_time: series that stop changing leave the output; live ones stay. */
import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { Retention } from '../../../core/metrics/retention.js';

describe('metrics retention', function () {
  it('drops a series unchanged for longer than the retention time, and keeps one that moves', async function () {
    const registry = new Registry();
    const counter = new Counter({ name: 'test_total', help: 'test', labelNames: ['mount'], registers: [registry] });
    let now = 0;
    const retention = new Retention([counter], 60_000, () => now);
    counter.inc({ mount: 'old/' });
    counter.inc({ mount: 'busy/' });
    await retention.sweep();
    now = 50_000;
    counter.inc({ mount: 'busy/' });
    await retention.sweep();
    now = 70_000;
    await retention.sweep();
    const mounts = async () => (await counter.get()).values.map((v) => v.labels.mount).sort();
    expect(await mounts()).to.deep.equal(['busy/']);
    // A dropped series comes back, from zero, when it moves again.
    counter.inc({ mount: 'old/' });
    expect((await counter.get()).values.find((v) => v.labels.mount === 'old/')?.value).to.equal(1);
    // Later, busy/ has been still for longer than the retention time; old/ only just came back.
    now = 200_000;
    await retention.sweep();
    expect(await mounts()).to.deep.equal(['old/']);
  });

  it('keeps everything when the retention time is 0', async function () {
    const counter = new Counter({ name: 'test_total', help: 'test', registers: [] });
    let now = 0;
    const retention = new Retention([counter], 0, () => now);
    counter.inc();
    await retention.sweep();
    now = 10 ** 9;
    await retention.sweep();
    expect((await counter.get()).values).to.have.length(1);
  });
});
