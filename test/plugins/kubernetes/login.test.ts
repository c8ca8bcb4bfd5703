/**
 * Kubernetes logins end to end over HTTP, against a mount at a custom path and the stand-in API
 * server: what passes, every bound that refuses, and an API server that is down, hangs or fails.
 */
import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createKubernetesBackend } from '../../../plugins/kubernetes/backend.js';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import { sendTo, testPluginContext } from '../../helpers/plugin-context.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { StandInKubernetesApi, type StandInServiceAccount } from '../../fixtures/identity/kubernetes-api.js';
import { newSigningKey, signToken } from '../../fixtures/identity/oidc-provider.js';

describe('Kubernetes login', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let root: TestClient;
  let anon: TestClient;
  let api: StandInKubernetesApi;
  let app: StandInServiceAccount;
  let reviewer: string;
  const MOUNT = 'k8s-prod';
  const login = (body: Record<string, unknown>, mount = MOUNT): Promise<TestResponse> => anon.post(`auth/${mount}/login`, body);

  before(async () => {
    api = await new StandInKubernetesApi().start();
    server = await startUnsealedServer();
    root = server.client;
    anon = new TestClient(server.address);
    reviewer = await api.reviewerToken();
    app = api.createServiceAccount('payments', 'api');
    expect((await root.post(`sys/auth/${MOUNT}`, { type: 'kubernetes' })).status).to.equal(204);
    const config = { kubernetes_host: api.url, kubernetes_ca_cert: api.ca.certPem, token_reviewer_jwt: reviewer, disable_local_ca_jwt: true };
    expect((await root.post(`auth/${MOUNT}/config`, config)).status).to.equal(204);
    const role = { bound_service_account_names: 'api,worker-*', bound_service_account_namespaces: 'payments,team-*', audience: 'keywarden', token_policies: 'payments', token_ttl: '15m' };
    expect((await root.post(`auth/${MOUNT}/role/payments`, role)).status).to.equal(204);
  });
  after(async () => {
    await server.close();
    await api.close();
  });

  it("logs a service account in with a projected token, in Vault's login shape", async () => {
    const res = await login({ role: 'payments', jwt: await api.projectedToken(app, { audiences: ['keywarden'] }) });
    expect(res.status, res.text).to.equal(200);
    const auth = res.body.auth;
    expect(auth.policies).to.deep.equal(['default', 'payments']);
    expect(auth.lease_duration).to.equal(900);
    expect(auth.metadata).to.deep.equal({ role: 'payments', service_account_name: 'api', service_account_namespace: 'payments', service_account_uid: app.uid, service_account_secret_name: '' });
    const lookup = await new TestClient(server.address, auth.client_token).get('auth/token/lookup-self');
    expect(lookup.body.data.display_name).to.equal(`${MOUNT}-payments-api`);
    const entity = await root.get(`identity/entity/id/${auth.entity_id as string}`);
    expect(entity.body.data.aliases[0].name).to.equal(app.uid);
    const review = api.reviews.at(-1)!;
    expect(review).to.deep.include({ bearer: reviewer, audiences: ['keywarden'] });
  });

  it('logs in with a legacy token, and names the alias namespace/name with alias_name_source', async () => {
    await root.post(`auth/${MOUNT}/role/legacy`, { bound_service_account_names: 'api', bound_service_account_namespaces: 'payments', alias_name_source: 'serviceaccount_name' });
    const res = await login({ role: 'legacy', jwt: await api.legacyToken(app) });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.auth.metadata.service_account_secret_name).to.equal('api-token-x7k2p');
    const entity = await root.get(`identity/entity/id/${res.body.auth.entity_id as string}`);
    expect(entity.body.data.aliases[0].name).to.equal('payments/api');
  });

  it('matches names and namespaces by glob', async () => {
    const worker = api.createServiceAccount('team-billing', 'worker-7');
    const res = await login({ role: 'payments', jwt: await api.projectedToken(worker, { audiences: ['keywarden'] }) });
    expect(res.status, res.text).to.equal(200);
  });

  const refusals: [string, (a: StandInKubernetesApi) => Promise<string>, string][] = [
    ['a service account name the role does not bind', async (a) => a.projectedToken(a.createServiceAccount('payments', 'intruder'), { audiences: ['keywarden'] }), 'service account name not authorized'],
    ['a namespace the role does not bind', async (a) => a.projectedToken(a.createServiceAccount('default', 'api'), { audiences: ['keywarden'] }), 'namespace not authorized'],
    ['a token for another audience', async (a) => a.projectedToken(app, { audiences: ['someone-else'] }), 'invalid audience (aud) claim'],
    ['an expired token', async (a) => a.projectedToken(app, { audiences: ['keywarden'], lifetime: -3600 }), 'token is expired'],
    [
      'a token the API server does not know (TokenReview: unauthenticated)',
      async (a) => signToken(a.signingKey, { iss: 'https://kubernetes.default.svc.cluster.local', aud: ['keywarden'], 'kubernetes.io': { namespace: 'payments', serviceaccount: { name: 'api', uid: app.uid } } }),
      'lookup failed',
    ],
    [
      'a token whose account was deleted',
      async (a) => {
        const gone = a.createServiceAccount('payments', 'api');
        const token = await a.projectedToken(gone, { audiences: ['keywarden'] });
        a.deleteServiceAccount(gone);
        return token;
      },
      'lookup failed',
    ],
    ['alg none', async () => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.`, 'token signed with unexpected algorithm'],
    ['something that is not a JWT', async () => 'not-a-jwt', 'compact JWS format must have three parts'],
  ];
  for (const [what, token, error] of refusals) {
    it(`refuses ${what} with a 403`, async () => {
      const res = await login({ role: 'payments', jwt: await token(api) });
      expect(res.status, res.text).to.equal(403);
      expect(res.body.errors[0]).to.contain(error);
      expect(res.body.auth).to.equal(undefined);
    });
  }

  it("refuses the client's mistakes with a 400 naming them", async () => {
    expect((await login({ jwt: 'x' })).body.errors).to.deep.equal(['missing role']);
    expect((await login({ role: 'payments' })).body.errors).to.deep.equal(['missing jwt']);
    const unknown = await login({ role: 'nope', jwt: 'x' });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.errors).to.deep.equal(['invalid role name "nope"']);
  });

  it('verifies tokens locally with pem_keys first: a forged one never reaches the API server', async () => {
    await root.post('sys/auth/k8s-pem', { type: 'kubernetes' });
    await root.post('auth/k8s-pem/config', { kubernetes_host: api.url, kubernetes_ca_cert: api.ca.certPem, token_reviewer_jwt: reviewer, pem_keys: [api.signingKey.publicPem] });
    await root.post('auth/k8s-pem/role/r', { bound_service_account_names: 'api', bound_service_account_namespaces: 'payments' });
    const genuine = await login({ role: 'r', jwt: await api.projectedToken(app) }, 'k8s-pem');
    expect(genuine.status, genuine.text).to.equal(200);
    const reviews = api.reviews.length;
    const forged = await signToken(newSigningKey(), { iss: 'x', 'kubernetes.io': { namespace: 'payments', serviceaccount: { name: 'api', uid: app.uid } } });
    const res = await login({ role: 'r', jwt: forged }, 'k8s-pem');
    expect(res.status).to.equal(403);
    expect(res.body.errors[0]).to.contain('error verifying token signature');
    expect(api.reviews.length).to.equal(reviews);
  });

  it('admits the namespaces a label selector picks, reading their labels with the reviewer token', async () => {
    api.namespaces.set('checkout', { team: 'payments' });
    api.namespaces.set('marketing', { team: 'growth' });
    await root.post(`auth/${MOUNT}/role/by-label`, { bound_service_account_names: '*', bound_service_account_namespace_selector: '{"matchLabels":{"team":"payments"}}' });
    const inside = await login({ role: 'by-label', jwt: await api.projectedToken(api.createServiceAccount('checkout', 'web')) });
    expect(inside.status, inside.text).to.equal(200);
    const outside = await login({ role: 'by-label', jwt: await api.projectedToken(api.createServiceAccount('marketing', 'web')) });
    expect(outside.status).to.equal(403);
    expect(outside.body.errors[0]).to.contain('namespace not authorized');
  });

  it('refuses with a 403 when the reviewer may not review tokens', async () => {
    await root.post('sys/auth/k8s-weak', { type: 'kubernetes' });
    const weak = await api.projectedToken(api.createServiceAccount('default', 'not-a-reviewer'));
    await root.post('auth/k8s-weak/config', { kubernetes_host: api.url, kubernetes_ca_cert: api.ca.certPem, token_reviewer_jwt: weak, disable_local_ca_jwt: true });
    await root.post('auth/k8s-weak/role/r', { bound_service_account_names: 'api', bound_service_account_namespaces: 'payments' });
    const res = await login({ role: 'r', jwt: await api.projectedToken(app) }, 'k8s-weak');
    expect(res.status).to.equal(403);
    expect(res.body.errors[0]).to.contain('lookup failed: the API server answered 403');
  });

  describe('when the API server cannot answer', () => {
    const cases: [string, () => Promise<void>, () => void][] = [
      ['is unreachable', async () => void (await root.post(`auth/${MOUNT}/config`, { kubernetes_host: 'https://127.0.0.1:1', kubernetes_ca_cert: api.ca.certPem, token_reviewer_jwt: reviewer, disable_local_ca_jwt: true })), () => undefined],
      ['fails with a 500', async () => void (api.behaviour = 'fail'), () => void (api.behaviour = 'answer')],
      ['trusts another CA than the server\'s', async () => void (await root.post(`auth/${MOUNT}/config`, { kubernetes_host: api.url, kubernetes_ca_cert: new StandInKubernetesApi().ca.certPem, token_reviewer_jwt: reviewer, disable_local_ca_jwt: true })), () => undefined],
    ];
    for (const [what, breakIt, mendIt] of cases) {
      it(`answers a 502 saying so when it ${what}`, async () => {
        await breakIt();
        try {
          const res = await login({ role: 'payments', jwt: await api.projectedToken(app, { audiences: ['keywarden'] }) });
          expect(res.status, res.text).to.equal(502);
          expect(res.body.errors[0]).to.match(/the Kubernetes API server (could not be asked|answered 500)/);
        } finally {
          mendIt();
          await root.post(`auth/${MOUNT}/config`, { kubernetes_host: api.url, kubernetes_ca_cert: api.ca.certPem, token_reviewer_jwt: reviewer, disable_local_ca_jwt: true });
        }
      });
    }

    it('answers a 502 within the timeout, never a hang, when it does not answer', async () => {
      api.behaviour = 'hang';
      const context = testPluginContext('kubernetes');
      const backend = createKubernetesBackend(context, { env: { KUBERNETES_API_TIMEOUT: '300ms' } });
      try {
        await sendTo(backend, context, 'config', { kubernetes_host: api.url, kubernetes_ca_cert: api.ca.certPem, token_reviewer_jwt: reviewer, disable_local_ca_jwt: true });
        await sendTo(backend, context, 'role/r', { bound_service_account_names: 'api', bound_service_account_namespaces: 'payments' });
        const err = await sendTo(backend, context, 'login', { role: 'r', jwt: await api.projectedToken(app) }).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(err?.name).to.equal('UpstreamError');
        expect(err?.message).to.contain('did not answer within 300 ms');
      } finally {
        api.behaviour = 'answer';
      }
    });
  });

  it("uses the pod's own service account token and CA when the configuration names none", async () => {
    const dir = await tempDir('keywarden-pod-');
    try {
      const podToken = await api.reviewerToken();
      await mkdir(path.join(dir.path, 'sa'));
      await writeFile(path.join(dir.path, 'sa', 'token'), `${podToken}\n`);
      await writeFile(path.join(dir.path, 'sa', 'ca.crt'), api.ca.certPem);
      const context = testPluginContext('kubernetes');
      const backend = createKubernetesBackend(context, { serviceAccountDir: path.join(dir.path, 'sa') });
      await sendTo(backend, context, 'config', { kubernetes_host: api.url });
      await sendTo(backend, context, 'role/r', { bound_service_account_names: 'api', bound_service_account_namespaces: 'payments' });
      const answer = await sendTo(backend, context, 'login', { role: 'r', jwt: await api.projectedToken(app) });
      expect(answer?.auth?.metadata).to.include({ service_account_name: 'api' });
      expect(api.reviews.at(-1)!.bearer).to.equal(podToken);
    } finally {
      await dir.remove();
    }
  });

  it('renews while the role exists, and refuses once it is deleted', async () => {
    await root.post(`auth/${MOUNT}/role/short`, { bound_service_account_names: 'api', bound_service_account_namespaces: 'payments', token_ttl: '10m' });
    const res = await login({ role: 'short', jwt: await api.projectedToken(app) });
    const token = new TestClient(server.address, res.body.auth.client_token);
    expect((await token.post('auth/token/renew-self', {})).body.auth.lease_duration).to.equal(600);
    await root.delete(`auth/${MOUNT}/role/short`);
    const refused = await token.post('auth/token/renew-self', {});
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.contain('role short does not exist during renewal');
  });
});
