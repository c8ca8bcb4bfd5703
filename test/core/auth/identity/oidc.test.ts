/**
 * Identity tokens over HTTP: named keys, roles, a signed JWT for the caller's entity that verifies
 * against the served key set (and that Keywarden's own JWT auth method accepts), introspection and
 * key rotation.
 */
import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { ManualClock, startUnsealedServer } from '../../../helpers/server.js';
import { TestClient } from '../../../helpers/http.js';
import type { RunningServer } from '../../../../core/server.js';
import greeterPlugin from '../../../fixtures/plugins/greeter-auth.js';

describe('identity tokens', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;
  let anon: TestClient;
  let issuer: string;
  const clock = new ManualClock();
  const as = (token: string) => new TestClient(server.address, token);
  // Vault's default policy does not grant identity tokens; a workload's policy does.
  const login = async (user: string, body: Record<string, unknown> = {}) => {
    const res = await anon.post('auth/greeter/login', { user, policies: 'id-tokens', ...body });
    expect(res.status, res.text).to.equal(200);
    return res.body.auth as { client_token: string; entity_id: string };
  };
  const keySet = async () => {
    const res = await anon.get('identity/oidc/.well-known/keys');
    expect(res.status, res.text).to.equal(200);
    return res.body as { keys: { kid: string; alg: string }[] };
  };

  before(async () => {
    server = await startUnsealedServer({ plugins: [greeterPlugin], clock });
    root = server.client;
    anon = new TestClient(server.address);
    await root.post('sys/auth/greeter', { type: 'greeter' });
    await root.put('sys/policy/id-tokens', { policy: 'path "identity/oidc/token/*" { capabilities = ["read"] }' });
    expect((await root.post('identity/oidc/config', { issuer: server.address })).status).to.equal(200);
    issuer = `${server.address}/v1/identity/oidc`;
  });
  after(() => server.close());

  it('keeps the issuer, warns that it is fixed, and refuses one with a path', async () => {
    expect((await root.get('identity/oidc/config')).body.data.issuer).to.equal(server.address);
    const set = await root.post('identity/oidc/config', { issuer: 'https://issuer.example:8200' });
    expect(set.body.warnings).to.have.length(1);
    const refused = await root.post('identity/oidc/config', { issuer: 'https://issuer.example/path' });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.contain('invalid issuer');
    expect((await root.post('identity/oidc/config', { issuer: '' })).status).to.equal(204);
    expect((await root.get('identity/oidc/config')).body.data.issuer).to.equal('');
    await root.post('identity/oidc/config', { issuer: server.address });
    const discovery = (await anon.get('identity/oidc/.well-known/openid-configuration')).body;
    expect(discovery).to.include({ issuer, jwks_uri: `${issuer}/.well-known/keys` });
  });

  it('creates, reads, lists and deletes named keys, refusing to delete one a role uses', async () => {
    expect((await root.post('identity/oidc/key/k1', { algorithm: 'ES256', verification_ttl: '2h', rotation_period: '1h' })).status).to.equal(204);
    expect((await root.get('identity/oidc/key/k1')).body.data).to.deep.equal({ algorithm: 'ES256', rotation_period: 3600, verification_ttl: 7200, allowed_client_ids: [] });
    expect((await root.list('identity/oidc/key')).body.data.keys).to.include('k1');
    expect((await root.post('identity/oidc/role/r1', { key: 'k1', ttl: '1h' })).status).to.equal(204);
    const inUse = await root.delete('identity/oidc/key/k1');
    expect(inUse.status).to.equal(400);
    expect(inUse.body.errors[0]).to.equal('unable to delete key "k1" because it is currently referenced by these roles: r1');
    const tooLong = await root.post('identity/oidc/role/r1', { ttl: '3h' });
    expect(tooLong.body.errors[0]).to.equal("a role's token ttl cannot be longer than the verification_ttl of the key it references");
    expect((await root.delete('identity/oidc/role/r1')).status).to.equal(204);
    expect((await root.delete('identity/oidc/key/k1')).status).to.equal(204);
    expect((await root.get('identity/oidc/key/k1')).status).to.equal(404);
    const missing = await root.post('identity/oidc/role/r2', { key: 'nothing' });
    expect(missing.body.errors[0]).to.equal('cannot find key "nothing"');
  });

  it('signs a token for the caller\'s entity that verifies against .well-known/keys, with the template\'s claims', async () => {
    await root.post('identity/oidc/key/signer', { allowed_client_ids: '*' });
    const template = '{"team": {{identity.entity.metadata.team}}, "groups": {{identity.entity.groups.names}}}';
    await root.post('identity/oidc/role/app', { key: 'signer', template, ttl: '15m' });
    const clientId = (await root.get('identity/oidc/role/app')).body.data.client_id as string;
    const user = await login('una');
    await root.post(`identity/entity/id/${user.entity_id}`, { metadata: { team: 'platform' } });
    await root.post('identity/group', { name: 'builders', member_entity_ids: user.entity_id });
    const res = await as(user.client_token).get('identity/oidc/token/app');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({ client_id: clientId, ttl: 900 });
    const { payload } = await jwtVerify(res.body.data.token, createLocalJWKSet(await keySet()), { issuer, audience: clientId, currentDate: clock.now() });
    expect(payload).to.include({ sub: user.entity_id, team: 'platform', namespace: 'root' });
    expect(payload.groups).to.deep.equal(['builders']);
    expect(payload.exp! - payload.iat!).to.equal(900);
    const active = await root.post('identity/oidc/introspect', { token: res.body.data.token, client_id: clientId });
    expect(active.body).to.deep.equal({ active: true });
    const otherClient = await root.post('identity/oidc/introspect', { token: res.body.data.token, client_id: 'someone-else' });
    expect(otherClient.body.active).to.equal(false);
  });

  it('refuses a token to a caller without an entity, and for a role its key does not allow', async () => {
    await root.post('identity/oidc/key/strict', { allowed_client_ids: 'nobody' });
    await root.post('identity/oidc/role/strict', { key: 'strict' });
    const noEntity = await root.get('identity/oidc/token/app');
    expect(noEntity.status).to.equal(400);
    expect(noEntity.body.errors[0]).to.equal("no entity associated with the request's token");
    const user = await login('vic');
    const refused = await as(user.client_token).get('identity/oidc/token/strict');
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.equal('the key "strict" does not list the client ID of the role "strict" as an allowed client ID');
  });

  it('keeps a rotated-out public key for its verification TTL, then drops it', async () => {
    await root.post('identity/oidc/key/rotating', { allowed_client_ids: '*', verification_ttl: '1h', rotation_period: '1h' });
    await root.post('identity/oidc/role/rotating', { key: 'rotating', ttl: '30m' });
    const user = await login('wes');
    const before = (await as(user.client_token).get('identity/oidc/token/rotating')).body.data.token as string;
    const oldKid = decodeProtectedHeader(before).kid!;
    expect((await root.post('identity/oidc/key/rotating/rotate', { verification_ttl: '40m' })).status).to.equal(204);
    expect((await root.get('identity/oidc/key/rotating')).body.data.verification_ttl).to.equal(2400);
    const after = (await as(user.client_token).get('identity/oidc/token/rotating')).body.data.token as string;
    expect(decodeProtectedHeader(after).kid).to.not.equal(oldKid);
    expect((await keySet()).keys.map((k) => k.kid)).to.include(oldKid);
    expect((await root.post('identity/oidc/introspect', { token: before })).body).to.deep.equal({ active: true });
    clock.advance(41 * 60);
    expect((await keySet()).keys.map((k) => k.kid)).to.not.include(oldKid);
    expect((await root.post('identity/oidc/introspect', { token: before })).body.active).to.equal(false);
  });

  it('logs in to Keywarden\'s own JWT auth method with its identity token, the groups claim making external group members', async () => {
    await root.post('identity/oidc/key/federation', { allowed_client_ids: '*' });
    await root.post('identity/oidc/role/federation', { key: 'federation', template: '{"teams": {{identity.entity.metadata.teams_json}}}', ttl: '10m' });
    const clientId = (await root.get('identity/oidc/role/federation')).body.data.client_id as string;
    await root.put('sys/policy/federated', { policy: 'path "sys/mounts" { capabilities = ["read"] }' });
    expect((await root.post('sys/auth/jwt', { type: 'jwt' })).status).to.equal(204);
    const config = await root.post('auth/jwt/config', { jwks_url: `${issuer}/.well-known/keys`, bound_issuer: issuer });
    expect(config.status, config.text).to.equal(204);
    const role = await root.post('auth/jwt/role/workload', { role_type: 'jwt', user_claim: 'sub', bound_audiences: clientId, groups_claim: 'teams', token_policies: 'default' });
    expect(role.status, role.text).to.equal(204);
    const jwtAccessor = (await root.get('sys/auth')).body.data['jwt/'].accessor as string;
    const team = (await root.post('identity/group', { name: 'federated-team', type: 'external', policies: 'federated' })).body.data.id as string;
    await root.post('identity/group-alias', { name: 'ops', mount_accessor: jwtAccessor, canonical_id: team });

    const workload = await login('xena');
    // The template renders the metadata value as a JSON string; the groups claim takes a list or a string.
    await root.post(`identity/entity/id/${workload.entity_id}`, { metadata: { teams_json: 'ops' } });
    const jwt = (await as(workload.client_token).get('identity/oidc/token/federation')).body.data.token as string;
    const federated = await anon.post('auth/jwt/login', { role: 'workload', jwt });
    expect(federated.status, federated.text).to.equal(200);
    const token = federated.body.auth.client_token as string;
    expect((await as(token).get('sys/mounts')).status).to.equal(200);
    expect((await root.get(`identity/group/id/${team}`)).body.data.member_entity_ids).to.deep.equal([federated.body.auth.entity_id]);
  });
});
