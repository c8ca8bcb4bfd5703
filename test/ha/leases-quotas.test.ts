/**
 * Leases and rate-limit quotas on a 2-node cluster over one PostgreSQL database: a revoke-prefix
 * sent to the standby revokes the mount's tokens on both nodes before it answers; a quota written
 * through one node applies on the other, and each node counts its own share.
 */
import { expect } from 'chai';
import { createTestDatabase } from '../helpers/postgres.js';
import { TestClient } from '../helpers/http.js';
import { Cluster, type ClusterNode } from './cluster.js';

describe('HA cluster on PostgreSQL (2 nodes): leases and quotas', function () {
  this.timeout(120_000);
  let cluster: Cluster;
  let active: ClusterNode;
  let standby: ClusterNode;

  before(async () => {
    cluster = await Cluster.start(2, await createTestDatabase());
    await cluster.initialize();
    active = await cluster.active();
    standby = cluster.standbys(active)[0]!;
    expect((await active.client.post('sys/auth/people', { type: 'userpass' })).status).to.equal(204);
    expect((await active.client.post('auth/people/users/erin', { password: 'correct horse' })).status).to.equal(204);
    expect((await active.client.post('sys/mounts/notes', { type: 'kv' })).status).to.equal(204);
    expect((await active.client.post('notes/n', { text: 'x' })).status).to.equal(204);
  });
  after(async () => {
    if (cluster) await cluster.stop();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed' && cluster) console.log(cluster.output().slice(-6000));
  });

  async function login(node: ClusterNode): Promise<string> {
    const res = await new TestClient(node.address).post('auth/people/login/erin', { password: 'correct horse' });
    expect(res.status, res.text).to.equal(200);
    return res.body.auth.client_token as string;
  }
  const statusOn = async (node: ClusterNode, token: string) => (await new TestClient(node.address).get('auth/token/lookup-self', { token })).status;

  it('revoke-prefix sent to the standby revokes every token of the mount on both nodes before it answers', async () => {
    const tokens = [await login(active), await login(standby)];
    for (const token of tokens) for (const node of cluster.nodes) expect(await statusOn(node, token), node.name).to.equal(200);
    const listed = await standby.client.list('sys/leases/lookup/auth/people/login/erin/');
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.data.keys).to.have.length(2);
    const revoked = await standby.client.put('sys/leases/revoke-prefix/auth/people/');
    expect(revoked.status, revoked.text).to.equal(204);
    for (const token of tokens) for (const node of cluster.nodes) expect(await statusOn(node, token), node.name).to.equal(403);
    expect((await active.client.list('sys/leases/lookup/auth/people/')).status).to.equal(404);
  });

  it('applies a quota written through one node on the other; each node counts its own requests', async () => {
    const written = await standby.client.post('sys/quotas/rate-limit/notes', { path: 'notes/', rate: 2, interval: '1h' });
    expect(written.status, written.text).to.equal(204);
    expect((await active.client.get('sys/quotas/rate-limit/notes')).body.data.rate).to.equal(2);
    for (const node of cluster.nodes) {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await node.client.get('notes/n', { localAddress: '127.0.0.9' })).status);
      expect(statuses, node.name).to.deep.equal([200, 200, 429]);
    }
    // A write sent to the standby runs on the active node: counted there, its headers relayed to the client.
    expect((await standby.client.post('sys/quotas/config', { enable_rate_limit_response_headers: true })).status).to.equal(204);
    const written2 = await standby.client.post('notes/w', { text: 'y' }, { localAddress: '127.0.0.10' });
    expect(written2.status, written2.text).to.equal(204);
    expect(written2.headers).to.include({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
    expect((await active.client.delete('sys/quotas/rate-limit/notes')).status).to.equal(204);
    expect((await standby.client.get('notes/n', { localAddress: '127.0.0.9' })).status, 'the rule is gone on the standby too').to.equal(200);
  });
});
