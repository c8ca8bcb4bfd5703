/**
 * Identity on a two-node PostgreSQL cluster: groups and entities written through either node (a
 * standby forwards the write), over HTTP and with the CLI, take effect for a token on both nodes
 * at its next request.
 */
import { expect } from 'chai';
import { createTestDatabase } from '../helpers/postgres.js';
import { runCli } from '../helpers/cli.js';
import { TestClient } from '../helpers/http.js';
import { Cluster, type ClusterNode } from './cluster.js';

describe('identity on an HA cluster on PostgreSQL (2 nodes)', function () {
  this.timeout(120_000);
  let cluster: Cluster;
  let active: ClusterNode;
  let standby: ClusterNode;
  const cli = (node: ClusterNode, args: string[]) => runCli(args, { PATH: process.env.PATH, HOME: '/nonexistent', KEYWARDEN_ADDR: node.address, VAULT_TOKEN: cluster.rootToken });

  before(async () => {
    cluster = await Cluster.start(2, await createTestDatabase());
    await cluster.initialize();
    active = await cluster.active();
    standby = cluster.standbys(active)[0]!;
  });
  after(async () => {
    if (cluster) await cluster.stop();
  });

  it('grants a group\'s policies and refuses a disabled entity\'s token on both nodes, whichever node was written to', async () => {
    const root = standby.client;
    expect((await root.post('sys/auth/userpass', { type: 'userpass' })).status).to.equal(204);
    expect((await root.put('sys/policy/ha-mounts', { policy: 'path "sys/mounts" { capabilities = ["read"] }' })).status).to.equal(204);
    expect((await root.post('auth/userpass/users/ha-user', { password: 'ha-password-1' })).status).to.equal(204);
    const login = await new TestClient(standby.address).post('auth/userpass/login/ha-user', { password: 'ha-password-1' });
    expect(login.status, login.text).to.equal(200);
    const token = login.body.auth.client_token as string;
    const entityId = login.body.auth.entity_id as string;
    const statusOn = async (node: ClusterNode) => (await new TestClient(node.address, token).get('sys/mounts')).status;
    expect([await statusOn(active), await statusOn(standby)]).to.deep.equal([403, 403]);

    const grouped = await cli(standby, ['write', '-format=json', 'identity/group', 'name=ha-group', 'policies=ha-mounts', `member_entity_ids=${entityId}`]);
    expect(grouped.code, grouped.stderr).to.equal(0);
    expect([await statusOn(active), await statusOn(standby)]).to.deep.equal([200, 200]);

    expect((await root.post(`identity/entity/id/${entityId}`, { disabled: true })).status).to.equal(204);
    expect([await statusOn(active), await statusOn(standby)]).to.deep.equal([403, 403]);

    const enabled = await cli(active, ['write', `identity/entity/id/${entityId}`, 'disabled=false']);
    expect(enabled.code, enabled.stderr).to.equal(0);
    expect([await statusOn(active), await statusOn(standby)]).to.deep.equal([200, 200]);
  });
});
