/** The Kubernetes method's config and role paths: what is accepted, what is refused and why, what reads back. */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { newSigningKey } from '../../fixtures/identity/oidc-provider.js';

describe('Kubernetes config and roles', function () {
  this.timeout(30_000);
  let server: RunningServer & { client: TestClient };
  let root: TestClient;
  const HOST = 'https://192.0.2.10:6443';
  before(async () => {
    server = await startUnsealedServer();
    root = server.client;
    await root.post('sys/auth/kube', { type: 'kubernetes' });
  });
  after(() => server.close());

  it('answers 404 before it is configured, and reads back without the reviewer token', async () => {
    expect((await root.get('auth/kube/config')).status).to.equal(404);
    const res = await root.post('auth/kube/config', { kubernetes_host: HOST, token_reviewer_jwt: 'reviewer.secret.token', issuer: 'bob' });
    expect(res.status, res.text).to.equal(204);
    const read = await root.get('auth/kube/config');
    expect(read.body.data).to.deep.equal({
      kubernetes_host: HOST,
      kubernetes_ca_cert: '',
      pem_keys: [],
      issuer: 'bob',
      disable_iss_validation: true,
      disable_local_ca_jwt: false,
      token_reviewer_jwt_set: true,
    });
    expect(read.text).not.to.contain('reviewer.secret.token');
  });

  it('keeps a CA it cannot read, with a warning saying TLS will fail (as Vault keeps it)', async () => {
    const res = await root.post('auth/kube/config', { kubernetes_host: HOST, kubernetes_ca_cert: '-----BEGIN CERTIFICATE-----\\n.....\\n-----END CERTIFICATE-----' });
    expect(res.status).to.equal(200);
    expect(res.body.warnings[0]).to.contain('kubernetes_ca_cert holds no certificate that can be read');
  });

  const configRefusals: [string, Record<string, unknown>, string][] = [
    ['no host', {}, 'no host provided'],
    ['a host that is not a URL', { kubernetes_host: '192.0.2.10:6443' }, 'is not an http or https URL'],
    ['disable_local_ca_jwt without a CA', { kubernetes_host: HOST, disable_local_ca_jwt: true }, 'kubernetes_ca_cert must be given when disable_local_ca_jwt is true'],
    ['a PEM key that is not one', { kubernetes_host: HOST, pem_keys: ['pem_key'] }, 'pem_keys: key 1 is not a PEM public key or certificate'],
  ];
  for (const [what, body, error] of configRefusals) {
    it(`refuses a config with ${what}`, async () => {
      const res = await root.post('auth/kube/config', body);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors[0]).to.contain(error);
    });
  }

  it('takes PEM public keys', async () => {
    expect((await root.post('auth/kube/config', { kubernetes_host: HOST, pem_keys: [newSigningKey().publicPem, newSigningKey('ES256').publicPem] })).status).to.equal(204);
  });

  const roleRefusals: [string, Record<string, unknown>, string][] = [
    ['no service account names', { bound_service_account_namespaces: 'default' }, '"bound_service_account_names" can not be empty'],
    ['"*" among names', { bound_service_account_names: '*,api', bound_service_account_namespaces: 'default' }, 'can not mix "*" with values'],
    ['no namespaces and no selector', { bound_service_account_names: 'api' }, '"bound_service_account_namespaces" can not be empty if "bound_service_account_namespace_selector" is not set'],
    ['"*" among namespaces', { bound_service_account_names: 'api', bound_service_account_namespaces: 'a,*' }, 'can not mix "*" with values'],
    ['a selector that is not JSON or YAML', { bound_service_account_names: 'api', bound_service_account_namespace_selector: '{{' }, 'invalid "bound_service_account_namespace_selector" configured'],
    [
      'a selector with match expressions',
      { bound_service_account_names: 'api', bound_service_account_namespace_selector: 'matchExpressions:\n  - {key: team, operator: In, values: [a]}' },
      'label selector match expressions are not supported',
    ],
    ['an unknown alias_name_source', { bound_service_account_names: 'api', bound_service_account_namespaces: 'default', alias_name_source: 'pod' }, 'invalid alias_name_source, must be one of: serviceaccount_uid, serviceaccount_name'],
  ];
  for (const [what, body, error] of roleRefusals) {
    it(`refuses a role with ${what}`, async () => {
      const res = await root.post('auth/kube/role/bad', body);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors[0]).to.contain(error);
    });
  }

  it('reads a role back with its defaults, takes a YAML selector, and lists roles', async () => {
    const body = { bound_service_account_names: 'vault-auth', bound_service_account_namespaces: 'default', audience: 'vault.example.com', token_type: 'service' };
    expect((await root.post('auth/kube/role/test-role', body)).status).to.equal(204);
    const read = (await root.get('auth/kube/role/test-role')).body.data;
    expect(read).to.include({ audience: 'vault.example.com', alias_name_source: 'serviceaccount_uid', token_type: 'service', bound_service_account_namespace_selector: '' });
    expect(read.bound_service_account_names).to.deep.equal(['vault-auth']);
    expect((await root.post('auth/kube/role/by-label', { bound_service_account_names: '*', bound_service_account_namespace_selector: 'matchLabels:\n  team: payments\n' })).status).to.equal(204);
    expect((await root.list('auth/kube/role')).body.data.keys).to.deep.equal(['by-label', 'test-role']);
    expect((await root.delete('auth/kube/role/test-role')).status).to.equal(204);
    expect((await root.get('auth/kube/role/test-role')).status).to.equal(404);
  });
});
