/** Moving mounts (`sys/remount`, `sys/remount/status/:migration_id`) over HTTP, for secrets engines and auth methods. */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import notesPlugin from '../../fixtures/plugins/notes.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';

describe('sys/remount', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;
  const as = (token: string) => new TestClient(server.address, token);

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin] });
    root = server.client;
  });
  after(() => server.close());

  describe('a secrets engine', () => {
    it('moves a transit mount: its keys still decrypt what they encrypted, under the new path only', async () => {
      await root.post('sys/mounts/transit-old', { type: 'transit', description: 'orders' });
      await root.post('transit-old/keys/orders', {});
      const sealed = (await root.post('transit-old/encrypt/orders', { plaintext: 'b3JkZXIgMQ==' })).body.data.ciphertext as string;
      const before = (await root.get('sys/mounts/transit-old')).body.data;

      const moved = await root.post('sys/remount', { from: 'transit-old', to: 'crypto/eu' });
      expect(moved.status, moved.text).to.equal(200);
      const id = moved.body.data.migration_id as string;
      expect(id).to.match(/^[0-9a-f-]{36}$/);
      expect(moved.body.migration_id, 'Vault copies sys/remount\'s data to the top level').to.equal(id);

      expect((await root.post('crypto/eu/decrypt/orders', { ciphertext: sealed })).body.data.plaintext).to.equal('b3JkZXIgMQ==');
      const resealed = await root.post('crypto/eu/encrypt/orders', { plaintext: 'b3JkZXIgMg==' });
      expect(resealed.body.data.ciphertext).to.match(/^vault:v1:/);
      expect((await root.get('transit-old/keys/orders')).status).to.equal(404);

      const after = (await root.get('sys/mounts/crypto/eu')).body.data;
      expect(after).to.include({ uuid: before.uuid, accessor: before.accessor, type: 'transit', description: 'orders' });
      const list = (await root.get('sys/mounts')).body.data;
      expect(list).to.have.property('crypto/eu/');
      expect(list).to.not.have.property('transit-old/');

      const status = await root.get(`sys/remount/status/${id}`);
      expect(status.status, status.text).to.equal(200);
      expect(status.body.data).to.deep.equal({
        migration_id: id,
        migration_info: { source_mount: 'transit-old/', target_mount: 'crypto/eu/', status: 'success' },
      });
    });

    it('takes paths with or without slashes, and the freed path can be mounted again', async () => {
      await root.post('sys/mounts/slashes', { type: 'notes' });
      await root.post('slashes/notes/a', { text: 'kept' });
      expect((await root.post('sys/remount', { from: '/slashes/', to: 'moved-slashes/' })).status).to.equal(200);
      expect((await root.get('moved-slashes/notes/a')).body.data.text).to.equal('kept');
      expect((await root.post('sys/mounts/slashes', { type: 'notes' })).status).to.equal(204);
      expect((await root.get('slashes/notes/a')).status, 'a new mount at the old path starts empty').to.equal(404);
    });
  });

  describe('an auth method', () => {
    it('moves it with its accessor; tokens minted before stay valid, renewable, and follow it', async () => {
      await root.post('sys/auth/greet', { type: 'greeter' });
      const accessor = (await root.get('sys/auth/greet')).body.data.accessor as string;
      const login = await root.post('auth/greet/login', { user: 'ada', ttl: '1h' }, { token: '' });
      expect(login.status, login.text).to.equal(200);
      const token = login.body.auth.client_token as string;
      const tokenAccessor = login.body.auth.accessor as string;

      const moved = await root.post('sys/remount', { from: 'auth/greet', to: 'auth/people/greet' });
      expect(moved.status, moved.text).to.equal(200);
      expect((await root.get(`sys/remount/status/${moved.body.data.migration_id}`)).body.data.migration_info).to.deep.equal({
        source_mount: 'auth/greet/',
        target_mount: 'auth/people/greet/',
        status: 'success',
      });

      expect((await root.get('sys/auth/people/greet')).body.data.accessor).to.equal(accessor);
      const self = await as(token).get('auth/token/lookup-self');
      expect(self.status, self.text).to.equal(200);
      expect(self.body.data.path).to.equal('auth/people/greet/login');
      expect((await root.post('auth/token/lookup-accessor', { accessor: tokenAccessor })).body.data.path).to.equal('auth/people/greet/login');
      const renewed = await as(token).post('auth/token/renew-self', { increment: '2h' });
      expect(renewed.status, renewed.text).to.equal(200);
      expect(renewed.body.auth.lease_duration).to.equal(7200);

      // The backend at the new path is built for it, and logins go there.
      expect((await root.get('auth/people/greet/hello', { token: '' })).body.data.mount).to.equal('people/greet/');
      expect((await root.post('auth/greet/login', { user: 'bob' }, { token: '' })).status).to.equal(404);
      const again = await root.post('auth/people/greet/login', { user: 'ada' }, { token: '' });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.auth.entity_id, 'the same alias, so the same entity').to.equal(login.body.auth.entity_id);
      const entity = (await root.get(`identity/entity/id/${login.body.auth.entity_id}`)).body.data;
      const alias = (await root.get(`identity/entity-alias/id/${entity.aliases[0].id}`)).body.data;
      expect(alias).to.include({ mount_accessor: accessor, mount_path: 'auth/people/greet/', name: 'ada' });
    });

    it('still asks the moved method at renewal, and disabling it revokes the tokens minted before the move', async () => {
      await root.post('sys/auth/doomed', { type: 'greeter' });
      const token = (await root.post('auth/doomed/login', { user: 'cy' }, { token: '' })).body.auth.client_token as string;
      expect((await root.post('sys/remount', { from: 'auth/doomed', to: 'auth/doomed-2' })).status).to.equal(200);
      await root.post('auth/doomed-2/deny-renewals', {});
      const refused = await as(token).post('auth/token/renew-self', {});
      expect(refused.status).to.equal(400);
      expect(refused.body.errors[0]).to.contain('renewal refused for cy');
      expect((await root.delete('sys/auth/doomed-2')).status).to.equal(204);
      expect((await as(token).get('auth/token/lookup-self')).status).to.equal(403);
    });
  });

  describe('refusals', () => {
    before(async () => {
      await root.post('sys/mounts/fixed', { type: 'notes' });
      await root.post('sys/mounts/taken', { type: 'notes' });
      await root.post('sys/auth/fixed-auth', { type: 'greeter' });
    });

    const refused = async (body: Record<string, unknown>, status: number, message: RegExp) => {
      const res = await root.post('sys/remount', body);
      expect(res.status, JSON.stringify(body)).to.equal(status);
      expect(res.body.errors[0], JSON.stringify(body)).to.match(message);
    };

    it('refuses a source with no mount, and the built-in mounts', async () => {
      await refused({ from: 'nothing-here', to: 'elsewhere' }, 400, /no mount at "nothing-here\/"/);
      await refused({ from: 'fixed/notes', to: 'elsewhere' }, 400, /no mount at "fixed\/notes\/"/);
      for (const from of ['sys', 'cubbyhole', 'identity', 'auth/token']) {
        await refused({ from, to: from.startsWith('auth/') ? 'auth/elsewhere' : 'elsewhere' }, 400, /cannot move the built-in mount/);
      }
    });

    it('refuses a target in use, inside or around a mount (the moved one too), or reserved', async () => {
      await refused({ from: 'fixed', to: 'taken' }, 409, /path is already in use at taken\//);
      await refused({ from: 'fixed', to: 'taken/deeper' }, 409, /existing mount at taken\//);
      await refused({ from: 'fixed', to: 'fixed/inner' }, 409, /existing mount at fixed\//);
      for (const to of ['sys/moved', 'cubbyhole/moved', 'identity/moved', 'audit/moved']) await refused({ from: 'fixed', to }, 400, /reserved/);
      await refused({ from: 'auth/fixed-auth', to: 'auth/token/inner' }, 409, /existing mount at auth\/token\//);
      expect((await root.get('sys/mounts/fixed')).body.data.type, 'still where it was').to.equal('notes');
    });

    it('refuses a move between the secrets engines and the auth methods', async () => {
      await refused({ from: 'fixed', to: 'auth/fixed' }, 400, /auth\/ is for auth methods/);
      await refused({ from: 'auth/fixed-auth', to: 'fixed-auth' }, 400, /an auth method stays under auth\//);
    });

    it('refuses missing or malformed paths, naming the field', async () => {
      await refused({ to: 'x' }, 400, /from/);
      await refused({ from: 'fixed' }, 400, /to/);
      await refused({ from: 'fixed', to: 'bad path' }, 400, /invalid mount path/);
      await refused({ from: 'fixed', to: '../escape' }, 400, /invalid mount path/);
    });

    it('needs sudo, as in Vault', async () => {
      await root.put('sys/policy/remount-no-sudo', { policy: 'path "sys/remount" { capabilities = ["update"] }' });
      await root.put('sys/policy/remount-sudo', { policy: 'path "sys/remount" { capabilities = ["update", "sudo"] }' });
      const plain = (await root.post('auth/token/create', { policies: ['remount-no-sudo'] })).body.auth.client_token as string;
      const sudo = (await root.post('auth/token/create', { policies: ['remount-sudo'] })).body.auth.client_token as string;
      expect((await as(plain).post('sys/remount', { from: 'fixed', to: 'fixed-by-sudo' })).status).to.equal(403);
      expect((await as(sudo).post('sys/remount', { from: 'fixed', to: 'fixed-by-sudo' })).status).to.equal(200);
      expect((await root.post('sys/remount', { from: 'fixed-by-sudo', to: 'fixed' })).status).to.equal(200);
    });

    it('answers 404 for a migration id it does not know', async () => {
      const res = await root.get('sys/remount/status/00000000-0000-0000-0000-000000000000');
      expect(res.status).to.equal(404);
      expect(res.body.errors[0]).to.contain('no mount migration');
    });
  });

  it('lists both paths in the OpenAPI document', async () => {
    const doc = (await root.get('sys/internal/specs/openapi')).body;
    expect(doc.paths['/sys/remount']).to.have.property('post');
    expect(doc.paths['/sys/remount/status/{migration_id}']).to.have.property('get');
  });
});
