/**
 * AppRole roles over HTTP: Vault's defaults and read shape, role IDs (random or custom, unique),
 * the constraint a role must keep, local_secret_ids fixed at creation, and the paths that read,
 * set and reset one property.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

describe('approle roles', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let root: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    root = server.client;
    expect((await root.post('sys/auth/machines', { type: 'approle' })).status).to.equal(204);
  });
  after(() => server.close());

  it('creates a role with Vault\'s defaults and reads it back without its role ID', async () => {
    expect((await root.post('auth/machines/role/Web', { token_policies: 'default' })).status).to.equal(204);
    const read = await root.get('auth/machines/role/web');
    expect(read.body.data).to.deep.equal({
      bind_secret_id: true,
      secret_id_bound_cidrs: [],
      secret_id_num_uses: 0,
      secret_id_ttl: 0,
      local_secret_ids: false,
      token_bound_cidrs: [],
      token_explicit_max_ttl: 0,
      token_max_ttl: 0,
      token_no_default_policy: false,
      token_num_uses: 0,
      token_period: 0,
      token_policies: ['default'],
      token_ttl: 0,
      token_type: 'default',
    });
    expect((await root.list('auth/machines/role')).body.data.keys).to.include('web');
    const roleId = (await root.get('auth/machines/role/web/role-id')).body.data.role_id as string;
    expect(roleId).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('takes a custom role ID on creation and through role-id, and refuses one another role has', async () => {
    await root.post('auth/machines/role/first', { role_id: 'shared-id' });
    expect((await root.get('auth/machines/role/first/role-id')).body.data.role_id).to.equal('shared-id');
    const taken = await root.post('auth/machines/role/second', { role_id: 'shared-id' });
    expect(taken.status).to.equal(400);
    expect(taken.body.errors).to.deep.equal(['role_id already in use']);
    expect((await root.get('auth/machines/role/second')).status).to.equal(404);
    await root.post('auth/machines/role/second', {});
    const update = await root.post('auth/machines/role/second/role-id', { role_id: 'shared-id' });
    expect(update.body.errors).to.deep.equal(['role_id already in use']);
    expect((await root.post('auth/machines/role/first/role-id', { role_id: 'moved-id' })).status).to.equal(204);
    expect((await root.post('auth/machines/role/second/role-id', { role_id: 'shared-id' })).status).to.equal(204);
    expect((await root.post('auth/machines/role/first/role-id', {})).body.errors).to.deep.equal(['missing role_id']);
  });

  it('refuses a role left without any constraint', async () => {
    const none = await root.post('auth/machines/role/open', { bind_secret_id: false });
    expect(none.status).to.equal(400);
    expect(none.body.errors).to.deep.equal(['at least one constraint should be enabled on the role']);
    expect((await root.post('auth/machines/role/open', { bind_secret_id: false, secret_id_bound_cidrs: '10.0.0.0/8' })).status).to.equal(204);
    const reset = await root.delete('auth/machines/role/open/secret-id-bound-cidrs');
    expect(reset.status).to.equal(400);
    expect((await root.get('auth/machines/role/open/secret-id-bound-cidrs')).body.data.secret_id_bound_cidrs).to.deep.equal(['10.0.0.0/8']);
  });

  it('sets local_secret_ids only when the role is created', async () => {
    await root.post('auth/machines/role/local', { local_secret_ids: true });
    expect((await root.get('auth/machines/role/local/local-secret-ids')).body.data).to.deep.equal({ local_secret_ids: true });
    const change = await root.post('auth/machines/role/local', { local_secret_ids: false });
    expect(change.body.errors).to.deep.equal(['local_secret_ids can only be modified during role creation']);
    expect((await root.post('auth/machines/role/local/local-secret-ids', {})).status).to.equal(405);
  });

  it('refuses what Vault refuses, naming the field', async () => {
    expect((await root.post('auth/machines/role/bad', { secret_id_num_uses: -1 })).body.errors).to.deep.equal(['secret_id_num_uses cannot be negative']);
    expect((await root.post('auth/machines/role/bad', { secret_id_bound_cidrs: '10.0.0.300/8' })).body.errors).to.deep.equal([
      'invalid CIDR block "10.0.0.300/8" in secret_id_bound_cidrs',
    ]);
    expect((await root.post('auth/machines/role/bad', { token_type: 'batch', token_period: '1h' })).body.errors).to.deep.equal([
      "'token_type' cannot be 'batch' when set to generate periodic tokens",
    ]);
    expect((await root.get('auth/machines/role/bad')).status).to.equal(404);
  });

  it('takes the mount tune\'s words for a token type with Vault\'s warning', async () => {
    const res = await root.post('auth/machines/role/typed', { token_type: 'default-service' });
    expect(res.status).to.equal(200);
    expect(res.body.warnings).to.deep.equal(['default-service has no useful meaning; adjusting to service']);
    expect((await root.get('auth/machines/role/typed')).body.data.token_type).to.equal('service');
  });

  it('accepts the deprecated policies, period and bound_cidr_list and shows them as Vault does', async () => {
    await root.post('auth/machines/role/legacy', { policies: 'B,a', period: '1h', bound_cidr_list: '127.0.0.1/32' });
    const data = (await root.get('auth/machines/role/legacy')).body.data;
    expect(data).to.include({ token_period: 3600, period: 3600 });
    expect(data.token_policies).to.deep.equal(['a', 'b']);
    expect(data.policies).to.deep.equal(['a', 'b']);
    expect(data.secret_id_bound_cidrs).to.deep.equal(['127.0.0.1/32']);
    const deprecated = await root.get('auth/machines/role/legacy/bound-cidr-list');
    expect(deprecated.body.data).to.deep.equal({ bound_cidr_list: ['127.0.0.1/32'] });
    expect(deprecated.body.warnings).to.deep.equal(['The "bound_cidr_list" field is deprecated and will be removed. Please use "secret_id_bound_cidrs" instead.']);
  });

  describe('the paths of one property', () => {
    const cases: ReadonlyArray<{ path: string; field: string; value: unknown; read: Record<string, unknown>; reset: Record<string, unknown> }> = [
      { path: 'policies', field: 'token_policies', value: 'x,y', read: { token_policies: ['x', 'y'] }, reset: { token_policies: [] } },
      { path: 'secret-id-num-uses', field: 'secret_id_num_uses', value: 5, read: { secret_id_num_uses: 5 }, reset: { secret_id_num_uses: 0 } },
      { path: 'secret-id-ttl', field: 'secret_id_ttl', value: '10m', read: { secret_id_ttl: 600 }, reset: { secret_id_ttl: 0 } },
      { path: 'period', field: 'token_period', value: '1h', read: { token_period: 3600 }, reset: { token_period: 0 } },
      { path: 'token-num-uses', field: 'token_num_uses', value: 3, read: { token_num_uses: 3 }, reset: { token_num_uses: 0 } },
      { path: 'token-ttl', field: 'token_ttl', value: '5m', read: { token_ttl: 300 }, reset: { token_ttl: 0 } },
      { path: 'token-max-ttl', field: 'token_max_ttl', value: '2h', read: { token_max_ttl: 7200 }, reset: { token_max_ttl: 0 } },
      { path: 'bind-secret-id', field: 'bind_secret_id', value: false, read: { bind_secret_id: false }, reset: { bind_secret_id: true } },
      { path: 'secret-id-bound-cidrs', field: 'secret_id_bound_cidrs', value: '10.1.0.0/16', read: { secret_id_bound_cidrs: ['10.1.0.0/16'] }, reset: { secret_id_bound_cidrs: [] } },
      { path: 'token-bound-cidrs', field: 'token_bound_cidrs', value: '10.2.0.0/16', read: { token_bound_cidrs: ['10.2.0.0/16'] }, reset: { token_bound_cidrs: [] } },
    ];
    for (const c of cases) {
      it(`role/:role_name/${c.path} reads, sets and resets ${c.field}`, async () => {
        // A CIDR keeps a constraint on the role whichever property a case turns off.
        await root.post('auth/machines/role/props', { token_bound_cidrs: '127.0.0.0/8' });
        expect((await root.post(`auth/machines/role/props/${c.path}`, { [c.field]: c.value })).status).to.equal(204);
        expect((await root.get(`auth/machines/role/props/${c.path}`)).body.data).to.deep.include(c.read);
        expect((await root.delete(`auth/machines/role/props/${c.path}`)).status).to.equal(204);
        expect((await root.get(`auth/machines/role/props/${c.path}`)).body.data).to.deep.include(c.reset);
        const missing = await root.post(`auth/machines/role/props/${c.path}`, {});
        expect(missing.status).to.equal(400);
        expect(missing.body.errors[0]).to.match(/^missing /);
        await root.delete('auth/machines/role/props');
      });
    }

    it('answers 404 for a property of a role that does not exist, and a reset of one succeeds', async () => {
      expect((await root.get('auth/machines/role/nobody/secret-id-ttl')).status).to.equal(404);
      const set = await root.post('auth/machines/role/nobody/secret-id-ttl', { secret_id_ttl: '1m' });
      expect(set.status).to.equal(404);
      expect(set.body.errors).to.deep.equal(['role "nobody" does not exist']);
      expect((await root.delete('auth/machines/role/nobody/secret-id-ttl')).status).to.equal(204);
    });
  });

  it('deletes a role with its secret IDs, their accessors and its role ID', async () => {
    const mount = (await root.get('sys/auth/machines')).body.data.uuid as string;
    const keys = async (folder: string) => server.host.barrier.list(`auth/${mount}/${folder}`);
    const before = { secrets: await keys('secret_id/'), accessors: await keys('accessor/') };
    await root.post('auth/machines/role/doomed', { role_id: 'doomed-id' });
    await root.post('auth/machines/role/doomed/secret-id', {});
    await root.post('auth/machines/role/doomed/custom-secret-id', { secret_id: 'doomed-secret' });
    expect(await keys('accessor/')).to.have.length(before.accessors.length + 2);
    expect((await root.delete('auth/machines/role/doomed')).status).to.equal(204);
    expect({ secrets: await keys('secret_id/'), accessors: await keys('accessor/') }).to.deep.equal(before);
    const login = await root.post('auth/machines/login', { role_id: 'doomed-id', secret_id: 'doomed-secret' }, { token: '' });
    expect(login.status).to.equal(400);
    expect(login.body.errors).to.deep.equal(['invalid role or secret ID']);
  });
});
