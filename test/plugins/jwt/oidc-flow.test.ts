/**
 * The OIDC authorization-code flow over HTTP: oidc/auth_url, the provider's redirect, and
 * oidc/callback, with PKCE, state and nonce, against the stand-in provider.
 */
import { expect } from 'chai';
import https from 'node:https';
import { MAX_PENDING_LOGINS, PENDING_LOGIN_TTL_MS, PendingLogins } from '../../../plugins/jwt/pending-logins.js';
import { ManualClock } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import { startJwtHarness, type JwtHarness } from './harness.js';

/** Follows the authorization URL as a browser would, up to the redirect; answers the redirect's target. */
function authorize(authUrl: string, ca: string): Promise<URL> {
  return new Promise((resolve, reject) => {
    https
      .get(authUrl, { ca, agent: false }, (res) => {
        res.resume();
        const location = res.headers.location;
        if (res.statusCode !== 302 || !location) reject(new Error(`the provider answered ${res.statusCode}`));
        else resolve(new URL(location));
      })
      .on('error', reject);
  });
}

describe('the OIDC authorization-code flow', function () {
  this.timeout(60_000);
  let h: JwtHarness;
  // Made when the suite starts, not when mocha loads the file: the provider signs with the real time.
  let clock: ManualClock;
  const redirect = 'http://localhost:8250/oidc/callback';

  before(async () => {
    clock = new ManualClock();
    h = await startJwtHarness({ mount: 'sso', type: 'oidc', clock });
    const config = { oidc_discovery_url: h.provider.url, oidc_discovery_ca_pem: h.provider.ca.certPem, oidc_client_id: h.provider.client.id, oidc_client_secret: h.provider.client.secret, default_role: 'people' };
    expect((await h.root.post('auth/sso/config', config)).status).to.equal(204);
    const role = { user_claim: 'email', groups_claim: 'groups', allowed_redirect_uris: redirect, oidc_scopes: 'email,profile', token_policies: 'people' };
    expect((await h.root.post('auth/sso/role/people', role)).status).to.equal(204);
  });
  after(() => h.close());
  afterEach(() => {
    h.provider.refuseWith = undefined;
    h.provider.idTokenOverrides = {};
  });

  /** Starts a login; answers the auth URL and what the provider's redirect carries. */
  async function start(redirectUri = 'http://localhost:47123/oidc/callback', clientNonce = 'cli-nonce-1') {
    const res = await h.anon.post('auth/sso/oidc/auth_url', { role: 'people', redirect_uri: redirectUri, client_nonce: clientNonce });
    expect(res.status, res.text).to.equal(200);
    const authUrl = res.body.data.auth_url as string;
    const back = await authorize(authUrl, h.provider.ca.certPem);
    return { authUrl: new URL(authUrl), state: back.searchParams.get('state') ?? '', code: back.searchParams.get('code') ?? '', error: back.searchParams.get('error') ?? '' };
  }
  const callback = (query: Record<string, string>) => h.anon.get(`auth/sso/oidc/callback?${new URLSearchParams(query).toString()}`);

  it('logs a person in: a state, a nonce and an S256 challenge go out; the code comes back for a token', async () => {
    const login = await start();
    const q = login.authUrl.searchParams;
    expect(login.authUrl.origin + login.authUrl.pathname).to.equal(`${h.provider.url}/authorize`);
    expect(q.get('client_id')).to.equal(h.provider.client.id);
    expect(q.get('redirect_uri')).to.equal('http://localhost:47123/oidc/callback');
    expect(q.get('scope')).to.equal('openid email profile');
    expect(q.get('code_challenge_method')).to.equal('S256');
    expect(q.get('state')).to.have.length.at.least(43);
    expect(q.get('nonce')).to.have.length.at.least(43);
    const res = await callback({ state: login.state, code: login.code, client_nonce: 'cli-nonce-1' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.auth.policies).to.deep.equal(['default', 'people']);
    expect(res.body.auth.metadata).to.deep.equal({ role: 'people' });
    const lookup = await new TestClient(h.server.address, res.body.auth.client_token).get('auth/token/lookup-self');
    expect(lookup.body.data.display_name).to.equal('sso-alice@example.com');
  });

  it('completes a state once: the same callback again is refused', async () => {
    const login = await start();
    expect((await callback({ state: login.state, code: login.code, client_nonce: 'cli-nonce-1' })).status).to.equal(200);
    const again = await callback({ state: login.state, code: login.code, client_nonce: 'cli-nonce-1' });
    expect(again.status).to.equal(400);
    expect(again.body.errors).to.deep.equal(['Vault login failed. Expired or missing OAuth state.']);
  });

  it('refuses a callback without the client nonce the login started with', async () => {
    const login = await start();
    const res = await callback({ state: login.state, code: login.code, client_nonce: 'someone-else' });
    expect(res.status).to.equal(400);
    expect(res.body.errors).to.deep.equal(['invalid client_nonce']);
  });

  it("refuses a code intercepted from another login: it does not match this login's PKCE verifier", async () => {
    const victim = await start();
    const attacker = await start();
    const res = await callback({ state: attacker.state, code: victim.code, client_nonce: 'cli-nonce-1' });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.contain('Vault login failed. Error exchanging oidc code: "invalid_grant: PKCE verification failed"');
  });

  it('refuses an ID token whose nonce is not the login\'s', async () => {
    h.provider.idTokenOverrides = { nonce: 'replayed-nonce' };
    const login = await start();
    const res = await callback({ state: login.state, code: login.code, client_nonce: 'cli-nonce-1' });
    expect(res.status).to.equal(400);
    expect(res.body.errors).to.deep.equal(['Vault login failed. Token verification failed. invalid ID token nonce.']);
  });

  it('refuses an ID token issued to another client', async () => {
    h.provider.idTokenOverrides = { aud: 'another-client' };
    const login = await start();
    const res = await callback({ state: login.state, code: login.code, client_nonce: 'cli-nonce-1' });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.contain('invalid audience (aud) claim');
  });

  it("passes on the provider's refusal", async () => {
    h.provider.refuseWith = 'access_denied';
    const login = await start();
    expect(login.error).to.equal('access_denied');
    const res = await callback({ state: login.state, error: 'access_denied', client_nonce: 'cli-nonce-1' });
    expect(res.status).to.equal(400);
    expect(res.body.errors).to.deep.equal(['Vault login failed. access_denied']);
  });

  it('answers an empty auth_url for a redirect URI the role does not allow, and takes a loopback one on any port', async () => {
    const foreign = await h.anon.post('auth/sso/oidc/auth_url', { role: 'people', redirect_uri: 'https://evil.example/oidc/callback' });
    expect(foreign.body.data).to.deep.equal({ auth_url: '' });
    const otherPath = await h.anon.post('auth/sso/oidc/auth_url', { role: 'people', redirect_uri: 'http://localhost:8250/other' });
    expect(otherPath.body.data).to.deep.equal({ auth_url: '' });
    const anyPort = await h.anon.post('auth/sso/oidc/auth_url', { role: 'people', redirect_uri: 'http://localhost:1/oidc/callback' });
    expect(anyPort.body.data.auth_url).to.contain(`${h.provider.url}/authorize?`);
  });

  it('lets a login expire ten minutes after it started', async () => {
    const login = await start();
    clock.advance(PENDING_LOGIN_TTL_MS / 1000 + 1);
    const res = await callback({ state: login.state, code: login.code, client_nonce: 'cli-nonce-1' });
    expect(res.status).to.equal(400);
    expect(res.body.errors).to.deep.equal(['Vault login failed. Expired or missing OAuth state.']);
  });

  it('refuses the flow on a mount configured for JWT logins only', async () => {
    await h.root.post('sys/auth/jwt-only', { type: 'jwt' });
    await h.root.post('auth/jwt-only/config', { jwks_url: `${h.provider.url}/keys`, jwks_ca_pem: h.provider.ca.certPem });
    const res = await h.anon.post('auth/jwt-only/oidc/auth_url', { role: 'x', redirect_uri: redirect });
    expect(res.status).to.equal(400);
    expect(res.body.errors).to.deep.equal(['OIDC login is not configured for this mount']);
  });

  it('keeps at most MAX_PENDING_LOGINS logins in progress, dropping the oldest', () => {
    const pending = new PendingLogins(new ManualClock());
    const login = { role: 'r', redirectUri: redirect, nonce: 'n', codeVerifier: 'v', clientNonce: '' };
    for (let i = 0; i < MAX_PENDING_LOGINS + 5; i++) pending.add(`state-${i}`, login);
    expect(pending.size).to.equal(MAX_PENDING_LOGINS);
    expect(pending.take('state-0')).to.equal(undefined);
    expect(pending.take(`state-${MAX_PENDING_LOGINS + 4}`)).to.include({ role: 'r' });
  });
});
