/**
 * The npm client node-vault against a real server, for every path group it has functions for:
 * init, unseal, status, mounts, auth methods, policies (legacy `rules`), tokens, transit, and a cloud
 * iam login through its awsIamLogin (the caller signs, as node-vault expects).
 */
import { expect } from 'chai';
import nodeVault from 'node-vault';
import { startTestServer } from '../helpers/server.js';
import type { RunningServer } from '../../core/server.js';
import type { TestClient } from '../helpers/http.js';
import { FakeCloud } from '../fixtures/cloud/server.js';
import { World, signing } from '../fixtures/cloud/world.js';
import { signedLogin } from '../fixtures/cloud/sign.js';

describe('node-vault compatibility', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let vault: nodeVault.client;
  let rootToken: string;

  before(async () => {
    server = await startTestServer({ plugins: [] });
    vault = nodeVault({ apiVersion: 'v1', endpoint: server.address });
  });
  after(() => server.close());

  it('initializes, unseals and reports status', async () => {
    expect((await vault.initialized()).initialized).to.equal(false);
    const init = await vault.init({ secret_shares: 3, secret_threshold: 2 });
    expect(init.keys).to.have.length(3);
    rootToken = init.root_token;
    expect((await vault.status()).sealed).to.equal(true);
    await vault.unseal({ key: init.keys[0], reset: false });
    const done = await vault.unseal({ key: init.keys[1], reset: false });
    expect(done.sealed).to.equal(false);
    vault.token = rootToken;
    const health = await vault.health();
    expect(health.initialized).to.equal(true);
    expect((await vault.leader()).ha_enabled).to.equal(false);
  });

  it('mounts and unmounts secrets engines and auth methods', async () => {
    await vault.mount({ mount_point: 'kw-transit', type: 'transit', description: 'compat' });
    expect((await vault.mounts())['kw-transit/'].type).to.equal('transit');
    await vault.enableAuth({ mount_point: 'cloud-compat', type: 'cloud', description: 'compat' });
    expect((await vault.auths())['cloud-compat/'].type).to.equal('cloud');
    await vault.unmount({ mount_point: 'kw-transit' });
    expect(await vault.mounts()).to.not.have.property('kw-transit/');
  });

  it('writes policies with the legacy rules field, reads and lists them', async () => {
    await vault.addPolicy({ name: 'compat', rules: '{"path":{"transit/*":{"policy":"write"}}}' });
    expect((await vault.getPolicy({ name: 'compat' })).rules).to.contain('transit/*');
    expect((await vault.policies()).policies).to.include.members(['compat', 'default', 'root']);
    await vault.removePolicy({ name: 'compat' });
    expect((await vault.policies()).policies).to.not.include('compat');
  });

  it('creates, looks up, renews and revokes tokens', async () => {
    await vault.addPolicy({ name: 'reader', rules: 'path "transit/*" { capabilities = ["read"] }' });
    const created = await vault.tokenCreate({ policies: ['reader'], ttl: '1h', display_name: 'compat' });
    const token = created.auth.client_token as string;
    // node-vault's tokenCreate adopts the new token as the client's own; go back to root.
    expect(vault.token).to.equal(token);
    vault.token = rootToken;
    const lookup = await vault.tokenLookup({ token });
    expect(lookup.data.display_name).to.equal('token-compat');
    expect((await vault.tokenLookupSelf()).data.policies).to.deep.equal(['root']);
    const renewed = await vault.tokenRenew({ token, increment: '30m' });
    expect(renewed.auth.lease_duration).to.equal(1800);
    // node-vault's tokenRenew adopts the renewed token as the client's own; go back to root.
    expect(vault.token).to.equal(token);
    vault.token = rootToken;
    await vault.tokenRevoke({ token });
    try {
      await vault.tokenLookup({ token });
      expect.fail('a revoked token was found');
    } catch (err) {
      expect((err as { response?: { statusCode: number } }).response?.statusCode).to.equal(403);
    }
  });

  it('uses transit through its transit helpers (at transit/)', async () => {
    await vault.mount({ mount_point: 'transit', type: 'transit' });
    await vault.transitCreateKey({ name: 'compat' });
    const plaintext = Buffer.from('compat').toString('base64');
    const encrypted = await vault.encryptData({ name: 'compat', plaintext });
    expect(encrypted.data.ciphertext).to.match(/^vault:v1:/);
    expect((await vault.decryptData({ name: 'compat', ciphertext: encrypted.data.ciphertext })).data.plaintext).to.equal(plaintext);
    await vault.write('transit/keys/compat/rotate', {});
    const rewrapped = await vault.rewrapData({ name: 'compat', ciphertext: encrypted.data.ciphertext });
    expect(rewrapped.data.ciphertext).to.match(/^vault:v2:/);
    expect((await vault.transitListKeys()).data.keys).to.include('compat');
  });

  it('logs in with the cloud method through awsIamLogin', async () => {
    const world = new World();
    const fake = await new FakeCloud(world).start();
    try {
      const serverUser = world.addUser('111122223333', 'keywarden-server');
      const app = world.addUser('111122223333', 'compat-app');
      const serverKey = world.keyFor(serverUser);
      await vault.write('auth/cloud-compat/config/client', {
        access_key: serverKey.accessKeyId,
        secret_key: serverKey.secretAccessKey,
        endpoint: fake.url,
        iam_endpoint: fake.url,
        sts_endpoint: fake.url,
        max_retries: 0,
      });
      await vault.write('auth/cloud-compat/role/compat-app', { auth_type: 'iam', bound_iam_principal_arn: app.arn, token_policies: 'reader' });
      const body = await signedLogin({ credentials: signing(world.keyFor(app)) });
      const anonymous = nodeVault({ apiVersion: 'v1', endpoint: server.address });
      const login = await anonymous.awsIamLogin({ mount_point: 'cloud-compat', role: 'compat-app', ...body });
      expect(login.auth.policies).to.deep.equal(['default', 'reader']);
      expect(anonymous.token).to.equal(login.auth.client_token);
      expect((await anonymous.tokenLookupSelf()).data.path).to.equal('auth/cloud-compat/login');
    } finally {
      await fake.close();
    }
  });
});
