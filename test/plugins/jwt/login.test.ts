/**
 * JWT logins end to end over HTTP, against a mount at a custom path: each source of keys, what a
 * login gives (alias, group aliases, metadata, token settings), renewal, and the key cache.
 */
import { expect } from 'chai';
import { createJwtBackend } from '../../../plugins/jwt/backend.js';
import { REFETCH_COOLDOWN_MS } from '../../../plugins/jwt/keys.js';
import { ManualClock } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import { sendTo, testPluginContext } from '../../helpers/plugin-context.js';
import { newSigningKey, signToken } from '../../fixtures/identity/oidc-provider.js';
import { startJwtHarness, type JwtHarness } from './harness.js';

describe('JWT login', function () {
  this.timeout(60_000);
  const now = () => Math.floor(Date.now() / 1000);

  describe('with keys from a JWKS URL', () => {
    let h: JwtHarness;
    // Made when the suite starts, not when mocha loads the file: the provider signs with the real time.
    let clock: ManualClock;
    before(async () => {
      clock = new ManualClock();
      h = await startJwtHarness({ clock });
      expect((await h.root.post(`auth/${h.mount}/config`, { jwks_url: `${h.provider.url}/keys`, jwks_ca_pem: h.provider.ca.certPem })).status).to.equal(204);
      const role = {
        role_type: 'jwt',
        user_claim: 'email',
        bound_audiences: ['deployer'],
        groups_claim: '/org/teams',
        claim_mappings: { repository: 'repo', '/org/name': 'org' },
        token_policies: 'deploy,read',
        token_ttl: '20m',
        token_max_ttl: '1h',
      };
      expect((await h.root.post(`auth/${h.mount}/role/deployer`, role)).status).to.equal(204);
    });
    after(() => h.close());

    const claims = () => ({ sub: 'svc-1', email: 'builder@acme.example', aud: 'deployer', repository: 'acme/app', org: { name: 'acme', teams: ['platform', 'release'] } });

    it("answers Vault's login shape: policies, metadata with the role and mapped claims, the token settings", async () => {
      const res = await h.login({ role: 'deployer', jwt: await h.provider.sign(claims()) });
      expect(res.status, res.text).to.equal(200);
      const auth = res.body.auth;
      expect(auth.policies).to.deep.equal(['default', 'deploy', 'read']);
      expect(auth.metadata).to.deep.equal({ role: 'deployer', repo: 'acme/app', org: 'acme' });
      expect(auth.lease_duration).to.equal(1200);
      expect(auth.renewable).to.equal(true);
      const lookup = await new TestClient(h.server.address, auth.client_token).get('auth/token/lookup-self');
      expect(lookup.body.data.meta.role).to.equal('deployer');
      expect(lookup.body.data.path).to.equal(`auth/${h.mount}/login`);
      expect(lookup.body.data.display_name).to.equal(`${h.mount}-builder@acme.example`);
    });

    it('creates the entity alias on the mount\'s accessor, named by the user claim, and reuses it', async () => {
      const first = await h.login({ role: 'deployer', jwt: await h.provider.sign(claims()) });
      const second = await h.login({ role: 'deployer', jwt: await h.provider.sign(claims()) });
      expect(first.body.auth.entity_id).to.be.a('string').and.not.equal('');
      expect(second.body.auth.entity_id).to.equal(first.body.auth.entity_id);
      const accessor = (await h.root.get('sys/auth')).body.data[`${h.mount}/`].accessor as string;
      const entity = await h.root.get(`identity/entity/id/${first.body.auth.entity_id as string}`);
      const alias = (entity.body.data.aliases as { mount_accessor: string; name: string; metadata: Record<string, string> }[])[0]!;
      expect(alias).to.include({ mount_accessor: accessor, name: 'builder@acme.example' });
      expect(alias.metadata).to.deep.equal({ role: 'deployer', repo: 'acme/app', org: 'acme' });
    });

    it('renews while the role exists, with the role\'s TTL as it is now; refuses once it is gone', async () => {
      const login = await h.login({ role: 'deployer', jwt: await h.provider.sign(claims()) });
      const token = new TestClient(h.server.address, login.body.auth.client_token);
      await h.root.post(`auth/${h.mount}/role/deployer`, { token_ttl: '30m' });
      const renewed = await token.post('auth/token/renew-self', {});
      expect(renewed.status, renewed.text).to.equal(200);
      expect(renewed.body.auth.lease_duration).to.equal(1800);
      const saved = (await h.root.get(`auth/${h.mount}/role/deployer`)).body.data;
      await h.root.delete(`auth/${h.mount}/role/deployer`);
      const refused = await token.post('auth/token/renew-self', {});
      expect(refused.status).to.equal(400);
      expect(refused.body.errors[0]).to.contain('role deployer does not exist during renewal');
      await h.root.post(`auth/${h.mount}/role/deployer`, { ...saved, role_type: 'jwt' });
    });

    it('refuses a login from outside the role\'s token_bound_cidrs with a 403', async () => {
      await h.root.post(`auth/${h.mount}/role/fenced`, { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'deployer', token_bound_cidrs: '10.9.0.0/16' });
      const res = await h.login({ role: 'fenced', jwt: await h.provider.sign(claims()) });
      expect(res.status).to.equal(403);
    });

    it('refuses an oidc role, a missing role and a missing token with Vault\'s messages', async () => {
      await h.root.post(`auth/${h.mount}/role/people`, { user_claim: 'sub', allowed_redirect_uris: 'http://localhost:8250/oidc/callback' });
      const jwt = await h.provider.sign(claims());
      expect((await h.login({ role: 'people', jwt })).body.errors).to.deep.equal(['role with oidc role_type is not allowed']);
      expect((await h.login({ jwt })).body.errors).to.deep.equal(['missing role']);
      expect((await h.login({ role: 'nobody', jwt })).body.errors).to.deep.equal(['role "nobody" could not be found']);
      expect((await h.login({ role: 'deployer' })).body.errors).to.deep.equal(['missing token']);
    });

    it('picks up a rotated key: an unknown kid fetches the key set again', async () => {
      const before = h.provider.hitsOf('/keys');
      const next = h.provider.rotate();
      clock.advance(REFETCH_COOLDOWN_MS / 1000 + 1);
      const res = await h.login({ role: 'deployer', jwt: await h.provider.sign(claims(), next) });
      expect(res.status, res.text).to.equal(200);
      expect(h.provider.hitsOf('/keys')).to.equal(before + 1);
    });

    it('fetches the key set at most once per cooldown however many unknown kids clients send', async () => {
      clock.advance(REFETCH_COOLDOWN_MS / 1000 + 1);
      const before = h.provider.hitsOf('/keys');
      for (let i = 0; i < 20; i++) {
        const res = await h.login({ role: 'deployer', jwt: await signToken(newSigningKey(), { ...claims(), iss: h.provider.url, iat: now(), exp: now() + 60 }) });
        expect(res.status).to.equal(400);
      }
      expect(h.provider.hitsOf('/keys') - before).to.equal(1);
      const good = await h.login({ role: 'deployer', jwt: await h.provider.sign(claims()) });
      expect(good.status).to.equal(200);
      expect(h.provider.hitsOf('/keys') - before).to.equal(1);
    });

    it('answers a 502, not a 4xx or a hang, when the key set cannot be fetched', async () => {
      await h.provider.close();
      clock.advance(7200);
      const res = await h.login({ role: 'deployer', jwt: await h.provider.sign(claims()) });
      expect(res.status).to.equal(502);
      expect(res.body.errors[0]).to.contain("could not fetch the provider's signing keys");
      await h.provider.start();
    });
  });

  describe('with keys from OIDC discovery', () => {
    let h: JwtHarness;
    before(async () => {
      h = await startJwtHarness({ mount: 'gitlab' });
      const config = { oidc_discovery_url: h.provider.url, oidc_discovery_ca_pem: h.provider.ca.certPem, bound_issuer: h.provider.url, default_role: 'ci' };
      expect((await h.root.post('auth/gitlab/config', config)).status).to.equal(204);
      await h.root.post('auth/gitlab/role/ci', { role_type: 'jwt', user_claim: 'sub', bound_claims: { project_path: ['acme/app', 'acme/lib'] }, bound_audiences: 'keywarden' });
    });
    after(() => h.close());

    it('logs in with the default role, checking a bound claim against a list of values', async () => {
      const res = await h.login({ jwt: await h.provider.sign({ sub: 'project_path:acme/lib', aud: 'keywarden', project_path: 'acme/lib' }) });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.auth.metadata).to.deep.equal({ role: 'ci' });
      const refused = await h.login({ jwt: await h.provider.sign({ sub: 'x', aud: 'keywarden', project_path: 'acme/other' }) });
      expect(refused.status).to.equal(400);
    });

    it('fetches discovery and keys through the configured CA only: another CA is refused when the config is written', async () => {
      const other = await startJwtHarness({ mount: 'other' });
      try {
        const res = await h.root.post('auth/gitlab/config', { oidc_discovery_url: h.provider.url, oidc_discovery_ca_pem: other.provider.ca.certPem });
        expect(res.status).to.equal(400);
        expect(res.body.errors[0]).to.contain('error checking oidc discovery URL');
      } finally {
        await other.close();
      }
    });
  });

  describe('with local PEM keys', () => {
    let h: JwtHarness;
    const key = newSigningKey('ES256');
    before(async () => {
      h = await startJwtHarness({ mount: 'pem', type: 'oidc' });
      expect((await h.root.post('auth/pem/config', { jwt_validation_pubkeys: [key.publicPem], jwt_supported_algs: 'ES256' })).status).to.equal(204);
      await h.root.post('auth/pem/role/svc', { role_type: 'jwt', user_claim: 'sub', bound_subject: 'svc', bound_audiences: 'api' });
    });
    after(() => h.close());

    it('verifies with the configured key, without fetching anything', async () => {
      const res = await h.login({ role: 'svc', jwt: await signToken(key, { sub: 'svc', aud: 'api', iat: now(), exp: now() + 60 }) });
      expect(res.status, res.text).to.equal(200);
    });

    it('refuses an RS256 token when only ES256 is supported', async () => {
      const res = await h.login({ role: 'svc', jwt: await signToken(newSigningKey('RS256'), { sub: 'svc', aud: 'api', iat: now(), exp: now() + 60 }) });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.contain('token signed with unexpected algorithm');
    });
  });

  it('records the groups claim as the login\'s group aliases', async () => {
    const key = newSigningKey();
    const context = testPluginContext('jwt');
    const backend = createJwtBackend(context);
    const run = (path: string, data: Record<string, unknown>) => sendTo(backend, context, path, data);
    await run('config', { jwt_validation_pubkeys: [key.publicPem] });
    await run('role/r', { role_type: 'jwt', user_claim: 'sub', bound_subject: 'u1', groups_claim: 'groups' });
    const answer = await run('login', { role: 'r', jwt: await signToken(key, { sub: 'u1', groups: ['admins', '', 'dev'], iat: now(), exp: now() + 60 }) });
    expect(answer?.auth?.groupAliases).to.deep.equal([{ name: 'admins' }, { name: 'dev' }]);
    expect(answer?.auth?.alias).to.deep.equal({ name: 'u1', metadata: { role: 'r' } });
  });
});
