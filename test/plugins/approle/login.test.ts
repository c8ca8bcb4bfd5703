/**
 * AppRole logins over HTTP: the token, its metadata and entity alias, and every bound that must
 * refuse — unknown role ID, wrong, used-up or expired secret ID, the CIDR bounds of the role and of
 * the secret ID — checked before a use is spent; use counts spent exactly under concurrent logins;
 * renewal with Vault's checks.
 */
import { expect } from 'chai';
import { ManualClock, startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

/** Logins sent at once with one secret ID. */
const N_CONCURRENT = 40;

describe('approle login', function () {
  this.timeout(60_000);
  const clock = new ManualClock();
  let server: RunningServer & { client: TestClient };
  let root: TestClient;
  let anonymous: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [], clock });
    root = server.client;
    anonymous = new TestClient(server.address);
    expect((await root.post('sys/auth/ci', { type: 'approle' })).status).to.equal(204);
    await root.put('sys/policy/deploy', { policy: 'path "secret/*" { capabilities = ["read"] }' });
  });
  after(() => server.close());

  async function role(name: string, body: Record<string, unknown> = {}): Promise<string> {
    expect((await root.post(`auth/ci/role/${name}`, body)).status).to.be.within(200, 204);
    return (await root.get(`auth/ci/role/${name}/role-id`)).body.data.role_id as string;
  }
  async function secret(name: string, body: Record<string, unknown> = {}): Promise<{ secret_id: string; secret_id_accessor: string }> {
    const res = await root.post(`auth/ci/role/${name}/secret-id`, body);
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  }
  const login = (roleId: string, secretId?: string) => anonymous.post('auth/ci/login', { role_id: roleId, ...(secretId !== undefined ? { secret_id: secretId } : {}) });

  it('answers a token with the role\'s settings, the metadata of the secret ID and the role name', async () => {
    const roleId = await role('deployer', { token_policies: 'deploy', token_ttl: '20m', token_max_ttl: '30m' });
    const sid = await secret('deployer', { metadata: JSON.stringify({ pipeline: 'main' }) });
    const res = await login(roleId, sid.secret_id);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.auth.policies).to.deep.equal(['default', 'deploy']);
    expect(res.body.auth.metadata).to.deep.equal({ pipeline: 'main', role_name: 'deployer' });
    expect(res.body.auth.lease_duration).to.equal(1200);
    const lookup = await root.post('auth/token/lookup', { token: res.body.auth.client_token });
    expect(lookup.body.data.path).to.equal('auth/ci/login');
    expect(lookup.body.data.display_name).to.equal('ci');
  });

  it('makes the role ID the entity alias, on the mount\'s accessor, the same entity every time', async () => {
    const roleId = await role('aliased');
    const first = await login(roleId, (await secret('aliased')).secret_id);
    const second = await login(roleId, (await secret('aliased')).secret_id);
    expect(second.body.auth.entity_id).to.equal(first.body.auth.entity_id);
    const accessor = (await root.get('sys/auth/ci')).body.data.accessor as string;
    const entity = await root.get(`identity/entity/id/${first.body.auth.entity_id}`);
    expect(entity.body.data.aliases.map((a: { mount_accessor: string; name: string }) => [a.mount_accessor, a.name])).to.deep.equal([[accessor, roleId]]);
  });

  it('refuses an unknown role ID and a wrong secret ID with Vault\'s answer', async () => {
    const roleId = await role('strict');
    const unknownRole = await login('not-a-role-id', 'whatever');
    const wrongSecret = await login(roleId, 'not-a-secret-id');
    expect([unknownRole.status, wrongSecret.status]).to.deep.equal([400, 400]);
    expect(unknownRole.body.errors).to.deep.equal(['invalid role or secret ID']);
    expect(wrongSecret.body.errors).to.deep.equal(['invalid role or secret ID']);
    expect((await login('', 'x')).body.errors).to.deep.equal(['missing role_id']);
    expect((await login(roleId)).body.errors).to.deep.equal(['missing secret_id']);
  });

  it('refuses a secret ID of another role', async () => {
    const roleId = await role('mine');
    await role('theirs');
    const res = await login(roleId, (await secret('theirs')).secret_id);
    expect(res.status).to.equal(400);
    expect(res.body.errors).to.deep.equal(['invalid role or secret ID']);
  });

  it('refuses a used-up secret ID, and deletes it with its last use', async () => {
    const roleId = await role('twice', { secret_id_num_uses: 2 });
    const sid = await secret('twice');
    expect((await login(roleId, sid.secret_id)).status).to.equal(200);
    expect((await root.post('auth/ci/role/twice/secret-id/lookup', { secret_id: sid.secret_id })).body.data.secret_id_num_uses).to.equal(1);
    expect((await login(roleId, sid.secret_id)).status).to.equal(200);
    const spent = await login(roleId, sid.secret_id);
    expect(spent.status).to.equal(400);
    expect(spent.body.errors).to.deep.equal(['invalid role or secret ID']);
    expect((await root.list('auth/ci/role/twice/secret-id')).status).to.equal(404);
  });

  it('refuses an expired secret ID at once, before any tidy ran, and removes it', async () => {
    const roleId = await role('brief');
    const sid = await secret('brief', { ttl: '10m' });
    clock.advance(9 * 60);
    expect((await login(roleId, sid.secret_id)).status).to.equal(200);
    clock.advance(60);
    const expired = await login(roleId, sid.secret_id);
    expect(expired.status).to.equal(400);
    expect(expired.body.errors).to.deep.equal(['invalid role or secret ID']);
    // Vault answers a lookup that finds nothing with a 204, as any write without data.
    expect((await root.post('auth/ci/role/brief/secret-id/lookup', { secret_id: sid.secret_id })).status).to.equal(204);
  });

  it('caps a secret ID\'s TTL at the mount\'s max lease TTL', async () => {
    await root.post('sys/auth/ci/tune', { max_lease_ttl: '1h' });
    try {
      await role('capped');
      const res = await root.post('auth/ci/role/capped/secret-id', { ttl: '5h' });
      expect(res.body.data.secret_id_ttl).to.equal(3600);
    } finally {
      await root.post('sys/auth/ci/tune', { max_lease_ttl: '' });
    }
  });

  it('refuses a login from outside the secret ID\'s CIDR blocks without spending a use', async () => {
    const roleId = await role('fenced-secret', { secret_id_num_uses: 1 });
    const sid = await secret('fenced-secret', { cidr_list: '10.0.0.0/8' });
    const res = await login(roleId, sid.secret_id);
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.match(/^source address "[^"]+" unauthorized through CIDR restrictions on the secret ID$/);
    expect((await root.post('auth/ci/role/fenced-secret/secret-id/lookup', { secret_id: sid.secret_id })).body.data.secret_id_num_uses).to.equal(1);
  });

  it('refuses a login from outside the role\'s secret_id_bound_cidrs, with or without a secret ID bound', async () => {
    const bound = await role('fenced-role', { secret_id_bound_cidrs: '10.0.0.0/8' });
    const res = await login(bound, (await secret('fenced-role')).secret_id);
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.match(/unauthorized by CIDR restrictions on the role$/);
    const open = await role('cidr-only', { bind_secret_id: false, secret_id_bound_cidrs: '127.0.0.0/8' });
    expect((await login(open)).status).to.equal(200);
    const closed = await role('cidr-only-far', { bind_secret_id: false, secret_id_bound_cidrs: '10.0.0.0/8' });
    expect((await login(closed)).status).to.equal(400);
  });

  it('binds the token to the secret ID\'s token_bound_cidrs, else the role\'s', async () => {
    const roleId = await role('bound-tokens', { token_bound_cidrs: '127.0.0.0/8' });
    const fromRole = await login(roleId, (await secret('bound-tokens')).secret_id);
    const fromSecret = await login(roleId, (await secret('bound-tokens', { token_bound_cidrs: '127.0.0.1/32' })).secret_id);
    const cidrsOf = async (res: { body: { auth: { client_token: string } } }) => (await root.post('auth/token/lookup', { token: res.body.auth.client_token })).body.data.bound_cidrs;
    expect(await cidrsOf(fromRole)).to.deep.equal(['127.0.0.0/8']);
    expect(await cidrsOf(fromSecret)).to.deep.equal(['127.0.0.1/32']);
  });

  for (const lockout of ['on', 'off'] as const) {
    it(`spends a secret ID with num_uses=N exactly N times under ${N_CONCURRENT} concurrent logins (user lockout ${lockout})`, async () => {
      const name = `race-${lockout}`;
      if (lockout === 'off') await root.post('sys/auth/ci/tune', { user_lockout_config: { lockout_disable: true } });
      try {
        const roleId = await role(name, { secret_id_num_uses: 5 });
        const sid = await secret(name);
        const answers = await Promise.all(Array.from({ length: N_CONCURRENT }, () => login(roleId, sid.secret_id)));
        const statuses = answers.map((a) => a.status);
        expect(statuses.filter((s) => s === 200)).to.have.length(5);
        expect(statuses.filter((s) => s !== 200 && s !== 400 && s !== 403)).to.deep.equal([]);
      } finally {
        if (lockout === 'off') await root.post('sys/auth/ci/tune', { user_lockout_config: { lockout_disable: false } });
      }
    });
  }

  describe('renewal', () => {
    it('renews while the role exists, with the TTLs the role has now', async () => {
      const roleId = await role('renewing', { token_ttl: '1h', token_max_ttl: '4h' });
      const token = (await login(roleId, (await secret('renewing')).secret_id)).body.auth.client_token as string;
      await root.post('auth/ci/role/renewing/token-ttl', { token_ttl: '15m' });
      const renewed = await new TestClient(server.address, token).post('auth/token/renew-self', {});
      expect(renewed.status, renewed.text).to.equal(200);
      expect(renewed.body.auth.lease_duration).to.equal(900);
    });

    it('refuses once the role is deleted', async () => {
      const roleId = await role('fleeting');
      const token = (await login(roleId, (await secret('fleeting')).secret_id)).body.auth.client_token as string;
      await root.delete('auth/ci/role/fleeting');
      const renewed = await new TestClient(server.address, token).post('auth/token/renew-self', {});
      expect(renewed.status).to.equal(400);
      expect(renewed.body.errors).to.deep.equal(['role "fleeting" does not exist during renewal']);
    });
  });
});
