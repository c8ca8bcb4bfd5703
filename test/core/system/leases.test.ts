/**
 * sys/leases/* over HTTP (https://developer.hashicorp.com/vault/api-docs/system/leases): every
 * token a login mints is a lease under `auth/<mount>/login/<user>/`, looked up, listed and revoked
 * with Vault's paths and answers; revoking `auth/<mount>/` takes every token of that mount.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient, createToken } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

describe('sys/leases', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;
  let anonymous: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    root = server.client;
    anonymous = new TestClient(server.address);
    // Logged-in users may create child tokens, to show revocation reaches them.
    expect((await root.put('sys/policies/acl/child-maker', { policy: 'path "auth/token/create" { capabilities = ["update"] }' })).status).to.equal(204);
    for (const mount of ['people', 'people2']) {
      expect((await root.post(`sys/auth/${mount}`, { type: 'userpass' })).status).to.equal(204);
      for (const user of ['alice', 'bob']) {
        const created = await root.post(`auth/${mount}/users/${user}`, { password: 'correct horse', token_ttl: '1h', token_policies: 'child-maker' });
        expect(created.status).to.equal(204);
      }
    }
  });
  after(() => server.close());

  async function login(mount: string, user: string): Promise<string> {
    const res = await anonymous.post(`auth/${mount}/login/${user}`, { password: 'correct horse' });
    expect(res.status, res.text).to.equal(200);
    return res.body.auth.client_token as string;
  }
  const alive = async (token: string) => (await anonymous.get('auth/token/lookup-self', { token })).status === 200;
  async function leaseOf(mount: string, user: string): Promise<string[]> {
    const res = await root.list(`sys/leases/lookup/auth/${mount}/login/${user}/`);
    return res.status === 404 ? [] : (res.body.data.keys as string[]).map((key) => `auth/${mount}/login/${user}/${key}`);
  }

  it('names a login\'s token as a lease under auth/<mount>/login/<user>/, listed level by level', async () => {
    await login('people', 'alice');
    const top = await root.list('sys/leases/lookup/');
    expect(top.status, top.text).to.equal(200);
    expect(top.body.data.keys).to.include('auth/');
    expect((await root.list('sys/leases/lookup/auth')).body.data.keys).to.include.members(['people/']);
    expect((await root.list('sys/leases/lookup/auth/people/')).body.data.keys).to.deep.equal(['login/']);
    const leases = await leaseOf('people', 'alice');
    expect(leases.length).to.be.greaterThan(0);
    expect(leases[0]).to.match(/^auth\/people\/login\/alice\/[0-9a-f]{64}$/);
  });

  it('looks a lease up with Vault\'s fields: id, issue and expiry times, TTL, renewable', async () => {
    await login('people', 'bob');
    const [id] = await leaseOf('people', 'bob');
    const res = await root.put('sys/leases/lookup', { lease_id: id });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.have.all.keys('id', 'issue_time', 'expire_time', 'last_renewal', 'renewable', 'ttl');
    expect(res.body.data).to.include({ id, renewable: true, last_renewal: null });
    expect(res.body.data.ttl).to.be.within(3590, 3600);
    expect(Date.parse(res.body.data.expire_time) - Date.parse(res.body.data.issue_time)).to.equal(3600_000);
  });

  it('answers 400 for a lookup without lease_id or of a lease that does not exist', async () => {
    const missing = await root.put('sys/leases/lookup', {});
    expect(missing.status).to.equal(400);
    expect(missing.body.errors).to.deep.equal(['lease_id must be specified']);
    const unknown = await root.put('sys/leases/lookup', { lease_id: `auth/people/login/alice/${'0'.repeat(64)}` });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.errors).to.deep.equal(['invalid lease']);
  });

  it('does not take the root token, which never expires, for a lease', async () => {
    const lookup = await root.get('auth/token/lookup-self');
    expect(lookup.body.data.path).to.equal('auth/token/root');
    const listed = await root.list('sys/leases/lookup/auth/token/');
    expect(listed.status === 404 || !(listed.body.data.keys as string[]).includes('root/')).to.equal(true);
  });

  it('revokes a lease by id (sys/leases/revoke, and the older sys/revoke/<id>): the token is gone', async () => {
    const first = await login('people2', 'alice');
    const second = await login('people2', 'alice');
    const ids = await leaseOf('people2', 'alice');
    expect(ids).to.have.length(2);
    expect((await root.put('sys/leases/revoke', { lease_id: ids[0] })).status).to.equal(204);
    expect((await root.put(`sys/revoke/${ids[1]}`)).status).to.equal(204);
    expect(await alive(first)).to.equal(false);
    expect(await alive(second)).to.equal(false);
    expect(await leaseOf('people2', 'alice')).to.deep.equal([]);
    expect((await root.put('sys/leases/revoke', { lease_id: ids[0] })).status, 'an unknown lease').to.equal(204);
  });

  it('answers 202 for a revocation with sync=false, done all the same', async () => {
    const token = await login('people2', 'bob');
    const [id] = await leaseOf('people2', 'bob');
    expect((await root.put('sys/leases/revoke', { lease_id: id, sync: false })).status).to.equal(202);
    expect(await alive(token)).to.equal(false);
  });

  it('revoke-prefix auth/<mount>/ revokes every token the mount minted and their children before it answers, and no other mount\'s', async () => {
    const alice = await login('people', 'alice');
    const bob = await login('people', 'bob');
    const child = await createToken(new TestClient(server.address, alice), { policies: ['default'] });
    const other = await login('people2', 'alice');
    const res = await root.put('sys/leases/revoke-prefix/auth/people/');
    expect(res.status, res.text).to.equal(204);
    expect(await alive(alice)).to.equal(false);
    expect(await alive(bob)).to.equal(false);
    expect(await alive(child), 'a child of a revoked token').to.equal(false);
    expect(await alive(other), 'a token of auth/people2/').to.equal(true);
    expect(await alive(server.rootToken)).to.equal(true);
    expect((await root.list('sys/leases/lookup/auth/people/')).status).to.equal(404);
  });

  it('reads a prefix without a trailing slash as a folder: auth/people2 does not reach auth/people2x/', async () => {
    expect((await root.post('sys/auth/people2x', { type: 'userpass' })).status).to.equal(204);
    await root.post('auth/people2x/users/carol', { password: 'correct horse' });
    const kept = await login('people2x', 'carol');
    const gone = await login('people2', 'bob');
    expect((await root.put('sys/revoke-prefix/auth/people2')).status).to.equal(204);
    expect(await alive(gone)).to.equal(false);
    expect(await alive(kept)).to.equal(true);
  });

  it('revoke-prefix with a lease id revokes that lease only; revoke-force revokes like revoke-prefix', async () => {
    const first = await login('people', 'alice');
    const second = await login('people', 'bob');
    const [aliceLease] = await leaseOf('people', 'alice');
    expect((await root.put(`sys/leases/revoke-prefix/${aliceLease}`)).status).to.equal(204);
    expect(await alive(first)).to.equal(false);
    expect(await alive(second)).to.equal(true);
    expect((await root.put('sys/leases/revoke-force/auth/people/login')).status).to.equal(204);
    expect(await alive(second)).to.equal(false);
  });

  it('needs sudo to list leases and to revoke a prefix; looking up and revoking one lease do not', async () => {
    const rules = [
      'path "sys/leases/lookup/*" { capabilities = ["list", "update"] }',
      'path "sys/leases/lookup" { capabilities = ["update"] }',
      'path "sys/leases/revoke-prefix/*" { capabilities = ["update"] }',
      'path "sys/leases/revoke" { capabilities = ["update"] }',
    ].join('\n');
    expect((await root.put('sys/policies/acl/lease-reader', { policy: rules })).status).to.equal(204);
    const reader = new TestClient(server.address, await createToken(root, { policies: ['lease-reader'] }));
    const token = await login('people', 'alice');
    const [id] = await leaseOf('people', 'alice');
    expect((await reader.list('sys/leases/lookup/auth/')).status).to.equal(403);
    expect((await reader.list('sys/leases/lookup/')).status).to.equal(403);
    expect((await reader.put('sys/leases/revoke-prefix/auth/people/')).status).to.equal(403);
    expect(await alive(token)).to.equal(true);
    expect((await reader.put('sys/leases/lookup', { lease_id: id })).status).to.equal(200);
    expect((await reader.put('sys/leases/revoke', { lease_id: id })).status).to.equal(204);
    expect(await alive(token)).to.equal(false);
  });

  it('refuses to renew a token\'s lease through sys/leases/renew, as Vault does, and says where tokens are renewed', async () => {
    const token = await login('people', 'bob');
    const [id] = await leaseOf('people', 'bob');
    const renewed = await root.put('sys/leases/renew', { lease_id: id, increment: '2h' });
    expect(renewed.status).to.equal(400);
    expect(renewed.body.errors).to.deep.equal(['tokens cannot be renewed through this endpoint']);
    expect((await root.put(`sys/renew/auth/people/login/bob/${'0'.repeat(64)}`)).body.errors).to.deep.equal(['lease not found']);
    expect(await alive(token)).to.equal(true);
  });

  it('counts and lists irrevocable leases (none: a token\'s revocation cannot fail) and names the type it does not count', async () => {
    const count = await root.get('sys/leases/count?type=irrevocable');
    expect(count.status, count.text).to.equal(200);
    expect(count.body.data).to.deep.equal({ lease_count: 0, counts: {} });
    const other = await root.get('sys/leases/count?type=all');
    expect(other.status).to.equal(400);
    expect(other.body.errors[0]).to.match(/^type: /);
    expect((await root.get('sys/leases?type=irrevocable')).body.data.leases).to.deep.equal([]);
  });

  it('tidy answers 202 with a warning that says what it removed', async () => {
    const res = await root.put('sys/leases/tidy');
    expect(res.status).to.equal(202);
    expect(res.body.warnings[0]).to.match(/^Tidy operation done: \d+ expired leases removed\.$/);
  });
});
