/**
 * Rekey and root generation in an HA cluster: both run on the active node whichever node is asked,
 * and a standby that was unsealed with the old shares takes the new ones after a seal.
 */
import { expect } from 'chai';
import { createTestDatabase } from '../helpers/postgres.js';
import { Cluster } from './cluster.js';

describe('HA cluster on PostgreSQL: rekey and root generation', function () {
  this.timeout(120_000);
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start(2, await createTestDatabase());
    await cluster.initialize();
  });
  after(async () => {
    await cluster?.stop();
  });

  it('rekeys through a standby; a standby sealed afterwards unseals with the new shares only', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    const init = await standby.client.put('sys/rekey/init', { secret_shares: 2, secret_threshold: 2 });
    expect(init.status, init.text).to.equal(200);
    expect((await active.client.get('sys/rekey/init')).body.nonce).to.equal(init.body.nonce);
    let done = init;
    for (const key of cluster.unsealKeys.slice(0, 2)) done = await standby.client.put('sys/rekey/update', { key, nonce: init.body.nonce });
    expect(done.body.complete, done.text).to.equal(true);
    const newKeys = done.body.keys as string[];

    expect((await standby.client.put('sys/seal')).status).to.equal(204);
    expect((await standby.client.get('sys/seal-status')).body).to.include({ sealed: true, t: 2, n: 2 });
    expect((await standby.client.put('sys/unseal', { key: cluster.unsealKeys[0] })).status).to.equal(400);
    for (const key of newKeys) await standby.client.put('sys/unseal', { key });
    expect((await standby.client.get('sys/seal-status')).body.sealed).to.equal(false);
    cluster.unsealKeys = newKeys;
  });

  it('runs one root generation for the cluster: started through a standby, cancelled through the active node with its nonce', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    const start = await standby.client.put('sys/generate-root/attempt', {}, { token: '' });
    expect(start.status, start.text).to.equal(200);
    const again = await active.client.put('sys/generate-root/attempt', {}, { token: '' });
    expect(again.body.errors[0]).to.equal('root generation already in progress');
    expect((await active.client.delete('sys/generate-root/attempt', { token: '' })).status).to.equal(400);
    expect((await active.client.delete(`sys/generate-root/attempt?nonce=${start.body.nonce}`, { token: '' })).status).to.equal(204);
    expect((await standby.client.get('sys/generate-root/attempt', { token: '' })).body.started).to.equal(false);
  });
});
