/** sys/ha-status over HTTP on a node without HA storage. */
import os from 'node:os';
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient, createToken } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

describe('sys/ha-status', function () {
  let server: RunningServer & { client: TestClient };

  before(async () => {
    server = await startUnsealedServer();
  });
  after(() => server.close());

  it('lists a single node as itself, the active node, with no echo', async () => {
    const res = await server.client.get('sys/ha-status');
    expect(res.status).to.equal(200);
    expect(res.body.data.nodes).to.have.length(1);
    expect(res.body.data.nodes[0]).to.deep.include({ hostname: os.hostname(), active_node: true, last_echo: null });
    expect(res.body.data.nodes[0]).to.have.keys('hostname', 'api_address', 'cluster_address', 'active_node', 'last_echo', 'version');
  });

  it('is refused to a token whose policy does not grant it', async () => {
    const caller = new TestClient(server.address, await createToken(server.client, { policies: ['default'] }));
    expect((await caller.get('sys/ha-status')).status).to.equal(403);
  });
});
