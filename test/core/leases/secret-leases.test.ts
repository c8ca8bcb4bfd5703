/**
 * The leases of secrets over HTTP (docs/leases.md, https://developer.hashicorp.com/vault/api-docs/system/leases):
 * a secrets engine's answer with a secret gets a lease, which sys/leases/* looks up, lists, renews
 * through the engine (capped by the max TTL) and revokes through it; an expired lease is revoked
 * by the periodic work; an unmount revokes the mount's leases. The engine is the contract fixture
 * plugin, whose secrets record in its storage what was done to them.
 */
import { expect } from 'chai';
import { ManualClock, startUnsealedServer } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { contractPlugin } from '../../fixtures/plugins/contract.js';

describe('secret leases', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let client: TestClient;
  const clock = new ManualClock();

  before(async () => {
    server = await startUnsealedServer({ plugins: [contractPlugin], clock });
    client = server.client;
    expect((await client.post('sys/mounts/engine', { type: 'contract' })).status).to.equal(204);
  });
  after(() => server.close());

  async function issue(name: string, body: Record<string, unknown> = {}, mount = 'engine'): Promise<{ lease_id: string; lease_duration: number; renewable: boolean }> {
    const res = await client.post(`${mount}/leased/${name}`, body);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }
  const stateOf = async (name: string, mount = 'engine') => (await client.get(`${mount}/leased/${name}`)).body.data as { state: string; renewals: number };

  it('answers a secret with a lease named by the request path, its TTL and renewability', async () => {
    const answer = await issue('a', { ttl: '1h' });
    expect(answer.lease_id).to.match(/^engine\/leased\/a\/[A-Za-z0-9]{24}$/);
    expect(answer.lease_duration).to.equal(3600);
    expect(answer.renewable).to.equal(true);
    const lookup = await client.put('sys/leases/lookup', { lease_id: answer.lease_id });
    expect(lookup.status, lookup.text).to.equal(200);
    expect(lookup.body.data).to.include({ id: answer.lease_id, renewable: true, ttl: 3600, last_renewal: null });
  });

  it('gives a secret without a TTL the mount\'s default, and caps a TTL at the mount\'s max', async () => {
    expect((await client.post('sys/mounts/engine/tune', { default_lease_ttl: '2h', max_lease_ttl: '3h' })).status).to.equal(204);
    try {
      expect((await issue('defaulted')).lease_duration).to.equal(7200);
      expect((await issue('capped', { ttl: '10h' })).lease_duration).to.equal(3 * 3600);
    } finally {
      await client.post('sys/mounts/engine/tune', { default_lease_ttl: '768h', max_lease_ttl: '768h' });
    }
  });

  it('lists leases level by level under sys/leases/lookup/, with the tokens\' auth/ beside them', async () => {
    const { lease_id } = await issue('listed');
    const top = await client.list('sys/leases/lookup/');
    expect(top.body.data.keys).to.include('engine/');
    expect((await client.list('sys/leases/lookup/engine')).body.data.keys).to.deep.equal(['leased/']);
    expect((await client.list('sys/leases/lookup/engine/leased/')).body.data.keys).to.include('listed/');
    expect((await client.list('sys/leases/lookup/engine/leased/listed/')).body.data.keys).to.deep.equal([lease_id.split('/').pop()]);
  });

  it('renews through the engine, with the increment asked, and caps it at the lease\'s max TTL with Vault\'s warning', async () => {
    const { lease_id } = await issue('renewed', { ttl: '1h', max_ttl: '2h' });
    clock.advance(600);
    const renewed = await client.put('sys/leases/renew', { lease_id, increment: '30m' });
    expect(renewed.status, renewed.text).to.equal(200);
    expect(renewed.body).to.include({ lease_id, lease_duration: 1800, renewable: true });
    expect(renewed.body.data).to.deep.equal({ renewed: 'renewed', path: 'leased/renewed' });
    const capped = await client.put(`sys/leases/renew/${lease_id}`, { increment: '5h' });
    expect(capped.status, capped.text).to.equal(200);
    expect(capped.body.lease_duration).to.equal(7200 - 600);
    expect(capped.body.warnings[0]).to.contain('exceeded the effective max_ttl');
    expect(await stateOf('renewed')).to.deep.equal({ state: 'live', renewals: 2 });
    const lookup = await client.put('sys/leases/lookup', { lease_id });
    expect(lookup.body.data.last_renewal).to.be.a('string');
  });

  it('refuses to renew a lease the engine issued as not renewable, and an unknown one', async () => {
    const { lease_id, renewable } = await issue('fixed', { renewable: false });
    expect(renewable).to.equal(false);
    const res = await client.put('sys/leases/renew', { lease_id });
    expect(res.status).to.equal(400);
    expect(res.body.errors).to.deep.equal(['lease is not renewable']);
    const unknown = await client.put('sys/leases/renew', { lease_id: 'engine/leased/none/xyz' });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.errors).to.deep.equal(['lease not found']);
  });

  it('revokes through the engine before it answers, and the lease is gone; an unknown lease is no error', async () => {
    const { lease_id } = await issue('revoked');
    expect((await client.put('sys/leases/revoke', { lease_id })).status).to.equal(204);
    expect(await stateOf('revoked')).to.deep.equal({ state: 'revoked', renewals: 0 });
    expect((await client.put('sys/leases/lookup', { lease_id })).status).to.equal(400);
    expect((await client.put('sys/leases/revoke', { lease_id })).status).to.equal(204);
  });

  it('revokes every lease under a prefix, never one of a neighbouring prefix', async () => {
    const a = await issue('p1');
    const b = await issue('p2');
    const neighbour = await issue('p10');
    expect((await client.put('sys/leases/revoke-prefix/engine/leased/p1')).status).to.equal(204);
    expect(await stateOf('p1')).to.include({ state: 'revoked' });
    expect(await stateOf('p10')).to.include({ state: 'live' });
    expect((await client.put('sys/leases/lookup', { lease_id: neighbour.lease_id })).status).to.equal(200);
    expect((await client.put('sys/revoke-prefix/engine/leased/', { sync: false })).status).to.equal(202);
    for (const lease of [a, b, neighbour]) expect((await client.put('sys/leases/lookup', { lease_id: lease.lease_id })).status).to.equal(400);
  });

  it('keeps a lease the engine fails to revoke, and revoke-force drops it', async () => {
    const { lease_id } = await issue('stubborn');
    await client.put('engine/refuse-revocation', { refuse: true });
    try {
      const refused = await client.put('sys/leases/revoke', { lease_id });
      expect(refused.status).to.equal(502);
      expect(refused.body.errors).to.deep.equal(['the secret cannot be revoked now']);
      expect((await client.put('sys/leases/lookup', { lease_id })).status).to.equal(200);
      expect((await client.put('sys/leases/revoke-prefix/engine/leased/stubborn')).status).to.equal(502);
      expect((await client.put('sys/leases/revoke-force/engine/leased/stubborn')).status).to.equal(204);
      expect((await client.put('sys/leases/lookup', { lease_id })).status).to.equal(400);
    } finally {
      await client.put('engine/refuse-revocation', { refuse: false });
    }
  });

  it('revokes an expired lease through the engine in the periodic work, and leaves one not yet due', async () => {
    const due = await issue('expiring', { ttl: '10m' });
    const later = await issue('later', { ttl: '1h' });
    clock.advance(601);
    await server.host.runPeriodic();
    expect(await stateOf('expiring')).to.include({ state: 'revoked' });
    expect((await client.put('sys/leases/lookup', { lease_id: due.lease_id })).status).to.equal(400);
    expect(await stateOf('later')).to.include({ state: 'live' });
    expect((await client.put('sys/leases/lookup', { lease_id: later.lease_id })).status).to.equal(200);
  });

  it('counts and lists a lease whose revocation failed at expiry as irrevocable, until revoke-force', async () => {
    const { lease_id } = await issue('irrevocable', { ttl: '1m' });
    await client.put('engine/refuse-revocation', { refuse: true });
    try {
      clock.advance(61);
      await server.host.runPeriodic();
      const count = await client.get('sys/leases/count?type=irrevocable');
      expect(count.body.data.lease_count).to.equal(1);
      const accessor = (await client.get('sys/mounts/engine')).body.data.accessor as string;
      expect(count.body.data.counts).to.deep.equal({ [accessor]: 1 });
      const listed = await client.get('sys/leases?type=irrevocable');
      expect(listed.body.data.leases).to.deep.equal([{ lease_id, mount_id: accessor, error: 'the secret cannot be revoked now' }]);
    } finally {
      await client.put('engine/refuse-revocation', { refuse: false });
    }
    expect((await client.put(`sys/leases/revoke-force/${lease_id}`)).status).to.equal(204);
    expect((await client.get('sys/leases/count?type=irrevocable')).body.data.lease_count).to.equal(0);
  });

  describe('the leases of a token', () => {
    before(async () => {
      const policy = 'path "engine/*" { capabilities = ["create", "update", "read"] }\npath "auth/token/create" { capabilities = ["update"] }';
      expect((await client.put('sys/policies/acl/issuer', { policy })).status).to.equal(204);
    });
    /** A token made by `parent` (the root token by default) that may issue secrets and make tokens. */
    async function token(body: Record<string, unknown>, parent?: string): Promise<string> {
      const res = await client.post('auth/token/create', { policies: ['issuer'], ...body }, parent ? { token: parent } : {});
      expect(res.status, res.text).to.equal(200);
      return res.body.auth.client_token as string;
    }
    const issueWith = async (name: string, by: string, body: Record<string, unknown> = {}) => {
      const res = await client.post(`engine/leased/${name}`, body, { token: by });
      expect(res.status, res.text).to.equal(200);
      return res.body as { lease_id: string; lease_duration: number };
    };
    const live = async (leaseId: string) => (await client.put('sys/leases/lookup', { lease_id: leaseId })).status === 200;

    it('revokes them through the engine when the token is revoked, with its children\'s, and no other lease', async () => {
      const parent = await token({ ttl: '1h' });
      const child = await token({ ttl: '1h' }, parent);
      const ofParent = await issueWith('tok-parent', parent);
      const ofChild = await issueWith('tok-child', child);
      const ofRoot = await issue('tok-root');
      expect((await client.post('auth/token/revoke', { token: parent })).status).to.equal(204);
      expect(await stateOf('tok-parent')).to.include({ state: 'revoked' });
      expect(await stateOf('tok-child')).to.include({ state: 'revoked' });
      expect(await live(ofParent.lease_id)).to.equal(false);
      expect(await live(ofChild.lease_id)).to.equal(false);
      expect(await stateOf('tok-root')).to.include({ state: 'live' });
      expect(await live(ofRoot.lease_id)).to.equal(true);
    });

    it('revokes them when the token expires, in the periodic work, though the lease had longer to run', async () => {
      const short = await token({ ttl: '10m' });
      const { lease_id } = await issueWith('tok-expiring', short, { ttl: '1h' });
      clock.advance(601);
      await server.host.runPeriodic();
      expect(await stateOf('tok-expiring')).to.include({ state: 'revoked' });
      expect(await live(lease_id)).to.equal(false);
    });

    it('ends a batch token\'s lease no later than the batch token, and revokes it with the batch token\'s parent', async () => {
      const parent = await token({ ttl: '1h' });
      const batch = await token({ type: 'batch', ttl: '5m' }, parent);
      const { lease_id, lease_duration } = await issueWith('tok-batch', batch, { ttl: '1h' });
      expect(lease_duration).to.be.within(299, 300);
      expect((await client.post('auth/token/revoke', { token: parent })).status).to.equal(204);
      expect(await stateOf('tok-batch')).to.include({ state: 'revoked' });
      expect(await live(lease_id)).to.equal(false);
    });

    it('keeps the token revoked when the engine cannot revoke a lease of it: the lease is left irrevocable', async () => {
      const holder = await token({ ttl: '1h' });
      const { lease_id } = await issueWith('tok-stubborn', holder);
      await client.put('engine/refuse-revocation', { refuse: true });
      try {
        expect((await client.post('auth/token/revoke', { token: holder })).status).to.equal(204);
        expect((await client.post('auth/token/lookup', { token: holder })).status).to.equal(403);
        const listed = await client.get('sys/leases?type=irrevocable');
        expect(listed.body.data.leases.map((l: { lease_id: string }) => l.lease_id)).to.include(lease_id);
      } finally {
        await client.put('engine/refuse-revocation', { refuse: false });
      }
      expect((await client.put(`sys/leases/revoke-force/${lease_id}`)).status).to.equal(204);
    });
  });

  it('revokes a mount\'s leases through it when it is disabled', async () => {
    expect((await client.post('sys/mounts/leaving', { type: 'contract' })).status).to.equal(204);
    const { lease_id } = await issue('gone', {}, 'leaving');
    expect((await client.delete('sys/mounts/leaving')).status).to.equal(204);
    expect((await client.put('sys/leases/lookup', { lease_id })).status).to.equal(400);
    expect((await client.list('sys/leases/lookup/leaving/')).status).to.equal(404);
  });

  it('keeps a mount whose leases cannot be revoked, as Vault does', async () => {
    expect((await client.post('sys/mounts/stuck', { type: 'contract' })).status).to.equal(204);
    await issue('held', {}, 'stuck');
    await client.put('stuck/refuse-revocation', { refuse: true });
    const refused = await client.delete('sys/mounts/stuck');
    expect(refused.status).to.equal(502);
    expect((await client.get('sys/mounts/stuck')).status).to.equal(200);
    await client.put('stuck/refuse-revocation', { refuse: false });
    expect((await client.delete('sys/mounts/stuck')).status).to.equal(204);
  });

  it('refuses a lease id that would reach outside the lease tree', async () => {
    for (const lease_id of ['engine/../token', '../x', 'engine//x']) {
      expect((await client.put('sys/leases/lookup', { lease_id })).status, lease_id).to.equal(400);
    }
  });
});
