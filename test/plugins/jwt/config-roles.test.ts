/** The JWT/OIDC method's config and role paths: what is accepted, what is refused and why, what reads back. */
import { expect } from 'chai';
import { newSigningKey } from '../../fixtures/identity/oidc-provider.js';
import { startJwtHarness, type JwtHarness } from './harness.js';

describe('JWT/OIDC config and roles', function () {
  this.timeout(60_000);
  let h: JwtHarness;
  const pem = newSigningKey().publicPem;
  before(async () => {
    h = await startJwtHarness({ mount: 'jwt-admin' });
  });
  after(() => h.close());
  const config = (body: Record<string, unknown>) => h.root.post('auth/jwt-admin/config', body);
  const role = (name: string, body: Record<string, unknown>) => h.root.post(`auth/jwt-admin/role/${name}`, body);

  describe('config', () => {
    const refusals: [string, Record<string, unknown>, string][] = [
      ['no source of keys', { bound_issuer: 'x' }, "exactly one of 'jwt_validation_pubkeys', 'jwks_url', or 'oidc_discovery_url' must be set"],
      ['two sources of keys', { jwks_url: 'https://a.example/keys', jwt_validation_pubkeys: [pem] }, 'exactly one of'],
      ['a client id without a secret', { oidc_discovery_url: 'https://a.example', oidc_client_id: 'c' }, "both 'oidc_client_id' and 'oidc_client_secret' must be set for OIDC"],
      ['a discovery URL with its well-known part', { oidc_discovery_url: 'https://a.example/.well-known/openid-configuration' }, "'oidc_discovery_url' contains '.well-known' component"],
      ['an HMAC algorithm', { jwt_validation_pubkeys: [pem], jwt_supported_algs: 'RS256,HS256' }, 'invalid jwt_supported_algs: unsupported signing algorithm "HS256"'],
      ['alg none', { jwt_validation_pubkeys: [pem], jwt_supported_algs: 'none' }, 'unsupported signing algorithm "none"'],
      ['a public key that is not one', { jwt_validation_pubkeys: ['-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----'] }, 'error parsing public key 1'],
      ['a CA that is not a certificate', { jwks_url: 'https://a.example/keys', jwks_ca_pem: 'not a pem' }, 'error checking jwks_ca_pem'],
      ['the form_post response mode', { jwt_validation_pubkeys: [pem], oidc_response_mode: 'form_post' }, 'oidc_response_mode "form_post" is not supported here'],
      ['the implicit flow', { jwt_validation_pubkeys: [pem], oidc_response_types: 'id_token' }, 'oidc_response_types "id_token" (the implicit flow) is not supported here'],
      ['provider-specific configuration', { jwt_validation_pubkeys: [pem], provider_config: { provider: 'azure' } }, 'field "provider_config" is not supported here'],
      ['a JWKS URL that is not http(s)', { jwks_url: 'file:///etc/passwd' }, "'jwks_url' must be an http or https URL"],
    ];
    for (const [what, body, error] of refusals) {
      it(`refuses ${what} with a 400 naming it`, async () => {
        const res = await config(body);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.errors[0]).to.contain(error);
      });
    }

    it('refuses a JWKS URL it cannot fetch, or saves it with a warning under skip_jwks_validation', async () => {
      const unreachable = { jwks_url: 'https://127.0.0.1:1/keys' };
      const refused = await config(unreachable);
      expect(refused.status).to.equal(400);
      expect(refused.body.errors[0]).to.contain('error checking jwks URL: could not reach 127.0.0.1:1');
      const saved = await config({ ...unreachable, skip_jwks_validation: true });
      expect(saved.status).to.equal(200);
      expect(saved.body.warnings[0]).to.contain('error checking jwks URL');
    });

    it('reads back without the client secret', async () => {
      const body = { oidc_discovery_url: h.provider.url, oidc_discovery_ca_pem: h.provider.ca.certPem, oidc_client_id: 'id', oidc_client_secret: 's3cret-value', default_role: 'People' };
      expect((await config(body)).status).to.equal(204);
      const read = await h.root.get('auth/jwt-admin/config');
      expect(read.body.data).to.include({ oidc_discovery_url: h.provider.url, oidc_client_id: 'id', default_role: 'people' });
      expect(read.text).not.to.contain('s3cret-value');
      expect(read.body.data).not.to.have.property('oidc_client_secret');
    });
  });

  describe('roles', () => {
    const refusals: [string, Record<string, unknown>, string][] = [
      ['a role without a user claim', { role_type: 'jwt', bound_subject: 's' }, 'a user claim must be defined on the role'],
      ['an oidc role without redirect URIs', { user_claim: 'sub' }, "'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified."],
      ['a jwt role without any bound constraint', { role_type: 'jwt', user_claim: 'sub' }, 'must have at least one bound constraint when creating/updating a role'],
      ['an unknown role type', { role_type: 'saml', user_claim: 'sub' }, "invalid 'role_type': saml"],
      ['an unknown bound_claims_type', { role_type: 'jwt', user_claim: 'sub', bound_subject: 's', bound_claims_type: 'regex' }, "invalid 'bound_claims_type': regex"],
      ['a glob that is not a string', { role_type: 'jwt', user_claim: 'sub', bound_claims_type: 'glob', bound_claims: { n: 5 } }, 'claim is not a string: 5'],
      ['a bound claim that is an object', { role_type: 'jwt', user_claim: 'sub', bound_claims: { n: { a: 1 } } }, 'bound claim "n" is not a string, bool, int or list'],
      ['a mapping onto the reserved "role" key', { role_type: 'jwt', user_claim: 'sub', bound_subject: 's', claim_mappings: { team: 'role' } }, 'metadata key "role" is reserved'],
      ['two claims mapped onto one key', { role_type: 'jwt', user_claim: 'sub', bound_subject: 's', claim_mappings: { a: 'x', b: 'x' } }, 'multiple keys are mapped to metadata key "x"'],
      ['verbose OIDC logging', { user_claim: 'sub', allowed_redirect_uris: 'http://localhost/cb', verbose_oidc_logging: true }, 'field "verbose_oidc_logging" is not supported here'],
      ['the direct callback mode', { user_claim: 'sub', allowed_redirect_uris: 'http://localhost/cb', callback_mode: 'direct' }, 'callback_mode "direct" is not supported here'],
      ['a leeway that is not a duration', { role_type: 'jwt', user_claim: 'sub', bound_subject: 's', clock_skew_leeway: 'soon' }, 'field "clock_skew_leeway"'],
      ['a batch token type with a period', { role_type: 'jwt', user_claim: 'sub', bound_subject: 's', token_type: 'batch', token_period: '1h' }, "'token_type' cannot be 'batch' when set to generate periodic tokens"],
    ];
    for (const [what, body, error] of refusals) {
      it(`refuses ${what} with a 400 naming it`, async () => {
        const res = await role('bad', body);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.errors[0]).to.contain(error);
        expect((await h.root.get('auth/jwt-admin/role/bad')).status).to.equal(404);
      });
    }

    it("reads back Vault's fields; leeways keep -1 (off) and durations; unsent fields keep their values on update", async () => {
      const body = {
        role_type: 'jwt',
        user_claim: 'https://vault/user',
        bound_audiences: '1234',
        bound_claims: { team: ['a', 'b'] },
        clock_skew_leeway: -1,
        expiration_leeway: '5m',
        policies: 'legacy-policy',
      };
      expect((await role('Reader', body)).status).to.equal(204);
      expect((await role('reader', { groups_claim: 'groups' })).status).to.equal(204);
      const read = (await h.root.get('auth/jwt-admin/role/reader')).body.data;
      expect(read).to.include({ role_type: 'jwt', user_claim: 'https://vault/user', groups_claim: 'groups', clock_skew_leeway: -1, expiration_leeway: 300, not_before_leeway: 0, callback_mode: 'client' });
      expect(read.bound_audiences).to.deep.equal(['1234']);
      expect(read.bound_claims).to.deep.equal({ team: ['a', 'b'] });
      expect(read.token_policies).to.deep.equal(['legacy-policy']);
      expect(read.policies).to.deep.equal(['legacy-policy']);
      expect((await h.root.list('auth/jwt-admin/role')).body.data.keys).to.include('reader');
    });
  });
});
