/**
 * `keywarden login -method=oidc|jwt|kubernetes` as people and workloads run them: the OIDC flow
 * through the CLI's own callback listener and the stand-in provider, and the token logins.
 */
import { expect } from 'chai';
import https from 'node:https';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startJwtHarness, type JwtHarness } from '../../plugins/jwt/harness.js';
import { StandInKubernetesApi } from '../../fixtures/identity/kubernetes-api.js';
import { tempDir } from '../../helpers/server.js';
import { freePort } from '../../helpers/net.js';
import { runCli as cli } from '../../helpers/cli.js';

/** What a browser does with the printed URL: the provider signs the user in and redirects to the CLI's listener, which answers. */
function browse(authUrl: string, ca: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(authUrl, { ca, agent: false }, (res) => {
        res.resume();
        const location = res.headers.location;
        if (!location) return reject(new Error(`the provider answered ${res.statusCode}`));
        void fetch(location).then(async (back) => resolve({ status: back.status, text: await back.text() }), reject);
      })
      .on('error', reject);
  });
}

describe('keywarden login with identity providers', function () {
  this.timeout(60_000);
  let h: JwtHarness;
  let home: { path: string; remove: () => Promise<void> };
  const env = () => ({ PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: h.server.address });

  before(async () => {
    h = await startJwtHarness({ mount: 'corp-sso', type: 'oidc' });
    home = await tempDir();
    const config = { oidc_discovery_url: h.provider.url, oidc_discovery_ca_pem: h.provider.ca.certPem, oidc_client_id: h.provider.client.id, oidc_client_secret: h.provider.client.secret, default_role: 'staff' };
    expect((await h.root.post('auth/corp-sso/config', config)).status).to.equal(204);
    await h.root.post('auth/corp-sso/role/staff', { user_claim: 'email', allowed_redirect_uris: 'http://localhost:8250/oidc/callback', token_policies: 'staff' });
  });
  after(async () => {
    await h.close();
    await home.remove();
  });

  it('-method=oidc: prints the authorization URL, takes the redirect on its own port, and keeps the token', async () => {
    const port = await freePort();
    let browsed: Promise<{ status: number; text: string }> | undefined;
    const run = await cli(['login', '-method=oidc', '-path=corp-sso', '-format=json', `port=${port}`, 'skip_browser=true'], env(), '', (stderr) => {
      const url = /Open the following link in your browser:\s+(\S+)/.exec(stderr)?.[1];
      if (url && !browsed) browsed = browse(url, h.provider.ca.certPem);
    });
    expect(run.code, run.stderr).to.equal(0);
    const page = await browsed!;
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('Signed in');
    const body = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')));
    expect(body.auth.policies).to.deep.equal(['default', 'staff']);
    expect(body.auth.metadata).to.deep.equal({ role: 'staff' });
    expect((await readFile(path.join(home.path, '.keywarden-token'), 'utf8')).trim()).to.equal(body.auth.client_token);
  });

  it('-method=oidc: fails with the provider\'s refusal, and the browser is told', async () => {
    h.provider.refuseWith = 'access_denied';
    try {
      const port = await freePort();
      let browsed: Promise<{ status: number; text: string }> | undefined;
      const run = await cli(['login', '-method=oidc', '-path=corp-sso', `port=${port}`, 'skip_browser=true', 'role=staff'], env(), '', (stderr) => {
        const url = /Open the following link in your browser:\s+(\S+)/.exec(stderr)?.[1];
        if (url && !browsed) browsed = browse(url, h.provider.ca.certPem);
      });
      expect(run.code).to.equal(2);
      expect(run.stderr).to.contain('Error authenticating').and.contain('Vault login failed. access_denied');
      expect((await browsed!).text).to.contain('Sign-in failed');
    } finally {
      h.provider.refuseWith = undefined;
    }
  });

  it('-method=oidc: says so when the role does not allow the callback address', async () => {
    const run = await cli(['login', '-method=oidc', '-path=corp-sso', 'callbackhost=cli.example', 'skip_browser=true'], env());
    expect(run.code).not.to.equal(0);
    expect(run.stderr).to.contain('Unable to authorize role').and.contain('http://cli.example:8250/oidc/callback');
  });

  it('-method=jwt: logs in with a token at a custom path', async () => {
    await h.root.post('sys/auth/pipelines', { type: 'jwt' });
    await h.root.post('auth/pipelines/config', { jwks_url: `${h.provider.url}/keys`, jwks_ca_pem: h.provider.ca.certPem });
    await h.root.post('auth/pipelines/role/deploy', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'keywarden', token_policies: 'deploy' });
    const now = Math.floor(Date.now() / 1000);
    const jwt = await h.provider.sign({ sub: 'pipeline-7', aud: 'keywarden', iat: now, exp: now + 60 });
    const run = await cli(['login', '-method=jwt', '-path=pipelines', '-format=json', '-no-store', 'role=deploy', `jwt=${jwt}`], env());
    expect(run.code, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))).auth.policies).to.deep.equal(['default', 'deploy']);
    const refused = await cli(['login', '-method=jwt', '-path=pipelines', 'role=deploy', `jwt=${jwt.slice(0, -4)}AAAA`], env());
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain('error validating token');
  });

  it('-method=kubernetes: logs in with a service account token read from a file, and needs a role', async () => {
    const cluster = await new StandInKubernetesApi().start();
    try {
      await h.root.post('sys/auth/kubernetes', { type: 'kubernetes' });
      await h.root.post('auth/kubernetes/config', { kubernetes_host: cluster.url, kubernetes_ca_cert: cluster.ca.certPem, token_reviewer_jwt: await cluster.reviewerToken() });
      await h.root.post('auth/kubernetes/role/web', { bound_service_account_names: 'web', bound_service_account_namespaces: 'shop', token_policies: 'web' });
      const file = path.join(home.path, 'token');
      await (await import('node:fs/promises')).writeFile(file, await cluster.projectedToken(cluster.createServiceAccount('shop', 'web')));
      const run = await cli(['login', '-method=kubernetes', '-format=json', '-no-store', 'role=web', `jwt=@${file}`], env());
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))).auth.metadata).to.include({ service_account_name: 'web', role: 'web' });
      const noRole = await cli(['login', '-method=kubernetes', `jwt=@${file}`], env());
      expect(noRole.code).not.to.equal(0);
      expect(noRole.stderr).to.contain("'role' must be supplied");
    } finally {
      await cluster.close();
    }
  });
});
