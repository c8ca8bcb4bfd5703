/** Tokens and ACL policies over HTTP: what a token may do, and how tokens live and die. */
import { expect } from 'chai';
import { ManualClock, startUnsealedServer } from '../../helpers/server.js';
import { TestClient, createToken } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import notesPlugin from '../../fixtures/plugins/notes.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';

describe('tokens and policies', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;
  const clock = new ManualClock();

  const tokenWith = (body: Record<string, unknown>): Promise<string> => createToken(root, body);
  const as = (token: string) => new TestClient(server.address, token);

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin], clock });
    root = server.client;
    await root.post('sys/mounts/notes', { type: 'notes' });
    await root.post('notes/notes/app', { text: 'existing' });
  });
  after(() => server.close());

  describe('ACL', () => {
    it('lets a token whose only policy grants update on one path do exactly that', async () => {
      expect((await root.put('sys/policies/acl/app-writer', { policy: 'path "notes/notes/app" { capabilities = ["update"] }' })).status).to.equal(204);
      const token = await tokenWith({ policies: ['app-writer'] });
      const client = as(token);
      expect((await client.post('notes/notes/app', { text: 'changed' })).status).to.equal(200);
      expect((await client.get('notes/notes/app')).status).to.equal(403);
      expect((await client.post('notes/notes/other', { text: 'x' })).status).to.equal(403);
      expect((await client.delete('notes/notes/app')).status).to.equal(403);
      expect((await client.get('sys/mounts')).status).to.equal(403);
      expect((await root.get('notes/notes/app')).body.data.text).to.equal('changed');
    });

    it('needs create, not update, for a write that the existence check calls new', async () => {
      await root.put('sys/policy/update-only', { policy: 'path "notes/notes/fresh-*" { capabilities = ["update"] }' });
      await root.put('sys/policy/create-too', { policy: 'path "notes/notes/fresh-*" { capabilities = ["create", "update"] }' });
      expect((await as(await tokenWith({ policies: 'update-only' })).post('notes/notes/fresh-1', { text: 'x' })).status).to.equal(403);
      expect((await as(await tokenWith({ policies: 'create-too' })).post('notes/notes/fresh-1', { text: 'x' })).status).to.equal(204);
    });

    it('enforces denied_parameters and required_parameters', async () => {
      await root.put('sys/policy/params', {
        policy: JSON.stringify({
          path: {
            'notes/notes/p-*': {
              capabilities: ['create', 'update'],
              denied_parameters: { pinned: [] },
              required_parameters: ['text'],
            },
          },
        }),
      });
      const client = as(await tokenWith({ policies: ['params'] }));
      expect((await client.post('notes/notes/p-1', { text: 'ok' })).status).to.equal(204);
      expect((await client.post('notes/notes/p-2', { text: 'ok', pinned: true })).status).to.equal(403);
      expect((await client.post('notes/notes/p-3', { count: 1 })).status).to.equal(403);
    });

    it('requires sudo where Vault does (sys/auth/*, sys/rotate, revoke-orphan)', async () => {
      await root.put('sys/policy/no-sudo', { policy: 'path "sys/*" { capabilities = ["create", "read", "update", "delete", "list"] }' });
      await root.put('sys/policy/with-sudo', { policy: 'path "sys/*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }' });
      const plain = as(await tokenWith({ policies: ['no-sudo'] }));
      const sudo = as(await tokenWith({ policies: ['with-sudo'] }));
      expect((await plain.post('sys/auth/g1', { type: 'greeter' })).status).to.equal(403);
      expect((await plain.put('sys/rotate')).status).to.equal(403);
      expect((await plain.post('sys/mounts/n2', { type: 'notes' })).status).to.equal(204);
      expect((await sudo.post('sys/auth/g1', { type: 'greeter' })).status).to.equal(204);
      expect((await sudo.put('sys/rotate')).status).to.equal(204);
    });

    it('reports capabilities for the calling token and for another token', async () => {
      const token = await tokenWith({ policies: ['app-writer'] });
      const self = await as(token).post('sys/capabilities-self', { paths: ['notes/notes/app'] });
      expect(self.body.data['notes/notes/app']).to.deep.equal(['update']);
      expect(self.body.capabilities).to.deep.equal(['update']);
      const other = await root.post('sys/capabilities', { token, paths: ['notes/notes/app', 'sys/mounts'] });
      expect(other.body.data['sys/mounts']).to.deep.equal(['deny']);
      const rootCaps = await root.post('sys/capabilities-self', { paths: 'anything' });
      expect(rootCaps.body.data.anything).to.deep.equal(['root']);
    });

    it('refuses an unparsable policy with the line and what was expected, and keeps root and default', async () => {
      const bad = await root.put('sys/policy/broken', { policy: 'path "a" {\n  capabilities = ["read"\n}' });
      expect(bad.status).to.equal(400);
      expect(bad.body.errors[0]).to.match(/line \d+/);
      const unknownCap = await root.put('sys/policy/broken', { policy: 'path "a" { capabilities = ["fly"] }' });
      expect(unknownCap.status).to.equal(400);
      expect(unknownCap.body.errors[0]).to.contain('fly');
      expect((await root.put('sys/policy/root', { policy: 'path "a" { capabilities = ["read"] }' })).status).to.equal(400);
      expect((await root.delete('sys/policy/root')).status).to.equal(400);
      expect((await root.delete('sys/policy/default')).status).to.equal(400);
      const list = await root.get('sys/policy');
      expect(list.body.data.policies).to.include.members(['default', 'root', 'app-writer']);
      expect(list.body.policies).to.deep.equal(list.body.data.policies);
    });

    it('lower-cases policy names and accepts the legacy rules field', async () => {
      const res = await root.put('sys/policy/MixedCase', { rules: '{"path":{"notes/*":{"policy":"read"}}}' });
      expect(res.status).to.equal(200);
      expect(res.body.warnings[0]).to.contain('mixedcase');
      expect((await root.get('sys/policy/mixedcase')).body.data.rules).to.contain('notes/*');
      expect((await root.get('sys/policies/acl/mixedcase')).body.data.policy).to.contain('notes/*');
    });
  });

  describe('token lifecycle', () => {
    it('looks up the calling token, by token and by accessor', async () => {
      const created = await root.post('auth/token/create', { policies: ['app-writer'], meta: { team: 'a' }, display_name: 'ci job', ttl: '1h' });
      const { client_token: token, accessor } = created.body.auth;
      expect(created.body.auth).to.include({ renewable: true, token_type: 'service', orphan: false, lease_duration: 3600 });
      expect(created.body.auth.policies).to.deep.equal(['app-writer', 'default']);
      const self = await as(token).get('auth/token/lookup-self');
      expect(self.body.data).to.include({ id: token, accessor, display_name: 'token-ci-job', ttl: 3600, num_uses: 0, orphan: false });
      expect(self.body.data.meta).to.deep.equal({ team: 'a' });
      const byAccessor = await root.post('auth/token/lookup-accessor', { accessor });
      expect(byAccessor.body.data).to.include({ id: '', accessor });
      expect((await root.post('auth/token/lookup', { token: 'hvs.doesnotexistatall000000' })).status).to.equal(403);
    });

    it('refuses child policies outside the parent\'s, and root policies from a non-root parent', async () => {
      await root.put('sys/policy/creator', { policy: 'path "auth/token/create" { capabilities = ["update"] }' });
      const creator = as(await tokenWith({ policies: ['creator', 'app-writer'] }));
      expect((await creator.post('auth/token/create', { policies: ['app-writer'] })).status).to.equal(200);
      const wider = await creator.post('auth/token/create', { policies: ['with-sudo'] });
      expect(wider.status).to.equal(400);
      expect(wider.body.errors[0]).to.contain('subset');
      expect((await creator.post('auth/token/create', { policies: ['root'] })).status).to.equal(400);
    });

    it('revokes children with their parent, and only the parent with revoke-orphan', async () => {
      await root.put('sys/policy/creator2', { policy: 'path "auth/token/create" { capabilities = ["update"] }\npath "notes/*" { capabilities = ["read"] }' });
      const parent = await tokenWith({ policies: ['creator2'] });
      const child = (await as(parent).post('auth/token/create', { policies: ['creator2'] })).body.auth.client_token as string;
      const grandchild = (await as(child).post('auth/token/create', {})).body.auth.client_token as string;
      expect((await as(grandchild).get('notes/notes/app')).status).to.equal(200);
      expect((await root.post('auth/token/revoke', { token: parent })).status).to.equal(204);
      for (const token of [parent, child, grandchild]) expect((await as(token).get('notes/notes/app')).status).to.equal(403);

      const parent2 = await tokenWith({ policies: ['creator2'] });
      const child2 = (await as(parent2).post('auth/token/create', {})).body.auth.client_token as string;
      expect((await root.post('auth/token/revoke-orphan', { token: parent2 })).status).to.equal(204);
      expect((await as(parent2).get('notes/notes/app')).status).to.equal(403);
      expect((await as(child2).get('notes/notes/app')).status).to.equal(200);
      expect((await as(child2).get('auth/token/lookup-self')).body.data.orphan).to.equal(true);
    });

    it('gives batch tokens that work for reads, cannot create tokens and cannot be renewed', async () => {
      await root.put('sys/policy/reader', { policy: 'path "notes/*" { capabilities = ["read"] }\npath "auth/token/create" { capabilities = ["update"] }' });
      const created = await root.post('auth/token/create', { policies: ['reader'], type: 'batch', ttl: '10m' });
      expect(created.status).to.equal(200);
      const batch = created.body.auth.client_token as string;
      expect(batch).to.match(/^hvb\./);
      expect(created.body.auth).to.include({ token_type: 'batch', renewable: false, accessor: '' });
      expect((await as(batch).get('notes/notes/app')).status).to.equal(200);
      const child = await as(batch).post('auth/token/create', {});
      expect(child.status).to.equal(400);
      expect(child.body.errors[0]).to.contain('batch tokens cannot create more tokens');
      expect((await root.post('auth/token/renew', { token: batch })).status).to.equal(400);
      const tampered = `${batch.slice(0, -4)}${batch.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      expect((await as(tampered).get('notes/notes/app')).status).to.equal(403);
    });

    it('refuses an expired token and sweeps it away', async () => {
      const token = await tokenWith({ policies: ['reader'], ttl: '1m' });
      expect((await as(token).get('notes/notes/app')).status).to.equal(200);
      clock.advance(61);
      expect((await as(token).get('notes/notes/app')).status).to.equal(403);
      const other = await tokenWith({ policies: ['reader'], ttl: '1m' });
      const accessor = (await root.post('auth/token/lookup', { token: other })).body.data.accessor;
      clock.advance(61);
      await server.host.runPeriodic();
      expect((await root.post('auth/token/lookup-accessor', { accessor })).status).to.equal(400);
    });

    it('counts num_uses down to refusal', async () => {
      const token = await tokenWith({ policies: ['reader'], num_uses: 2 });
      const client = as(token);
      expect((await client.get('notes/notes/app')).status).to.equal(200);
      expect((await client.get('notes/notes/app')).status).to.equal(200);
      expect((await client.get('notes/notes/app')).status).to.equal(403);
    });

    it('renews within the max TTL and refuses beyond it', async () => {
      const token = await tokenWith({ policies: ['reader'], ttl: '10m', explicit_max_ttl: '15m' });
      clock.advance(300);
      const renewed = await as(token).post('auth/token/renew-self', { increment: '10m' });
      expect(renewed.status).to.equal(200);
      expect(renewed.body.auth.lease_duration).to.equal(600);
      clock.advance(500);
      const capped = await as(token).post('auth/token/renew-self', { increment: '10m' });
      expect(capped.body.auth.lease_duration).to.equal(100);
      expect(capped.body.warnings).to.have.length(1);
      clock.advance(100);
      expect((await as(token).post('auth/token/renew-self', {})).status).to.equal(403);
    });

    it('gives the root token a lookup with no expiry', async () => {
      const res = await root.get('auth/token/lookup-self');
      expect(res.body.data).to.include({ ttl: 0, expire_time: null, display_name: 'root', orphan: true });
      expect(res.body.data.policies).to.deep.equal(['root']);
    });

    it('manages token roles and creates tokens against them', async () => {
      expect((await root.post('auth/token/roles/ci', { allowed_policies: ['reader'], orphan: true, token_period: '1h' })).status).to.equal(204);
      expect((await root.list('auth/token/roles')).body.data.keys).to.include('ci');
      const res = await root.post('auth/token/create/ci', {});
      expect(res.status).to.equal(200);
      expect(res.body.auth).to.include({ orphan: true, lease_duration: 3600 });
      expect(res.body.auth.policies).to.deep.equal(['default', 'reader']);
      expect((await root.post('auth/token/create/ci', { policies: ['with-sudo'] })).status).to.equal(400);
      const lookup = await as(res.body.auth.client_token).get('auth/token/lookup-self');
      expect(lookup.body.data).to.include({ role: 'ci', period: 3600, path: 'auth/token/create/ci' });
      await root.post('auth/token/roles/short', { allowed_policies: ['reader'], token_ttl: '10m', token_max_ttl: '20m' });
      const short = await root.post('auth/token/create/short', {});
      expect(short.body.auth.lease_duration).to.equal(600);
      const capped = await root.post('auth/token/create/short', { ttl: '1h' });
      expect(capped.body.auth.lease_duration).to.equal(1200);
    });

    it('refuses a period too long for a date, and caps a periodic token from a role stored before the bound', async () => {
      const refused = await root.post('auth/token/create', { period: '8760000000h' });
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.errors[0]).to.contain('period').and.contain('out of range');

      expect((await root.post('auth/token/roles/forever', { token_period: '1h' })).status).to.equal(204);
      const key = 'sys/token/roles/forever';
      const role = JSON.parse(new TextDecoder().decode(await server.host.barrier.get(key)));
      await server.host.barrier.put(key, new TextEncoder().encode(JSON.stringify({ ...role, token_period: 8_760_000_000 * 3600 })));
      const created = await root.post('auth/token/create/forever', {});
      expect(created.status, created.text).to.equal(200);
      const self = await as(created.body.auth.client_token).get('auth/token/lookup-self');
      expect(self.status, self.text).to.equal(200);
      expect(self.body.data.ttl).to.equal(9_223_372_036);
      expect(new Date(self.body.data.expire_time).getUTCFullYear()).to.be.below(2400);
    });

    it('lists accessors only with sudo', async () => {
      const list = await root.list('auth/token/accessors');
      expect(list.status).to.equal(200);
      expect(list.body.data.keys.length).to.be.greaterThan(3);
      await root.put('sys/policy/acc', { policy: 'path "auth/token/accessors*" { capabilities = ["list"] }' });
      expect((await as(await tokenWith({ policies: ['acc'] })).list('auth/token/accessors')).status).to.equal(403);
    });
  });

  describe('logins through an auth method', () => {
    before(async () => {
      await root.post('sys/auth/greeter', { type: 'greeter' });
    });

    it('mints a token from the auth result, with Vault\'s auth block', async () => {
      const anon = new TestClient(server.address);
      const res = await anon.post('auth/greeter/login', { user: 'alice', policies: 'reader', ttl: '30m' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.auth).to.include({ lease_duration: 1800, renewable: true, token_type: 'service', orphan: true });
      expect(res.body.auth.policies).to.deep.equal(['default', 'reader']);
      expect(res.body.auth.metadata).to.deep.equal({ user: 'alice', color: 'blue' });
      expect(res.body.auth.entity_id).to.match(/^[0-9a-f-]{36}$/);
      const lookup = await as(res.body.auth.client_token).get('auth/token/lookup-self');
      expect(lookup.body.data).to.include({ display_name: 'greeter-alice', path: 'auth/greeter/login' });
    });

    it('gives the same entity for the same alias, and stores a changed metadata value once', async () => {
      const anon = new TestClient(server.address);
      const first = await anon.post('auth/greeter/login', { user: 'bob' });
      const second = await anon.post('auth/greeter/login', { user: 'bob' });
      expect(second.body.auth.entity_id).to.equal(first.body.auth.entity_id);
      const entity = await root.get(`identity/entity/id/${first.body.auth.entity_id}`);
      const alias = entity.body.data.aliases[0];
      expect(alias).to.include({ name: 'bob', mount_path: 'auth/greeter/' });
      const aliasBefore = (await root.get(`identity/entity-alias/id/${alias.id}`)).body.data;
      expect(aliasBefore.metadata).to.deep.equal({ color: 'blue' });
      clock.advance(5);
      await anon.post('auth/greeter/login', { user: 'bob', color: 'red' });
      const aliasChanged = (await root.get(`identity/entity-alias/id/${alias.id}`)).body.data;
      expect(aliasChanged.metadata).to.deep.equal({ color: 'red' });
      expect(aliasChanged.last_update_time).to.not.equal(aliasBefore.last_update_time);
      clock.advance(5);
      await anon.post('auth/greeter/login', { user: 'bob', color: 'red' });
      const aliasSame = (await root.get(`identity/entity-alias/id/${alias.id}`)).body.data;
      expect(aliasSame.last_update_time).to.equal(aliasChanged.last_update_time);
      expect((await root.list('identity/entity-alias/id')).body.data.keys).to.include(alias.id);
    });

    it('asks the auth method on renewal, which may refuse', async () => {
      const anon = new TestClient(server.address);
      const token = (await anon.post('auth/greeter/login', { user: 'carol', ttl: '10m' })).body.auth.client_token as string;
      expect((await as(token).post('auth/token/renew-self', {})).status).to.equal(200);
      expect((await root.post('auth/greeter/deny-renewals')).status).to.equal(204);
      const refused = await as(token).post('auth/token/renew-self', {});
      expect(refused.status).to.equal(400);
      expect(refused.body.errors[0]).to.contain('renewal refused for carol');
    });

    it('issues batch tokens when the mount is tuned to', async () => {
      await root.post('sys/auth/greeter/tune', { token_type: 'batch' });
      const res = await new TestClient(server.address).post('auth/greeter/login', { user: 'dave', policies: 'reader' });
      expect(res.body.auth.token_type).to.equal('batch');
      expect((await as(res.body.auth.client_token).get('notes/notes/app')).status).to.equal(200);
      await root.post('sys/auth/greeter/tune', { token_type: 'default-service' });
    });

    it('revokes the tokens of an auth method when it is disabled', async () => {
      await root.post('sys/auth/temp', { type: 'greeter' });
      const token = (await new TestClient(server.address).post('auth/temp/login', { user: 'erin', policies: 'reader' })).body.auth.client_token as string;
      expect((await as(token).get('notes/notes/app')).status).to.equal(200);
      expect((await root.delete('sys/auth/temp')).status).to.equal(204);
      expect((await as(token).get('notes/notes/app')).status).to.equal(403);
    });
  });
});
