/**
 * AppRole through the npm client node-vault, as an application uses it: its approle calls to
 * write a role, read and set the role ID, generate, list, look up and destroy secret IDs, and log
 * in (node-vault then uses the token it got).
 */
import { expect } from 'chai';
import nodeVault from 'node-vault';
import { startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

describe('approle through node-vault', function () {
  this.timeout(30_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let vault: nodeVault.client;
  const mount = { mount_point: 'apps' };

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    vault = nodeVault({ apiVersion: 'v1', endpoint: server.address, token: server.rootToken });
    await vault.enableAuth({ mount_point: 'apps', type: 'approle' });
    await server.client.put('sys/policy/reader', { policy: 'path "secret/*" { capabilities = ["read"] }' });
  });
  after(() => server.close());

  it('writes a role with the deprecated policies field, reads it, and lists it', async () => {
    await vault.addApproleRole({ ...mount, role_name: 'web', policies: 'reader', secret_id_num_uses: 2, token_ttl: 600 });
    const role = await vault.getApproleRole({ ...mount, role_name: 'web' });
    expect(role.data.token_policies).to.deep.equal(['reader']);
    expect(role.data.secret_id_num_uses).to.equal(2);
    expect((await vault.approleRoles(mount)).data.keys).to.deep.equal(['web']);
  });

  it('sets a custom role ID, generates a secret ID with metadata and CIDRs, and logs in with them', async () => {
    await vault.updateApproleRoleId({ ...mount, role_name: 'web', role_id: 'web-role-id' });
    expect((await vault.getApproleRoleId({ ...mount, role_name: 'web' })).data.role_id).to.equal('web-role-id');
    const secret = await vault.getApproleRoleSecret({ ...mount, role_name: 'web', metadata: '{"app":"web"}', cidr_list: ['127.0.0.1/32'] });
    const client = nodeVault({ apiVersion: 'v1', endpoint: server.address });
    const login = await client.approleLogin({ ...mount, role_id: 'web-role-id', secret_id: secret.data.secret_id });
    expect(login.auth.policies).to.deep.equal(['default', 'reader']);
    expect(login.auth.metadata).to.deep.equal({ app: 'web', role_name: 'web' });
    expect(client.token).to.equal(login.auth.client_token);
    expect((await client.tokenLookupSelf()).data.path).to.equal('auth/apps/login');
  });

  it('lists accessors, looks up and destroys secret IDs by value and by accessor', async () => {
    const first = (await vault.getApproleRoleSecret({ ...mount, role_name: 'web' })).data;
    const second = (await vault.getApproleRoleSecret({ ...mount, role_name: 'web' })).data;
    expect((await vault.approleSecretAccessors({ ...mount, role_name: 'web' })).data.keys).to.include.members([first.secret_id_accessor, second.secret_id_accessor]);
    const lookedUp = await vault.approleSecretLookup({ ...mount, role_name: 'web', secret_id: first.secret_id });
    expect(lookedUp.data.secret_id_accessor).to.equal(first.secret_id_accessor);
    expect((await vault.approleSecretAccessorLookup({ ...mount, role_name: 'web', secret_id_accessor: second.secret_id_accessor })).data.secret_id_num_uses).to.equal(2);
    await vault.approleSecretDestroy({ ...mount, role_name: 'web', secret_id: first.secret_id });
    await vault.approleSecretAccessorDestroy({ ...mount, role_name: 'web', secret_id_accessor: second.secret_id_accessor });
    const keys = (await vault.approleSecretAccessors({ ...mount, role_name: 'web' }).catch(() => ({ data: { keys: [] as string[] } }))).data.keys;
    expect(keys).not.to.include.members([first.secret_id_accessor]);
    expect(keys).not.to.include.members([second.secret_id_accessor]);
    const refused = await nodeVault({ apiVersion: 'v1', endpoint: server.address })
      .approleLogin({ ...mount, role_id: 'web-role-id', secret_id: first.secret_id })
      .catch((err: { response: { statusCode: number } }) => err.response.statusCode);
    expect(refused).to.equal(400);
  });

  it('deletes the role', async () => {
    await vault.deleteApproleRole({ ...mount, role_name: 'web' });
    const status = await vault.getApproleRole({ ...mount, role_name: 'web' }).catch((err: { response: { statusCode: number } }) => err.response.statusCode);
    expect(status).to.equal(404);
  });
});
