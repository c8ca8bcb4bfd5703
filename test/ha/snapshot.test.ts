/**
 * Snapshots in an HA cluster on PostgreSQL: any node saves one; a restore runs on the active node
 * (a standby refuses it rather than forward a body it did not keep), and every other node drops
 * what it had cached, so it answers from the restored store at once.
 */
import { expect } from 'chai';
import { createTestDatabase } from '../helpers/postgres.js';
import { Cluster } from './cluster.js';

describe('HA cluster on PostgreSQL: snapshots', function () {
  this.timeout(120_000);
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start(2, await createTestDatabase());
    await cluster.initialize();
  });
  after(async () => {
    await cluster?.stop();
  });

  it('saves through a standby, restores through the active node, and the standby serves the restored state', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    expect((await active.client.post('sys/mounts/t', { type: 'transit' })).status).to.equal(204);
    expect((await active.client.post('t/keys/before', {})).status).to.be.oneOf([200, 204]);
    expect((await active.client.put('sys/policy/before', { policy: 'path "t/*" { capabilities = ["read"] }' })).status).to.equal(204);
    // The standby has the key cached before the snapshot is taken.
    expect((await standby.client.get('t/keys/before')).status).to.equal(200);

    const saved = await standby.client.get('sys/storage/raft/snapshot');
    expect(saved.status, saved.text).to.equal(200);

    expect((await active.client.post('t/keys/after', {})).status).to.be.oneOf([200, 204]);
    expect((await active.client.post('t/keys/before/rotate', {})).status).to.be.oneOf([200, 204]);
    expect((await active.client.delete('sys/policy/before')).status).to.equal(204);
    expect((await standby.client.get('t/keys/before')).body.data.latest_version).to.equal(2);

    const refused = await standby.client.post('sys/storage/raft/snapshot', undefined, { rawBody: saved.bytes });
    expect(refused.status, refused.text).to.equal(503);
    expect(refused.body.errors[0]).to.match(/standby.*active node/);

    const restored = await active.client.post('sys/storage/raft/snapshot', undefined, { rawBody: saved.bytes });
    expect(restored.status, restored.text).to.equal(204);

    for (const node of [active, standby]) {
      expect((await node.client.get('t/keys/after')).status, node.name).to.equal(404);
      expect((await node.client.get('t/keys/before')).body.data.latest_version, node.name).to.equal(1);
      expect((await node.client.get('sys/policy/before')).status, node.name).to.equal(200);
    }
    expect((await cluster.active()).name).to.equal(active.name);
  });

  it('reads on a standby what is written after a restore that took the keyring back and a rotation that followed it', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    expect((await active.client.post('sys/mounts/notes-kv', { type: 'kv', options: { version: '2' } })).status).to.equal(204);
    const saved = await active.client.get('sys/storage/raft/snapshot');
    expect(saved.status, saved.text).to.equal(200);
    const term = (await standby.client.get('sys/key-status')).body.data.term as number;
    expect((await active.client.post('sys/rotate')).status).to.equal(204);
    expect((await standby.client.get('sys/key-status')).body.data.term).to.equal(term + 1);

    const restored = await active.client.post('sys/storage/raft/snapshot', undefined, { rawBody: saved.bytes });
    expect(restored.status, restored.text).to.equal(204);
    expect((await standby.client.get('sys/key-status')).body.data.term, 'the restored keyring on the standby').to.equal(term);
    // The rotation installs a new key under the number of the one the restore dropped.
    expect((await active.client.post('sys/rotate')).status).to.equal(204);
    expect((await active.client.post('notes-kv/data/after', { data: { v: 'after' } })).status).to.equal(200);
    const read = await standby.client.get('notes-kv/data/after');
    expect(read.body?.data?.data, read.text).to.deep.equal({ v: 'after' });
  });
});
