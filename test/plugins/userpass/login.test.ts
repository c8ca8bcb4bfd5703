/**
 * userpass logins over HTTP: the token and its settings, the entity alias on the mount's accessor,
 * every refusal with Vault's answer, the same work for an unknown user as for a wrong password,
 * and renewal with Vault's checks.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import type { RunningServer } from '../../../core/server.js';
import { createUserpassBackend } from '../../../plugins/userpass/backend.js';
import { createHasher, type PasswordHasher } from '../../../plugins/userpass/hasher.js';
import type { PluginManifest } from '../../../sdk/index.js';

/** The real hasher, counting its verifications. */
class CountingHasher implements PasswordHasher {
  verified = 0;
  private readonly real = createHasher();
  hash(password: string, cost: number) {
    return this.real.hash(password, cost);
  }
  verify(password: string, hash: string) {
    this.verified++;
    return this.real.verify(password, hash);
  }
  close() {
    return this.real.close();
  }
}

describe('userpass login', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let root: TestClient;
  let anonymous: TestClient;
  const hasher = new CountingHasher();
  const counted: PluginManifest = { name: 'userpass-counted', kind: 'auth', version: '1.0.0', description: 'userpass with a counting hasher', factory: (context) => createUserpassBackend(context, { hasher }) };

  before(async () => {
    server = await startUnsealedServer({ plugins: [counted] });
    root = server.client;
    anonymous = new TestClient(server.address);
    expect((await root.post('sys/auth/corp-users', { type: 'userpass' })).status).to.equal(204);
    expect((await root.post('sys/auth/counted', { type: 'userpass-counted' })).status).to.equal(204);
    await root.put('sys/policy/dev', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    await root.post('auth/corp-users/users/alice', { password: 'alice-pass', token_policies: 'dev', token_ttl: '1h' });
    await root.post('auth/counted/users/alice', { password: 'alice-pass' });
  });
  after(() => server.close());

  it('answers a token with the user\'s policies, TTL and metadata, and an entity alias on the mount\'s accessor', async () => {
    const res = await anonymous.post('auth/corp-users/login/alice', { password: 'alice-pass' });
    expect(res.status, res.text).to.equal(200);
    const auth = res.body.auth;
    expect(auth.policies).to.deep.equal(['default', 'dev']);
    expect(auth.metadata).to.deep.equal({ username: 'alice' });
    expect(auth.lease_duration).to.equal(3600);
    expect(auth.renewable).to.equal(true);
    const accessor = (await root.get('sys/auth/corp-users')).body.data.accessor as string;
    const entity = await root.get(`identity/entity/id/${auth.entity_id}`);
    expect(entity.body.data.aliases.map((a: { mount_accessor: string; name: string }) => [a.mount_accessor, a.name])).to.deep.equal([[accessor, 'alice']]);
    const lookup = await root.post('auth/token/lookup', { token: auth.client_token });
    expect(lookup.body.data.display_name).to.equal('corp-users-alice');
    expect(lookup.body.data.path).to.equal('auth/corp-users/login/alice');
  });

  it('logs the same user in whatever the case of the username, to the same entity', async () => {
    const lower = await anonymous.post('auth/corp-users/login/alice', { password: 'alice-pass' });
    const upper = await anonymous.post('auth/corp-users/login/ALICE', { password: 'alice-pass' });
    expect(upper.status).to.equal(200);
    expect(upper.body.auth.entity_id).to.equal(lower.body.auth.entity_id);
  });

  it('refuses a wrong password and an unknown user with the same answer', async () => {
    const wrong = await anonymous.post('auth/corp-users/login/alice', { password: 'wrong' });
    const unknown = await anonymous.post('auth/corp-users/login/mallory', { password: 'wrong' });
    expect([wrong.status, unknown.status]).to.deep.equal([400, 400]);
    expect(wrong.body.errors).to.deep.equal(['invalid username or password']);
    expect(unknown.body).to.deep.equal(wrong.body);
  });

  it('checks an unknown user\'s password against a bcrypt hash too, so its answer takes as long', async () => {
    const before = hasher.verified;
    expect((await anonymous.post('auth/counted/login/mallory', { password: 'guess' })).status).to.equal(400);
    expect(hasher.verified - before).to.equal(1);
    expect((await anonymous.post('auth/counted/login/alice', { password: 'guess' })).status).to.equal(400);
    expect(hasher.verified - before).to.equal(2);
  });

  it('refuses a missing password and a password longer than bcrypt reads, which would match on its first 72 bytes', async () => {
    const missing = await anonymous.post('auth/corp-users/login/alice', {});
    expect(missing.status).to.equal(400);
    expect(missing.body.errors).to.deep.equal(['missing password']);
    const seventyTwo = 'p'.repeat(72);
    await root.post('auth/corp-users/users/long', { password: seventyTwo });
    expect((await anonymous.post('auth/corp-users/login/long', { password: seventyTwo })).status).to.equal(200);
    const longer = await anonymous.post('auth/corp-users/login/long', { password: `${seventyTwo}-and-more` });
    expect(longer.status).to.equal(400);
    expect(longer.body.errors).to.deep.equal(['invalid username or password']);
  });

  it('refuses a login from outside the user\'s token_bound_cidrs with a 403', async () => {
    await root.post('auth/corp-users/users/fenced', { password: 'fenced-pass', token_bound_cidrs: '10.0.0.0/8' });
    const res = await anonymous.post('auth/corp-users/login/fenced', { password: 'fenced-pass' });
    expect(res.status).to.equal(403);
    expect(res.body.errors).to.deep.equal(['permission denied']);
    await root.post('auth/corp-users/users/inside', { password: 'inside-pass', token_bound_cidrs: '127.0.0.0/8' });
    const inside = await anonymous.post('auth/corp-users/login/inside', { password: 'inside-pass' });
    expect(inside.status).to.equal(200);
    expect((await root.post('auth/token/lookup', { token: inside.body.auth.client_token })).body.data.bound_cidrs).to.deep.equal(['127.0.0.0/8']);
  });

  it('checks the password off the event loop: other requests go on while bcrypt runs', async () => {
    const { result, turns } = await turnsDuring(() => anonymous.post('auth/corp-users/login/alice', { password: 'alice-pass' }));
    expect(result.status).to.equal(200);
    // A bcrypt verify holding the loop would leave a handful of turns (the request's own I/O);
    // on a worker thread the loop keeps turning while it runs.
    expect(turns).to.be.greaterThan(50);
  });

  describe('renewal', () => {
    it('renews while the user exists, with the TTL the user has now', async () => {
      await root.post('auth/corp-users/users/rita', { password: 'rita-pass', token_policies: 'dev', token_ttl: '1h' });
      const token = (await anonymous.post('auth/corp-users/login/rita', { password: 'rita-pass' })).body.auth.client_token as string;
      await root.post('auth/corp-users/users/rita', { token_ttl: '30m' });
      const renewed = await new TestClient(server.address, token).post('auth/token/renew-self', {});
      expect(renewed.status, renewed.text).to.equal(200);
      expect(renewed.body.auth.lease_duration).to.equal(1800);
    });

    it('refuses once the user is deleted', async () => {
      await root.post('auth/corp-users/users/sam', { password: 'sam-pass' });
      const token = (await anonymous.post('auth/corp-users/login/sam', { password: 'sam-pass' })).body.auth.client_token as string;
      await root.delete('auth/corp-users/users/sam');
      const renewed = await new TestClient(server.address, token).post('auth/token/renew-self', {});
      expect(renewed.status).to.equal(400);
      expect(renewed.body.errors).to.deep.equal(['failed to renew entry: user "sam" no longer exists']);
    });

    it('refuses once the user\'s policies changed, as Vault does', async () => {
      await root.post('auth/corp-users/users/tina', { password: 'tina-pass', token_policies: 'dev' });
      const token = (await anonymous.post('auth/corp-users/login/tina', { password: 'tina-pass' })).body.auth.client_token as string;
      await root.post('auth/corp-users/users/tina/policies', { token_policies: 'dev,admin' });
      const renewed = await new TestClient(server.address, token).post('auth/token/renew-self', {});
      expect(renewed.status).to.equal(400);
      expect(renewed.body.errors).to.deep.equal(['policies have changed, not renewing']);
    });
  });
});
