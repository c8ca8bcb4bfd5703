/**
 * Forwarding between two production nodes on PostgreSQL, seen from the wire between them: the
 * active node's `api_addr` is a proxy that can hold one forwarded request, as someone watching
 * that link would see it. The client talks to the standby from 127.0.0.2, the replays come from
 * 127.0.0.1, and the tokens are bound to 127.0.0.2: only the standby's vouching lets them in.
 */
import { expect } from 'chai';
import { createTestDatabase } from '../helpers/postgres.js';
import { request, type TestResponse } from '../helpers/http.js';
import { Cluster, type ClusterNode } from './cluster.js';
import { RecordingProxy, type CapturedRequest } from './recording-proxy.js';

const NEAR = '127.0.0.2';
const GENUINE = 'path "secret/genuine" { capabilities = ["read"] }';
const EVERYTHING = 'path "*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }';

describe('HA forwarding on PostgreSQL (2 nodes): a forwarded request seen on the wire cannot be reused', function () {
  this.timeout(120_000);
  let cluster: Cluster;
  const proxies: RecordingProxy[] = [];
  let active: ClusterNode;
  let standby: ClusterNode;
  let victim: string;
  let thief: string;

  before(async () => {
    cluster = await Cluster.start(2, await createTestDatabase(), undefined, async (i, address) => {
      proxies[i] = await RecordingProxy.start(address);
      return proxies[i]!.url;
    });
    await cluster.initialize();
    active = await cluster.active();
    standby = cluster.standbys(active)[0]!;
    const root = active.client;
    expect((await root.put('sys/policies/acl/replay-writer', { policy: 'path "sys/policies/acl/replay-*" { capabilities = ["create", "update"] }' })).status).to.equal(204);
    expect((await root.post('auth/token/roles/near', { token_bound_cidrs: [`${NEAR}/32`], allowed_policies: ['replay-writer'] })).status).to.equal(204);
    const tokens: string[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await root.post('auth/token/create/near', { policies: ['replay-writer'] });
      expect(created.status, created.text).to.equal(200);
      tokens.push(created.body.auth.client_token);
    }
    [victim, thief] = tokens as [string, string];
  });

  after(async () => {
    if (cluster) await cluster.stop();
    for (const proxy of proxies) await proxy.close();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && cluster) console.log(cluster.output().slice(-6000));
  });

  /** The victim writes policy `name` through the standby; the forwarded request is held on its way. */
  async function captureForwarded(name: string): Promise<CapturedRequest> {
    const held = proxies[cluster.nodes.indexOf(active)]!.holdNext();
    const answer = await standby.client.put(`sys/policies/acl/${name}`, { policy: GENUINE }, { token: victim, localAddress: NEAR });
    expect(answer.status, `the standby relays the holding proxy's answer: ${answer.text}`).to.equal(502);
    const captured = await held;
    expect(captured.headers['x-keywarden-forwarded-for'], 'the standby vouches for the client address').to.equal(NEAR);
    return captured;
  }

  /** Sends `captured` straight to the active node from 127.0.0.1, with its token or body changed. */
  function replay(captured: CapturedRequest, change: { token?: string; body?: unknown } = {}) {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(captured.headers)) {
      if (value === undefined || name === 'host' || name === 'connection' || name === 'content-length') continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    if (change.token !== undefined) headers['x-vault-token'] = change.token;
    const rawBody = change.body === undefined ? captured.body : JSON.stringify(change.body);
    return request(active.address, captured.method, captured.url, { headers, rawBody });
  }

  function expectRefused(res: TestResponse): void {
    expect(res.status, res.text).to.equal(403);
    expect(res.body.errors[0]).to.match(/X-Keywarden-Forwarded-\* headers do not verify/);
  }

  /** After a refusal nothing was written, and no nonce was spent: the genuine request, delivered late, goes through once. */
  async function expectGenuineDelivered(captured: CapturedRequest, name: string): Promise<void> {
    expect(await policyText(name), 'nothing was written before').to.equal(undefined);
    expect((await replay(captured)).status).to.equal(204);
    expect(await policyText(name)).to.equal(GENUINE);
  }

  const policyText = async (name: string) => {
    const res = await active.client.get(`sys/policies/acl/${name}`);
    return res.status === 200 ? (res.body.data.policy as string) : undefined;
  };

  it('forwards a write from a standby with the client address, which a token bound to it needs', async () => {
    const written = await standby.client.put('sys/policies/acl/replay-plain', { policy: GENUINE }, { token: victim, localAddress: NEAR });
    expect(written.status, written.text).to.equal(204);
    expect(await policyText('replay-plain')).to.equal(GENUINE);
    for (const node of [active, standby]) {
      const elsewhere = await node.client.put('sys/policies/acl/replay-plain', { policy: EVERYTHING }, { token: victim });
      expect(elsewhere.status, `${node.name}: the bound token from another address`).to.equal(403);
    }
  });

  it('refuses a forwarded request replayed with another token, even one bound to the vouched address', async () => {
    const captured = await captureForwarded('replay-token');
    expect((await active.client.put('sys/policies/acl/replay-token', { policy: GENUINE }, { token: thief })).status, "the thief's token from its own address").to.equal(403);
    expectRefused(await replay(captured, { token: thief }));
    await expectGenuineDelivered(captured, 'replay-token');
  });

  it('refuses a forwarded request replayed with another body', async () => {
    const captured = await captureForwarded('replay-body');
    expectRefused(await replay(captured, { body: { policy: EVERYTHING } }));
    await expectGenuineDelivered(captured, 'replay-body');
  });

  it('accepts a forwarded request once: the same nonce again is refused, and the refusal is logged', async () => {
    const captured = await captureForwarded('replay-twice');
    const first = await replay(captured);
    expect(first.status, first.text).to.equal(204);
    expectRefused(await replay(captured));
    // The log line travels through the child's stdout pipe, which may arrive just after the answer.
    const deadline = Date.now() + 5_000;
    while (!active.process!.output().includes('its nonce was used before') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(active.process!.output()).to.contain('its nonce was used before');
  });
});
