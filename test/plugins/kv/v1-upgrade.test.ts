/**
 * kv version 1 (plain key/value), the in-place upgrade of a version 1 mount to version 2 by tuning
 * its options as Vault does, and `sys/internal/ui/mounts/:path`, through which clients learn a
 * mount's version.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

describe('kv version 1, the upgrade to version 2, and sys/internal/ui/mounts', function () {
  this.timeout(30_000);
  let server: RunningServer & { client: TestClient };
  let client: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    client = server.client;
  });
  after(() => server.close());

  it('version 1 writes, reads, lists and deletes plain data', async () => {
    expect((await client.post('sys/mounts/plain', { type: 'kv' })).status).to.equal(204);
    expect((await client.post('plain/app/db', { user: 'app', port: 5432, tags: ['a'] })).status).to.equal(204);
    await client.post('plain/app/cache', { url: 'redis://x' });
    await client.post('plain/top', { a: 'b' });
    const read = await client.get('plain/app/db');
    expect(read.status).to.equal(200);
    expect(read.body.data).to.deep.equal({ user: 'app', port: 5432, tags: ['a'] });
    expect(read.body.warnings).to.equal(null);
    expect((await client.list('plain/app')).body.data.keys).to.deep.equal(['cache', 'db']);
    expect((await client.list('plain/')).body.data.keys).to.deep.equal(['app/', 'top']);
    expect((await client.post('plain/app/db', { user: 'other' })).status).to.equal(204);
    expect((await client.get('plain/app/db')).body.data).to.deep.equal({ user: 'other' });
    expect((await client.delete('plain/app/db')).status).to.equal(204);
    expect((await client.get('plain/app/db')).status).to.equal(404);
    expect((await client.post('plain/empty', {})).body.errors).to.deep.equal(['missing data fields']);
  });

  it('takes Vault\'s type aliases kv-v1 and kv-v2', async () => {
    expect((await client.post('sys/mounts/alias2', { type: 'kv-v2' })).status).to.equal(204);
    expect((await client.post('sys/mounts/alias1', { type: 'kv-v1', options: { version: '2' } })).status).to.equal(204);
    const mounts = (await client.get('sys/mounts')).body.data;
    expect(mounts['alias2/']).to.deep.include({ type: 'kv', options: { version: '2' } });
    expect(mounts['alias1/']).to.deep.include({ type: 'kv', options: { version: '1' } });
    expect((await client.post('alias2/data/x', { data: { a: 1 } })).body.data.version).to.equal(1);
  });

  it('refuses an unknown version', async () => {
    const refused = await client.post('sys/mounts/bad', { type: 'kv', options: { version: '3' } });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.match(/options\.version must be 1 or 2/);
  });

  it('tuning options.version to 2 upgrades in place: every key becomes version 1 of a secret', async () => {
    expect((await client.post('sys/mounts/legacy', { type: 'kv', options: { version: '1' } })).status).to.equal(204);
    await client.post('legacy/team/a', { k: 'v1' });
    await client.post('legacy/team/deep/b', { k: 'v2' });
    await client.post('legacy/c', { n: 1 });

    const tuned = await client.post('sys/mounts/legacy/tune', { options: { version: '2' } });
    expect(tuned.status, tuned.text).to.equal(204);
    expect((await client.get('sys/mounts/legacy/tune')).body.data.options).to.deep.equal({ version: '2' });

    const a = await client.get('legacy/data/team/a');
    expect(a.status, a.text).to.equal(200);
    expect(a.body.data.data).to.deep.equal({ k: 'v1' });
    expect(a.body.data.metadata.version).to.equal(1);
    expect((await client.get('legacy/data/team/deep/b')).body.data.data).to.deep.equal({ k: 'v2' });
    expect((await client.list('legacy/metadata/')).body.data.keys).to.deep.equal(['c', 'team/']);
    expect((await client.get('legacy/team/a')).status).to.equal(404);
    expect((await client.post('legacy/data/c', { data: { n: 2 } })).body.data.version).to.equal(2);

    const back = await client.post('sys/mounts/legacy/tune', { options: { version: '1' } });
    expect(back.status).to.equal(400);
    expect(back.body.errors[0]).to.match(/cannot go back to version 1/);
    expect((await client.get('sys/mounts/legacy/tune')).body.data.options).to.deep.equal({ version: '2' });
    expect((await client.get('legacy/data/c')).body.data.data).to.deep.equal({ n: 2 });
  });

  it('sys/internal/ui/mounts names the mount, its type and version, to a token that may use it', async () => {
    await client.post('sys/mounts/versioned', { type: 'kv', options: { version: '2' } });
    const info = await client.get('sys/internal/ui/mounts/versioned/some/secret');
    expect(info.status, info.text).to.equal(200);
    expect(info.body.data).to.include({ type: 'kv', path: 'versioned/' });
    expect(info.body.data.options).to.deep.equal({ version: '2' });
    expect(info.body.data).to.have.keys('accessor', 'config', 'description', 'external_entropy_access', 'local', 'options', 'path', 'plugin_version', 'running_plugin_version', 'running_sha256', 'seal_wrap', 'type', 'uuid');

    await client.post('sys/policies/acl/versioned-reader', { policy: 'path "versioned/data/team/*" { capabilities = ["read"] }' });
    const reader = (await client.post('auth/token/create', { policies: ['versioned-reader'] })).body.auth.client_token as string;
    expect((await client.get('sys/internal/ui/mounts/versioned/team/x', { token: reader })).body.data.path).to.equal('versioned/');
    const other = await client.get('sys/internal/ui/mounts/plain/x', { token: reader });
    expect(other.status).to.equal(403);
    expect(other.body.errors[0]).to.match(/preflight capability check returned 403/);
    expect((await client.get('sys/internal/ui/mounts/nowhere/x')).status).to.equal(403);
    expect((await client.get('sys/internal/ui/mounts/versioned/x', { token: '' })).status).to.equal(403);
  });
});
