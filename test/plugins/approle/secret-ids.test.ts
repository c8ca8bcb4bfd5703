/**
 * AppRole secret IDs over HTTP: generated and custom ones, their bounds within the role's, lookup
 * and destroy by secret ID and by accessor, the accessor listing, response wrapping (how Vault
 * recommends delivering a secret ID), and storage that never holds one in clear.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

describe('approle secret IDs', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let root: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    root = server.client;
    expect((await root.post('sys/auth/apps', { type: 'approle' })).status).to.equal(204);
    await root.post('auth/apps/role/svc', { secret_id_num_uses: 10, secret_id_ttl: '1h', secret_id_bound_cidrs: '127.0.0.0/8', token_bound_cidrs: '127.0.0.0/8' });
  });
  after(() => server.close());

  const issue = (body: Record<string, unknown> = {}) => root.post('auth/apps/role/svc/secret-id', body);

  it('generates a secret ID with the role\'s uses and TTL, and an accessor', async () => {
    const res = await issue();
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body.data).sort()).to.deep.equal(['secret_id', 'secret_id_accessor', 'secret_id_num_uses', 'secret_id_ttl']);
    expect(res.body.data).to.include({ secret_id_num_uses: 10, secret_id_ttl: 3600 });
    expect(res.body.data.secret_id).to.match(/^[0-9a-f-]{36}$/);
    expect(res.body.data.secret_id_accessor).to.not.equal(res.body.data.secret_id);
  });

  it('keeps the metadata, CIDR blocks, uses and TTL a generation asks for, within the role\'s', async () => {
    const res = await issue({ metadata: JSON.stringify({ env: 'prod', team: 'web' }), cidr_list: '127.0.0.1/32', token_bound_cidrs: ['127.0.0.1'], num_uses: 2, ttl: '10m' });
    expect(res.status, res.text).to.equal(200);
    const lookup = await root.post('auth/apps/role/svc/secret-id/lookup', { secret_id: res.body.data.secret_id });
    const data = lookup.body.data;
    expect(data).to.include({ secret_id_accessor: res.body.data.secret_id_accessor, secret_id_num_uses: 2, secret_id_ttl: 600 });
    expect(data.metadata).to.deep.equal({ env: 'prod', team: 'web' });
    expect(data.cidr_list).to.deep.equal(['127.0.0.1/32']);
    expect(data.token_bound_cidrs).to.deep.equal(['127.0.0.1']);
    expect(Date.parse(data.expiration_time) - Date.parse(data.creation_time)).to.equal(600_000);
  });

  it('refuses bounds wider than the role\'s', async () => {
    expect((await issue({ num_uses: 11 })).body.errors).to.deep.equal(["num_uses cannot be higher than the role's secret_id_num_uses"]);
    expect((await issue({ num_uses: 0 })).body.errors).to.deep.equal(["num_uses cannot be higher than the role's secret_id_num_uses"]);
    expect((await issue({ ttl: '2h' })).body.errors).to.deep.equal(["ttl cannot be longer than the role's secret_id_ttl"]);
    expect((await issue({ cidr_list: '10.0.0.0/8' })).body.errors).to.deep.equal([
      'cidr_list ["10.0.0.0/8"] is not within the role\'s secret_id_bound_cidrs ["127.0.0.0/8"]',
    ]);
    expect((await issue({ token_bound_cidrs: '0.0.0.0/0' })).status).to.equal(400);
    expect((await issue({ cidr_list: 'nonsense' })).body.errors).to.deep.equal(['invalid CIDR block "nonsense" in cidr_list']);
    expect((await issue({ num_uses: -1 })).body.errors).to.deep.equal(['num_uses cannot be negative']);
  });

  it('reads metadata as Vault does: JSON, base64 JSON or k=v pairs, string values only', async () => {
    const lookup = async (metadata: string) => {
      const secret = (await issue({ metadata })).body.data.secret_id as string;
      return (await root.post('auth/apps/role/svc/secret-id/lookup', { secret_id: secret })).body.data.metadata;
    };
    expect(await lookup(Buffer.from('{"a":"1"}').toString('base64'))).to.deep.equal({ a: '1' });
    expect(await lookup('a=1,b=2')).to.deep.equal({ a: '1', b: '2' });
    const bad = await issue({ metadata: '{"a":1}' });
    expect(bad.status).to.equal(400);
    expect(bad.body.errors).to.deep.equal(['failed to parse metadata: the value of "a" is not a string']);
  });

  it('gives the role a custom secret ID once, and refuses it again', async () => {
    const res = await root.post('auth/apps/role/svc/custom-secret-id', { secret_id: 'pushed-secret-1' });
    expect(res.status).to.equal(200);
    expect(res.body.data.secret_id).to.equal('pushed-secret-1');
    const again = await root.post('auth/apps/role/svc/custom-secret-id', { secret_id: 'pushed-secret-1' });
    expect(again.status).to.equal(400);
    expect(again.body.errors).to.deep.equal(['SecretID is already registered']);
    expect((await root.post('auth/apps/role/svc/custom-secret-id', {})).body.errors).to.deep.equal(['missing secret_id']);
  });

  it('refuses secret IDs for a role that does not bind them, and for a role that does not exist', async () => {
    await root.post('auth/apps/role/cidr-only', { bind_secret_id: false, secret_id_bound_cidrs: '127.0.0.1/32' });
    expect((await root.post('auth/apps/role/cidr-only/secret-id', {})).body.errors).to.deep.equal(['bind_secret_id is not set on the role']);
    const none = await root.post('auth/apps/role/nobody/secret-id', {});
    expect(none.status).to.equal(404);
    expect(none.body.errors).to.deep.equal(['role "nobody" does not exist']);
  });

  it('lists the accessors of a role\'s secret IDs, never the secret IDs', async () => {
    await root.post('auth/apps/role/lister', {});
    const made = [await root.post('auth/apps/role/lister/secret-id', {}), await root.post('auth/apps/role/lister/custom-secret-id', { secret_id: 'listed-custom' })];
    const list = await root.list('auth/apps/role/lister/secret-id');
    expect(list.body.data.keys).to.have.members(made.map((r) => r.body.data.secret_id_accessor));
    expect(list.text).to.not.contain('listed-custom');
  });

  it('looks up and destroys by accessor, only within the role', async () => {
    await root.post('auth/apps/role/other', {});
    const made = (await issue()).body.data;
    const byAccessor = await root.post('auth/apps/role/svc/secret-id-accessor/lookup', { secret_id_accessor: made.secret_id_accessor });
    expect(byAccessor.body.data.secret_id_accessor).to.equal(made.secret_id_accessor);
    // Another role finds nothing by it (Vault's 204 for a lookup without data), and cannot destroy it.
    expect((await root.post('auth/apps/role/other/secret-id-accessor/lookup', { secret_id_accessor: made.secret_id_accessor })).status).to.equal(204);
    const foreign = await root.post('auth/apps/role/other/secret-id-accessor/destroy', { secret_id_accessor: made.secret_id_accessor });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.errors).to.deep.equal(['invalid secret id accessor']);
    expect((await root.post('auth/apps/role/svc/secret-id/lookup', { secret_id: made.secret_id })).status).to.equal(200);
    const unknown = await root.post('auth/apps/role/svc/secret-id-accessor/lookup', { secret_id_accessor: 'no-such-accessor' });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.errors).to.deep.equal(['failed to find accessor entry for secret_id_accessor: "no-such-accessor"']);
    expect((await root.post('auth/apps/role/svc/secret-id-accessor/destroy', { secret_id_accessor: made.secret_id_accessor })).status).to.equal(204);
    // Vault answers a lookup that finds nothing with a 204, as any write without data.
    expect((await root.post('auth/apps/role/svc/secret-id/lookup', { secret_id: made.secret_id })).status).to.equal(204);
  });

  it('destroys by secret ID, with POST or DELETE, and a secret ID the role does not have succeeds too', async () => {
    const made = (await issue()).body.data;
    expect((await root.send('DELETE', 'auth/apps/role/svc/secret-id/destroy', { body: { secret_id: made.secret_id } })).status).to.equal(204);
    expect((await root.post('auth/apps/role/svc/secret-id/lookup', { secret_id: made.secret_id })).body).to.equal(undefined);
    expect((await root.post('auth/apps/role/svc/secret-id/destroy', { secret_id: 'never-issued' })).status).to.equal(204);
  });

  it('wraps a generated secret ID on request; the wrapping token unwraps to it once', async () => {
    const wrapped = await root.post('auth/apps/role/svc/secret-id', {}, { headers: { 'X-Vault-Wrap-TTL': '5m' } });
    expect(wrapped.status).to.equal(200);
    expect(wrapped.body.data).to.equal(null);
    expect(wrapped.body.wrap_info.ttl).to.equal(300);
    expect(wrapped.body.wrap_info.creation_path).to.equal('auth/apps/role/svc/secret-id');
    const unwrapped = await new TestClient(server.address, wrapped.body.wrap_info.token).post('sys/wrapping/unwrap', {});
    expect(unwrapped.status).to.equal(200);
    const roleId = (await root.get('auth/apps/role/svc/role-id')).body.data.role_id;
    const login = await new TestClient(server.address).post('auth/apps/login', { role_id: roleId, secret_id: unwrapped.body.data.secret_id });
    expect(login.status, login.text).to.equal(200);
    expect((await new TestClient(server.address, wrapped.body.wrap_info.token).post('sys/wrapping/unwrap', {})).status).to.not.equal(200);
  });

  it('stores no secret ID in clear: only its HMAC names its entry', async () => {
    await root.post('auth/apps/role/svc/custom-secret-id', { secret_id: 'needle-secret-in-haystack' });
    const mount = (await root.get('sys/auth/apps')).body.data.uuid as string;
    const found: string[] = [];
    const walk = async (prefix: string): Promise<void> => {
      for (const key of await server.host.barrier.list(prefix)) {
        if (key.endsWith('/')) await walk(prefix + key);
        else if (`${prefix}${key}`.includes('needle') || Buffer.from((await server.host.barrier.get(prefix + key))!).toString('utf8').includes('needle')) found.push(prefix + key);
      }
    };
    await walk(`auth/${mount}/`);
    expect(found).to.deep.equal([]);
  });
});
