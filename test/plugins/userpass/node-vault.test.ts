/**
 * userpass through the npm client node-vault: users written with its generic write, and its
 * userpassLogin, after which node-vault uses the token it got.
 */
import { expect } from 'chai';
import nodeVault from 'node-vault';
import { startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

describe('userpass through node-vault', function () {
  this.timeout(30_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let vault: nodeVault.client;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    vault = nodeVault({ apiVersion: 'v1', endpoint: server.address, token: server.rootToken });
    await vault.enableAuth({ mount_point: 'people', type: 'userpass' });
    await vault.addPolicy({ name: 'reader', rules: 'path "secret/*" { capabilities = ["read"] }' });
    await vault.write('auth/people/users/grace', { password: 'cobol-1959', token_policies: 'reader' });
  });
  after(() => server.close());

  it('logs in with userpassLogin on a custom mount and then uses the token it got', async () => {
    const client = nodeVault({ apiVersion: 'v1', endpoint: server.address });
    const login = await client.userpassLogin({ mount_point: 'people', username: 'grace', password: 'cobol-1959' });
    expect(login.auth.policies).to.deep.equal(['default', 'reader']);
    expect(login.auth.metadata).to.deep.equal({ username: 'grace' });
    expect(client.token).to.equal(login.auth.client_token);
    expect((await client.tokenLookupSelf()).data.display_name).to.equal('people-grace');
  });

  it('refuses a wrong password with Vault\'s 400', async () => {
    const err = await nodeVault({ apiVersion: 'v1', endpoint: server.address })
      .userpassLogin({ mount_point: 'people', username: 'grace', password: 'fortran' })
      .then(() => undefined, (e: { response: { statusCode: number; body: { errors: string[] } } }) => e.response);
    expect(err?.statusCode).to.equal(400);
    expect(err?.body.errors).to.deep.equal(['invalid username or password']);
  });
});
