/** The sys backend's auth table, keyring and periodic timer, over HTTP. */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import notesPlugin from '../../fixtures/plugins/notes.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';

describe('sys backend', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };
  let client: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin], periodicIntervalMs: 50 });
    client = server.client;
  });
  after(() => server.close());

  describe('sys/auth', () => {
    it('enables an auth method under auth/, lists it in Vault\'s shape and routes to it', async () => {
      expect((await client.post('sys/auth/greet-a', { type: 'greeter', description: 'first' })).status).to.equal(204);
      const list = await client.get('sys/auth');
      expect(list.status).to.equal(200);
      const entry = list.body.data['greet-a/'];
      expect(entry).to.include({ type: 'greeter', description: 'first', running_plugin_version: 'v0.1.0+builtin' });
      expect(entry.accessor).to.match(/^auth_greeter_[0-9a-f]{8}$/);
      expect(entry.config.token_type).to.equal('default-service');
      expect(list.body['greet-a/']).to.deep.equal(entry);
      const hello = await client.get('auth/greet-a/hello?name=keywarden', { token: '' });
      expect(hello.body.data).to.deep.equal({ greeting: 'hello keywarden', mount: 'greet-a/' });
    });

    it('refuses a secrets engine type in the auth table and an auth type in the mounts table', async () => {
      expect((await client.post('sys/auth/wrong', { type: 'notes' })).status).to.equal(400);
      expect((await client.post('sys/mounts/wrong', { type: 'greeter' })).status).to.equal(400);
    });

    it('tunes an auth method, including its token type', async () => {
      expect((await client.post('sys/auth/greet-a/tune', { token_type: 'batch', max_lease_ttl: '2h' })).status).to.equal(204);
      const tune = await client.get('sys/auth/greet-a/tune');
      expect(tune.body.data).to.include({ token_type: 'batch', max_lease_ttl: 7200 });
      expect((await client.post('sys/auth/greet-a/tune', { token_type: 'sometimes' })).status).to.equal(400);
    });

    it('refuses token_type on a secrets engine', async () => {
      await client.post('sys/mounts/notes-x', { type: 'notes' });
      const res = await client.post('sys/mounts/notes-x/tune', { token_type: 'batch' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.match(/token_type/);
    });

    it('disables an auth method', async () => {
      expect((await client.delete('sys/auth/greet-a')).status).to.equal(204);
      expect((await client.get('auth/greet-a/hello')).status).to.equal(404);
      expect((await client.get('sys/auth')).body.data).to.not.have.property('greet-a/');
    });

    it('accepts the null and empty values clients send on enable', async () => {
      const res = await client.post('sys/mounts/from-cli', {
        type: 'notes',
        description: null,
        config: { options: null, default_lease_ttl: '', max_lease_ttl: '', force_no_cache: false },
        local: false,
        seal_wrap: false,
        external_entropy_access: false,
        options: null,
        plugin_name: null,
      });
      expect(res.status).to.equal(204);
      expect((await client.get('sys/mounts/from-cli')).body.data.type).to.equal('notes');
    });
  });

  describe('keyring', () => {
    it('reports the active term and adds one on rotate, keeping old data readable', async () => {
      await client.post('sys/mounts/keep', { type: 'notes' });
      await client.post('keep/notes/old', { text: 'written under term 1' });
      const before = await client.get('sys/key-status');
      expect(before.body.data.term).to.equal(1);
      expect(before.body.term).to.equal(1);
      expect(Date.parse(before.body.data.install_time)).to.be.a('number').and.not.NaN;
      expect((await client.put('sys/rotate')).status).to.equal(204);
      expect((await client.get('sys/key-status')).body.data.term).to.equal(2);
      expect((await client.get('keep/notes/old')).body.data.text).to.equal('written under term 1');
    });
  });

  describe('periodic timer', () => {
    it('runs backends\' periodic hooks on the configured interval', async () => {
      await client.post('sys/mounts/ticking', { type: 'notes' });
      const first = (await client.get('ticking/state')).body.data.periodic_runs as number;
      await new Promise((r) => setTimeout(r, 300));
      const later = (await client.get('ticking/state')).body.data.periodic_runs as number;
      expect(later).to.be.greaterThan(first);
    });
  });
});
