/**
 * The versioned kv engine (version 2) over raw HTTP, as Vault's API has it: data with versions and
 * check-and-set, merge-patch, soft delete, undelete and destroy, metadata and its settings, subkeys,
 * the mount config, max_versions and delete_version_after (with a clock moved by hand).
 */
import { expect } from 'chai';
import { ManualClock, startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

const MERGE_PATCH = { headers: { 'Content-Type': 'application/merge-patch+json' } };

describe('kv version 2 over HTTP', function () {
  this.timeout(30_000);
  let server: RunningServer & { client: TestClient };
  let client: TestClient;
  const clock = new ManualClock();

  before(async () => {
    server = await startUnsealedServer({ plugins: [], clock });
    client = server.client;
    const mounted = await client.post('sys/mounts/kv2', { type: 'kv', options: { version: '2' } });
    expect(mounted.status, mounted.text).to.equal(204);
  });
  after(() => server.close());

  it('writes versions and reads the current one or any by number, with Vault\'s shapes', async () => {
    const first = await client.post('kv2/data/app/db', { data: { user: 'app', password: 'one' } });
    expect(first.status, first.text).to.equal(200);
    expect(first.body.data).to.include({ version: 1, deletion_time: '', destroyed: false, custom_metadata: null });
    expect(first.body.data.created_time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    await client.put('kv2/data/app/db', { data: { user: 'app', password: 'two' } });

    const current = await client.get('kv2/data/app/db');
    expect(current.status).to.equal(200);
    expect(current.body.data.data).to.deep.equal({ user: 'app', password: 'two' });
    expect(current.body.data.metadata).to.include({ version: 2, destroyed: false, deletion_time: '' });
    expect((await client.get('kv2/data/app/db?version=1')).body.data.data).to.deep.equal({ user: 'app', password: 'one' });
    expect((await client.get('kv2/data/app/db?version=9')).status).to.equal(404);
    expect((await client.get('kv2/data/app/none')).body).to.deep.equal({ errors: [] });
  });

  it('refuses a write without data and a path ending in a slash', async () => {
    const none = await client.post('kv2/data/app/empty', { options: {} });
    expect(none.status).to.equal(400);
    expect(none.body.errors[0]).to.equal('no data provided');
    expect((await client.post('kv2/data/app/folder/', { data: { a: 1 } })).status).to.equal(400);
  });

  it('check-and-set: 0 creates only, N must be the current version', async () => {
    expect((await client.post('kv2/data/cas/one', { data: { a: 1 }, options: { cas: 0 } })).status).to.equal(200);
    const again = await client.post('kv2/data/cas/one', { data: { a: 2 }, options: { cas: 0 } });
    expect(again.status).to.equal(400);
    expect(again.body.errors).to.deep.equal(['check-and-set parameter did not match the current version']);
    expect((await client.post('kv2/data/cas/one', { data: { a: 2 }, options: { cas: 1 } })).body.data.version).to.equal(2);
    expect((await client.post('kv2/data/cas/one', { data: { a: 3 }, options: { cas: 'x' } })).body.errors).to.deep.equal(['error parsing check-and-set parameter']);
  });

  it('cas_required on a key or on the mount refuses writes without cas', async () => {
    expect((await client.post('kv2/metadata/cas/strict', { cas_required: true })).status).to.equal(204);
    const refused = await client.post('kv2/data/cas/strict', { data: { a: 1 } });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors).to.deep.equal(['check-and-set parameter required for this call']);
    expect((await client.post('kv2/data/cas/strict', { data: { a: 1 }, options: { cas: 0 } })).status).to.equal(200);

    expect((await client.post('kv2/config', { cas_required: true })).status).to.equal(204);
    try {
      expect((await client.post('kv2/data/cas/loose', { data: { a: 1 } })).status).to.equal(400);
    } finally {
      await client.post('kv2/config', { cas_required: false });
    }
  });

  it('patches the current version with a JSON merge patch, as a new version', async () => {
    await client.post('kv2/data/patch/me', { data: { keep: 'k', drop: 'd', nested: { a: 1, b: 2 } } });
    const patched = await client.send('PATCH', 'kv2/data/patch/me', { ...MERGE_PATCH, body: { data: { drop: null, nested: { b: null, c: 3 }, added: true } } });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.data.version).to.equal(2);
    expect((await client.get('kv2/data/patch/me')).body.data.data).to.deep.equal({ keep: 'k', nested: { a: 1, c: 3 }, added: true });

    expect((await client.send('PATCH', 'kv2/data/patch/none', { ...MERGE_PATCH, body: { data: { a: 1 } } })).status).to.equal(404);
    expect((await client.send('PATCH', 'kv2/data/patch/me', { body: { data: { a: 1 } } })).status).to.equal(415);
    const stale = await client.send('PATCH', 'kv2/data/patch/me', { ...MERGE_PATCH, body: { data: { a: 1 }, options: { cas: 1 } } });
    expect(stale.body.errors).to.deep.equal(['check-and-set parameter did not match the current version']);
  });

  it('never lets a key named __proto__ reach a prototype', async () => {
    await client.post('kv2/data/proto', { data: { plain: 1 } });
    await client.send('PATCH', 'kv2/data/proto', { ...MERGE_PATCH, body: { data: JSON.parse('{"__proto__": {"polluted": true}}') } });
    const read = await client.get('kv2/data/proto');
    expect(read.text).to.include('"__proto__":{"polluted":true}');
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  it('soft-deletes, undeletes and destroys versions; a gone version reads 404 with its metadata', async () => {
    for (const n of [1, 2, 3]) await client.post('kv2/data/life', { data: { n } });
    expect((await client.delete('kv2/data/life')).status).to.equal(204);
    const deleted = await client.get('kv2/data/life');
    expect(deleted.status).to.equal(404);
    expect(deleted.body.data.data).to.equal(null);
    expect(deleted.body.data.metadata.version).to.equal(3);
    expect(deleted.body.data.metadata.deletion_time).to.not.equal('');

    expect((await client.post('kv2/undelete/life', { versions: [3] })).status).to.equal(204);
    expect((await client.get('kv2/data/life')).body.data.data).to.deep.equal({ n: 3 });

    expect((await client.post('kv2/delete/life', { versions: [1, 2] })).status).to.equal(204);
    expect((await client.get('kv2/data/life?version=1')).status).to.equal(404);
    expect((await client.put('kv2/destroy/life', { versions: '2' })).status).to.equal(204);
    const destroyed = await client.get('kv2/data/life?version=2');
    expect(destroyed.status).to.equal(404);
    expect(destroyed.body.data.metadata.destroyed).to.equal(true);
    expect((await client.post('kv2/undelete/life', { versions: [2] })).status).to.equal(204);
    expect((await client.get('kv2/data/life?version=2')).body.data.metadata.destroyed).to.equal(true);
    expect((await client.post('kv2/undelete/life', { versions: [1] })).status).to.equal(204);
    expect((await client.get('kv2/data/life?version=1')).body.data.data).to.deep.equal({ n: 1 });

    expect((await client.post('kv2/delete/life', {})).body.errors).to.deep.equal(['no versions provided']);
  });

  it('reads, writes, patches, lists and deletes metadata', async () => {
    await client.post('kv2/data/meta/a', { data: { x: 1 } });
    await client.post('kv2/data/meta/a', { data: { x: 2 } });
    await client.post('kv2/data/meta/sub/b', { data: { y: 1 } });
    const written = await client.post('kv2/metadata/meta/a', { max_versions: 5, delete_version_after: '1h30m', custom_metadata: { owner: 'ops', tier: 1 } });
    expect(written.status, written.text).to.equal(204);

    const meta = await client.get('kv2/metadata/meta/a');
    expect(meta.status).to.equal(200);
    expect(meta.body.data).to.include({ cas_required: false, current_version: 2, delete_version_after: '1h30m0s', max_versions: 5, oldest_version: 0 });
    expect(meta.body.data.custom_metadata).to.deep.equal({ owner: 'ops', tier: '1' });
    expect(Object.keys(meta.body.data.versions)).to.deep.equal(['1', '2']);
    expect(meta.body.data.versions['1']).to.have.keys('created_time', 'deletion_time', 'destroyed');
    expect((await client.get('kv2/data/meta/a')).body.data.metadata.custom_metadata).to.deep.equal({ owner: 'ops', tier: '1' });

    const patched = await client.send('PATCH', 'kv2/metadata/meta/a', { ...MERGE_PATCH, body: { custom_metadata: { tier: null, env: 'prod' } } });
    expect(patched.status, patched.text).to.equal(204);
    const after = (await client.get('kv2/metadata/meta/a')).body.data;
    expect(after.custom_metadata).to.deep.equal({ owner: 'ops', env: 'prod' });
    expect(after.max_versions).to.equal(5);
    expect((await client.send('PATCH', 'kv2/metadata/meta/none', { ...MERGE_PATCH, body: { max_versions: 1 } })).status).to.equal(404);

    expect((await client.list('kv2/metadata/meta')).body.data.keys).to.deep.equal(['a', 'sub/']);
    expect((await client.get('kv2/metadata/meta/?list=true')).body.data.keys).to.deep.equal(['a', 'sub/']);
    expect((await client.list('kv2/metadata/')).body.data.keys).to.include('meta/');
    expect((await client.list('kv2/metadata/nothing/')).status).to.equal(404);

    expect((await client.delete('kv2/metadata/meta/a')).status).to.equal(204);
    expect((await client.get('kv2/metadata/meta/a')).status).to.equal(404);
    expect((await client.get('kv2/data/meta/a?version=1')).status).to.equal(404);
    expect((await client.list('kv2/metadata/meta')).body.data.keys).to.deep.equal(['sub/']);
  });

  it('refuses custom_metadata beyond Vault\'s limits', async () => {
    const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    const refused = await client.post('kv2/metadata/limits', { custom_metadata: tooMany });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.match(/custom_metadata: at most 64 keys/);
    expect((await client.post('kv2/metadata/limits', { custom_metadata: { k: 'x'.repeat(513) } })).body.errors[0]).to.match(/longer than 512 bytes/);
    expect((await client.post('kv2/metadata/limits', { custom_metadata: { k: { nested: 1 } } })).body.errors[0]).to.match(/must be a string/);
  });

  it('answers subkeys: the structure without the values, to a depth', async () => {
    await client.post('kv2/data/shape', { data: { a: 'secret', b: { c: 1, d: { e: [1, 2] } } } });
    const all = await client.get('kv2/subkeys/shape');
    expect(all.status).to.equal(200);
    expect(all.body.data.subkeys).to.deep.equal({ a: null, b: { c: null, d: { e: null } } });
    expect(all.body.data.metadata.version).to.equal(1);
    expect(all.text).to.not.include('secret"');
    expect((await client.get('kv2/subkeys/shape?depth=1')).body.data.subkeys).to.deep.equal({ a: null, b: null });
    await client.delete('kv2/data/shape');
    const gone = await client.get('kv2/subkeys/shape');
    expect(gone.status).to.equal(404);
    expect(gone.body.data.subkeys).to.equal(null);
  });

  it('keeps max_versions versions: the oldest are dropped and oldest_version moves', async () => {
    await client.post('kv2/metadata/trim', { max_versions: 2 });
    for (const n of [1, 2, 3, 4]) await client.post('kv2/data/trim', { data: { n } });
    const meta = (await client.get('kv2/metadata/trim')).body.data;
    expect(meta.current_version).to.equal(4);
    expect(meta.oldest_version).to.equal(3);
    expect(Object.keys(meta.versions)).to.deep.equal(['3', '4']);
    expect((await client.get('kv2/data/trim?version=2')).status).to.equal(404);
    expect((await client.get('kv2/data/trim?version=3')).body.data.data).to.deep.equal({ n: 3 });
  });

  it('reads and writes the mount config; its max_versions applies to keys without their own', async () => {
    const initial = await client.get('kv2/config');
    expect(initial.body.data).to.deep.equal({ cas_required: false, delete_version_after: '0s', max_versions: 0 });
    await client.post('kv2/config', { max_versions: 1 });
    try {
      await client.post('kv2/data/mount-trim', { data: { n: 1 } });
      await client.post('kv2/data/mount-trim', { data: { n: 2 } });
      expect(Object.keys((await client.get('kv2/metadata/mount-trim')).body.data.versions)).to.deep.equal(['2']);
      expect((await client.get('kv2/config')).body.data.max_versions).to.equal(1);
    } finally {
      await client.post('kv2/config', { max_versions: 0 });
    }
  });

  it('delete_version_after: a version reads as deleted once its time has come (the smaller of mount and key)', async () => {
    await client.post('kv2/config', { delete_version_after: '2h' });
    try {
      await client.post('kv2/metadata/ttl', { delete_version_after: '30m' });
      const written = await client.post('kv2/data/ttl', { data: { v: 1 } });
      const created = Date.parse(written.body.data.created_time);
      expect(Date.parse(written.body.data.deletion_time) - created).to.equal(30 * 60 * 1000);
      await client.post('kv2/data/ttl-mount', { data: { v: 1 } });

      clock.advance(29 * 60);
      expect((await client.get('kv2/data/ttl')).status).to.equal(200);
      clock.advance(2 * 60);
      expect((await client.get('kv2/data/ttl')).status).to.equal(404);
      expect((await client.get('kv2/data/ttl-mount')).status).to.equal(200);
      clock.advance(2 * 3600);
      expect((await client.get('kv2/data/ttl-mount')).status).to.equal(404);
      expect((await client.post('kv2/undelete/ttl-mount', { versions: [1] })).status).to.equal(204);
      expect((await client.get('kv2/data/ttl-mount')).body.data.data).to.deep.equal({ v: 1 });
    } finally {
      await client.post('kv2/config', { delete_version_after: 0 });
    }
  });

  it('answers a path it does not serve with a 404 that names the versioned paths, as Vault does', async () => {
    for (const res of [await client.get('kv2/app/db'), await client.post('kv2/app/db', { a: 1 })]) {
      expect(res.status).to.equal(404);
      expect(res.body.data).to.equal(null);
      expect(res.body.warnings[0]).to.match(/^Invalid path for a versioned K\/V secrets engine/);
    }
  });

  it('honours create and update capabilities apart, and patch as its own', async () => {
    await client.post('sys/policies/acl/kv-writer', { policy: 'path "kv2/data/acl/*" { capabilities = ["create", "read"] }' });
    const token = (await client.post('auth/token/create', { policies: ['kv-writer'] })).body.auth.client_token as string;
    const as = { token };
    expect((await client.post('kv2/data/acl/new', { data: { a: 1 } }, as)).status).to.equal(200);
    expect((await client.post('kv2/data/acl/new', { data: { a: 2 } }, as)).status).to.equal(403);
    expect((await client.send('PATCH', 'kv2/data/acl/new', { ...MERGE_PATCH, ...as, body: { data: { a: 2 } } })).status).to.equal(403);
    expect((await client.get('kv2/data/acl/new', as)).body.data.data).to.deep.equal({ a: 1 });
  });
});
