/**
 * The npm client node-vault against a real server, for every path group it has functions for:
 * init, unseal, status, mounts, auth methods, policies (legacy `rules`), tokens, transit, a cloud
 * iam login through its awsIamLogin (the caller signs, as node-vault expects), and JWT and
 * Kubernetes logins through jwtLogin and kubernetesLogin.
 */
import { expect } from 'chai';
import nodeVault from 'node-vault';
import { startTestServer } from '../helpers/server.js';
import type { RunningServer } from '../../core/server.js';
import type { TestClient } from '../helpers/http.js';
import { FakeCloud } from '../fixtures/cloud/server.js';
import { World, signing } from '../fixtures/cloud/world.js';
import { signedLogin } from '../fixtures/cloud/sign.js';
import { StandInOidcProvider } from '../fixtures/identity/oidc-provider.js';
import { StandInKubernetesApi } from '../fixtures/identity/kubernetes-api.js';

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

  it('logs in with the JWT method through jwtLogin, at a custom mount', async () => {
    const provider = await new StandInOidcProvider().start();
    try {
      await vault.enableAuth({ mount_point: 'ci', type: 'jwt' });
      await vault.write('auth/ci/config', { jwks_url: `${provider.url}/keys`, jwks_ca_pem: provider.ca.certPem });
      await vault.write('auth/ci/role/build', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'keywarden', token_policies: 'builder' });
      const anonymous = nodeVault({ apiVersion: 'v1', endpoint: server.address });
      const now = Math.floor(Date.now() / 1000);
      const login = await anonymous.jwtLogin({ mount_point: 'ci', role: 'build', jwt: await provider.sign({ sub: 'pipeline-42', aud: 'keywarden', iat: now, exp: now + 60 }) });
      expect(login.auth.policies).to.deep.equal(['builder', 'default']);
      expect(anonymous.token).to.equal(login.auth.client_token);
      expect((await anonymous.tokenLookupSelf()).data.meta).to.deep.equal({ role: 'build' });
    } finally {
      await provider.close();
    }
  });

  it('logs in with the Kubernetes method through kubernetesLogin, at a custom mount', async () => {
    const cluster = await new StandInKubernetesApi().start();
    try {
      await vault.enableAuth({ mount_point: 'k8s-east', type: 'kubernetes' });
      await vault.write('auth/k8s-east/config', { kubernetes_host: cluster.url, kubernetes_ca_cert: cluster.ca.certPem, token_reviewer_jwt: await cluster.reviewerToken() });
      await vault.write('auth/k8s-east/role/api', { bound_service_account_names: 'api', bound_service_account_namespaces: 'shop', token_policies: 'shop' });
      const anonymous = nodeVault({ apiVersion: 'v1', endpoint: server.address });
      const jwt = await cluster.projectedToken(cluster.createServiceAccount('shop', 'api'));
      const login = await anonymous.kubernetesLogin({ mount_point: 'k8s-east', role: 'api', jwt });
      expect(login.auth.policies).to.deep.equal(['default', 'shop']);
      expect(login.auth.metadata).to.include({ service_account_name: 'api', service_account_namespace: 'shop' });
      expect((await anonymous.tokenLookupSelf()).data.path).to.equal('auth/k8s-east/login');
    } finally {
      await cluster.close();
    }
  });
});
