/**
 * The hardened JWT suite: tokens that are forged, tampered with, or outside the role's bounds,
 * each refused with a 400 naming the problem, no token minted, and the refusal in the audit log.
 */
import { expect } from 'chai';
import { SignJWT } from 'jose';
import { MAX_TOKEN_LENGTH } from '../../../plugins/jwt/validate.js';
import { newSigningKey, signToken } from '../../fixtures/identity/oidc-provider.js';
import { startJwtHarness, type JwtHarness } from './harness.js';

const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

interface Forgery {
  readonly name: string;
  /** The role to log in against (default `ci`). */
  readonly role?: string;
  readonly token: (h: JwtHarness, claims: Record<string, unknown>) => Promise<string>;
  /** A part of the refusal's message. */
  readonly error: string;
}

describe('JWT login refuses forged and out-of-bounds tokens (the hardened suite)', function () {
  this.timeout(60_000);
  let h: JwtHarness;
  const now = () => Math.floor(Date.now() / 1000);
  /** The claims of a token that logs in, for the `ci` role. */
  const good = () => ({ sub: SUBJECT, aud: 'ci', repository: 'acme/app', iat: now(), exp: now() + 300 });

  before(async () => {
    h = await startJwtHarness();
    expect((await h.root.post(`auth/${h.mount}/config`, { jwks_url: `${h.provider.url}/keys`, jwks_ca_pem: h.provider.ca.certPem, bound_issuer: h.provider.url })).status).to.equal(204);
    const ci = { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'ci', bound_subject: SUBJECT, bound_claims_type: 'glob', bound_claims: { repository: 'acme/*' }, token_policies: 'deploy' };
    expect((await h.root.post(`auth/${h.mount}/role/ci`, ci)).status).to.equal(204);
    expect((await h.root.post(`auth/${h.mount}/role/no-audience`, { role_type: 'jwt', user_claim: 'sub', bound_subject: SUBJECT })).status).to.equal(204);
  });
  after(() => h.close());

  it('logs in with the genuine token the forgeries start from', async () => {
    const res = await h.login({ role: 'ci', jwt: await h.provider.sign(good()) });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.auth.policies).to.deep.equal(['default', 'deploy']);
  });

  const forgeries: Forgery[] = [
    { name: 'a wrong audience', token: (p, c) => p.provider.sign({ ...c, aud: 'someone-else' }), error: 'invalid audience (aud) claim' },
    { name: 'an expired token', token: (p, c) => p.provider.sign({ ...c, iat: now() - 7200, exp: now() - 3600 }), error: 'token is expired' },
    { name: 'a token not yet valid', token: (p, c) => p.provider.sign({ ...c, nbf: now() + 3600, exp: now() + 7200 }), error: 'token not yet valid' },
    { name: 'a token issued in the future', token: (p, c) => p.provider.sign({ ...c, iat: now() + 3600, exp: now() + 7200 }), error: 'token not yet valid' },
    { name: 'a token without iat, nbf or exp', token: (p, c) => signToken(p.provider.keys[0]!, { ...c, iss: p.provider.url, iat: undefined, exp: undefined }), error: 'no issued at (iat), not before (nbf), or expiration time (exp) claims' },
    { name: 'a wrong issuer', token: (p, c) => p.provider.sign({ ...c, iss: 'https://evil.example' }), error: 'invalid issuer (iss) claim' },
    {
      name: 'a tampered signature',
      token: async (p, c) => {
        const [header, payload, signature] = (await p.provider.sign(c)).split('.');
        const flipped = Buffer.from(signature!, 'base64url');
        flipped[10] ^= 0x01;
        return `${header}.${payload}.${flipped.toString('base64url')}`;
      },
      error: 'error verifying token signature',
    },
    {
      name: 'a tampered payload under the original signature',
      token: async (p, c) => {
        const [header, , signature] = (await p.provider.sign(c)).split('.');
        return `${header}.${b64({ ...c, iss: p.provider.url, sub: 'repo:acme/app:ref:refs/heads/evil', bound: 'x' })}.${signature}`;
      },
      error: 'error verifying token signature',
    },
    { name: 'alg "none"', token: async (p, c) => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...c, iss: p.provider.url })}.`, error: 'token signed with unexpected algorithm' },
    {
      name: 'HS256 "signed" with the public key as the HMAC secret',
      token: (p, c) =>
        new SignJWT({ ...c, iss: p.provider.url }).setProtectedHeader({ alg: 'HS256', kid: p.provider.keys[0]!.kid }).sign(Buffer.from(p.provider.keys[0]!.publicPem)),
      error: 'token signed with unexpected algorithm',
    },
    { name: 'an unknown kid, signed by a key of its own', token: (p, c) => signToken(newSigningKey(), { ...c, iss: p.provider.url }), error: 'error verifying token signature' },
    {
      name: "the provider's kid on a token signed by another key",
      token: (p, c) => signToken(newSigningKey(), { ...c, iss: p.provider.url }, { kid: p.provider.keys[0]!.kid }),
      error: 'error verifying token signature',
    },
    { name: 'no kid, signed by a key of its own', token: (p, c) => signToken(newSigningKey(), { ...c, iss: p.provider.url }, { kid: null }), error: 'error verifying token signature' },
    { name: 'a wrong bound_subject', token: (p, c) => p.provider.sign({ ...c, sub: 'repo:acme/app:pull_request' }), error: 'invalid subject (sub) claim' },
    { name: 'a bound claim that does not match', token: (p, c) => p.provider.sign({ ...c, repository: 'evil/app' }), error: 'claim "repository" does not match any associated bound claim values' },
    { name: 'a bound claim that is missing', token: (p, c) => p.provider.sign({ ...c, repository: undefined }), error: 'claim "repository" is missing' },
    { name: 'an audience the role does not bind', role: 'no-audience', token: (p, c) => p.provider.sign(c), error: 'audience claim found in JWT but no audiences bound to the role' },
    {
      name: 'an oversized token',
      token: (p, c) => p.provider.sign({ ...c, padding: 'x'.repeat(MAX_TOKEN_LENGTH) }),
      error: `more than the ${MAX_TOKEN_LENGTH} accepted`,
    },
    { name: 'a token of two parts', token: async (p, c) => (await p.provider.sign(c)).split('.').slice(0, 2).join('.'), error: 'compact JWS format must have three parts' },
    { name: 'an encrypted token (five parts)', token: async () => 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..aaaa.bbbb.cccc', error: 'compact JWS format must have three parts' },
    {
      name: 'a critical header parameter it cannot honour',
      token: (p, c) =>
        new SignJWT({ ...c, iss: p.provider.url }).setProtectedHeader({ alg: 'RS256', kid: p.provider.keys[0]!.kid, crit: ['x-unknown'], 'x-unknown': 1 })
          .sign(p.provider.keys[0]!.privateKey, { crit: { 'x-unknown': true } }),
      error: 'error verifying token signature',
    },
    { name: 'a user claim of the wrong type', token: (p, c) => p.provider.sign({ ...c, sub: 42 }), error: 'invalid subject (sub) claim' },
  ];

  for (const forgery of forgeries) {
    it(`refuses ${forgery.name} with a 400, mints no token, and audits the refusal`, async () => {
      const claims = good() as Record<string, unknown>;
      for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
      const token = await forgery.token(h, claims);
      const res = await h.login({ role: forgery.role ?? 'ci', jwt: token });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors[0]).to.contain(forgery.error);
      expect(res.body.auth).to.equal(undefined);
      const hashed = await h.auditHash(res.body.errors[0] as string);
      const audited = (await h.auditEntries()).filter((e) => e.type === 'response' && e.request?.path === `auth/${h.mount}/login` && e.error === hashed);
      expect(audited, 'the refusal in the audit log').to.have.length.greaterThan(0);
      expect(JSON.stringify(await h.auditEntries())).not.to.contain(token.slice(-40));
    });
  }
});
