/**
 * sys/plugins/catalog over HTTP: register by type, name and version with a checksum and a module
 * file, read, list by type, delete; built-ins listed as v<version>+builtin; plugin_version on mount
 * and tune; a reload moving mounts to a newly registered version; a built-in never taken over by a
 * registration of its name; an environment that would change how the plugin's process starts refused.
 */
import { expect } from 'chai';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { initAndUnseal, startTestServer, startUnsealedServer, tempDir } from '../../helpers/server.js';
import { PLUGIN_CATALOG_PREFIX } from '../../../core/plugins/catalog.js';
import { echoSource, installModule } from '../../helpers/external-plugins.js';
import type { TestClient } from '../../helpers/http.js';

type Server = Awaited<ReturnType<typeof startUnsealedServer>>;

describe('sys/plugins/catalog', function () {
  this.timeout(60_000);
  let dir: { path: string; remove: () => Promise<void> };
  let outside: { path: string; remove: () => Promise<void> };
  let server: Server;
  let client: TestClient;
  let sha1: string;
  let sha2: string;

  before(async () => {
    dir = await tempDir('keywarden-plugins-');
    outside = await tempDir('keywarden-outside-');
    server = await startUnsealedServer({ pluginDirectory: dir.path });
    client = server.client;
    await mkdir(path.join(dir.path, 'echo'));
    sha1 = await installModule(dir.path, 'echo/1.0.0.mjs', echoSource({ version: '1.0.0' }));
    sha2 = await installModule(dir.path, 'echo/2.0.0.mjs', echoSource({ version: '2.0.0' }));
  });

  after(async () => {
    await server?.close();
    await dir?.remove();
    await outside?.remove();
  });

  it('lists the built-in plugins as builtin, with Vault\'s shape', async () => {
    const res = await client.get('sys/plugins/catalog');
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include.keys('auth', 'secret', 'database', 'detailed');
    expect(res.body.data.secret).to.include.members(['transit', 'notes']);
    expect(res.body.data.auth).to.include.members(['cloud', 'approle', 'userpass']);
    expect(res.body.data.database).to.deep.equal([]);
    for (const name of ['approle', 'userpass']) {
      const builtin = res.body.data.detailed.find((p: { name: string; type: string }) => p.name === name && p.type === 'auth');
      expect(builtin).to.deep.equal({ name, type: 'auth', version: 'v0.1.0+builtin', builtin: true, deprecation_status: 'supported' });
    }
    const transit = res.body.data.detailed.find((p: { name: string }) => p.name === 'transit');
    expect(transit).to.deep.equal({ name: 'transit', type: 'secret', version: 'v0.1.0+builtin', builtin: true, deprecation_status: 'supported' });
    const read = await client.get('sys/plugins/catalog/secret/transit');
    expect(read.body.data).to.deep.equal({ name: 'transit', version: 'v0.1.0+builtin', builtin: true, command: '', args: [], sha256: '', deprecation_status: 'supported' });
  });

  it('registers versions, reads each, and lists names by type', async () => {
    expect((await client.post('sys/plugins/catalog/secret/echo', { sha256: sha1, command: 'echo/1.0.0.mjs', version: '1.0.0', args: ['-x'] })).status).to.equal(204);
    expect((await client.post('sys/plugins/catalog/secret/echo', { sha256: sha2, command: 'echo/2.0.0.mjs', version: 'v2.0.0' })).status).to.equal(204);
    const one = await client.get('sys/plugins/catalog/secret/echo?version=v1.0.0');
    expect(one.body.data).to.deep.equal({ name: 'echo', version: 'v1.0.0', builtin: false, command: 'echo/1.0.0.mjs', args: ['-x'], sha256: sha1 });
    expect((await client.get('sys/plugins/catalog/secret/echo?version=2.0.0')).body.data.sha256).to.equal(sha2);
    // No unversioned entry and no built-in of that name.
    expect((await client.get('sys/plugins/catalog/secret/echo')).status).to.equal(404);
    expect((await client.list('sys/plugins/catalog/secret')).body.data.keys).to.include.members(['echo', 'transit']);
    expect((await client.list('sys/plugins/catalog/auth')).body.data.keys).to.deep.equal(['approle', 'aws', 'cloud', 'jwt', 'kubernetes', 'oidc', 'userpass']);
    const detailed = (await client.get('sys/plugins/catalog')).body.data.detailed.filter((p: { name: string }) => p.name === 'echo');
    expect(detailed).to.deep.equal([
      { name: 'echo', type: 'secret', version: 'v1.0.0', builtin: false, sha256: sha1 },
      { name: 'echo', type: 'secret', version: 'v2.0.0', builtin: false, sha256: sha2 },
    ]);
  });

  it('serves a name without a type (sys/plugins/catalog/:name) under the one type it is known as', async () => {
    expect((await client.get('sys/plugins/catalog/transit')).body.data).to.deep.include({ name: 'transit', builtin: true });
    expect((await client.get('sys/plugins/catalog/userpass')).body.data).to.deep.include({ name: 'userpass', builtin: true });
    expect((await client.get('sys/plugins/catalog/nosuch')).status).to.equal(404);
    // A new name needs its type; a known one takes the type it has.
    const untyped = await client.post('sys/plugins/catalog/untyped', { sha256: sha1, command: 'echo/1.0.0.mjs', version: '1.0.0' });
    expect(untyped.status).to.equal(400);
    expect(untyped.body.errors[0]).to.match(/missing required field "type"/);
    expect((await client.post('sys/plugins/catalog/untyped', { type: 'secret', sha256: sha1, command: 'echo/1.0.0.mjs', version: '1.0.0' })).status).to.equal(204);
    expect((await client.post('sys/plugins/catalog/untyped', { sha256: sha2, command: 'echo/2.0.0.mjs', version: '2.0.0' })).status).to.equal(204);
    expect((await client.get('sys/plugins/catalog/untyped?version=2.0.0')).body.data).to.deep.include({ name: 'untyped', sha256: sha2 });
    expect((await client.list('sys/plugins/catalog/secret')).body.data.keys).to.include('untyped');
    // The same name under both types is ambiguous without one.
    await client.post('sys/plugins/catalog/auth/untyped', { sha256: sha1, command: 'echo/1.0.0.mjs', version: '1.0.0' });
    const ambiguous = await client.get('sys/plugins/catalog/untyped?version=1.0.0');
    expect(ambiguous.status).to.equal(400);
    expect(ambiguous.body.errors[0]).to.match(/both auth and secret/);
    await client.delete('sys/plugins/catalog/auth/untyped?version=1.0.0');
    for (const version of ['1.0.0', '2.0.0']) expect((await client.delete(`sys/plugins/catalog/untyped?version=${version}`)).status).to.equal(204);
    expect((await client.get('sys/plugins/catalog/secret/untyped?version=1.0.0')).status).to.equal(404);
    expect((await client.delete('sys/plugins/catalog/untyped')).status).to.equal(204);
  });

  it('refuses bad registrations with a 400 naming the problem', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['secret/x', { command: 'echo/1.0.0.mjs' }, 'missing required field "sha256"'],
      ['secret/x', { sha256: sha1 }, 'missing required field "command"'],
      ['secret/x', { sha256: 'abc', command: 'echo/1.0.0.mjs' }, 'sha256 must be the 64 hex digits'],
      ['secret/x', { sha256: sha1, command: '../escape.mjs' }, 'must be a file name relative to the plugin directory'],
      ['secret/x', { sha256: sha1, command: '/etc/passwd' }, 'must be a file name relative to the plugin directory'],
      ['secret/x', { sha256: sha1, command: 'missing.mjs' }, 'does not exist in the plugin directory'],
      ['secret/x', { sha256: sha1, command: 'echo/1.0.0.mjs', version: 'one' }, 'is not a semantic version'],
      ['secret/x', { sha256: sha1, command: 'echo/1.0.0.mjs', version: '1.0.0+builtin' }, 'reserved for built-in plugins'],
      ['database/x', { sha256: sha1, command: 'echo/1.0.0.mjs' }, 'plugin type "database" is not supported'],
      ['secret/Bad_Name', { sha256: sha1, command: 'echo/1.0.0.mjs' }, 'must be lower-case letters'],
      ['secret/x', { sha256: sha1, command: 'echo/1.0.0.mjs', oci_image: 'img' }, 'oci_image'],
    ];
    for (const [where, body, why] of cases) {
      const res = await client.post(`sys/plugins/catalog/${where}`, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.errors[0], JSON.stringify(body)).to.include(why);
    }
  });

  it('refuses a symlink that leads out of the plugin directory', async () => {
    await writeFile(path.join(outside.path, 'evil.mjs'), echoSource({ name: 'evil' }));
    await symlink(path.join(outside.path, 'evil.mjs'), path.join(dir.path, 'evil.mjs'));
    const res = await client.post('sys/plugins/catalog/secret/evil', { sha256: sha1, command: 'evil.mjs' });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.include('leads out of the plugin directory');
  });

  it('needs sudo to register, as Vault\'s root-protected plugins/catalog/*', async () => {
    await client.put('sys/policy/ops', { policy: 'path "sys/plugins/catalog/*" { capabilities = ["create", "update", "read", "list", "delete"] }' });
    const token = (await client.post('auth/token/create', { policies: ['ops'] })).body.auth.client_token as string;
    const res = await client.post('sys/plugins/catalog/secret/echo', { sha256: sha1, command: 'echo/1.0.0.mjs', version: '1.0.0' }, { token });
    expect(res.status).to.equal(403);
  });

  it('mounts a chosen version, reports it, and refuses a version not in the catalog', async () => {
    expect((await client.post('sys/mounts/echo-v1', { type: 'echo', plugin_version: 'v1.0.0' })).status).to.equal(204);
    const mount = (await client.get('sys/mounts/echo-v1')).body.data;
    expect(mount).to.include({ plugin_version: 'v1.0.0', running_plugin_version: 'v1.0.0', running_sha256: sha1 });
    expect((await client.get('echo-v1/info')).body.data.version).to.equal('1.0.0');
    const missing = await client.post('sys/mounts/echo-v9', { type: 'echo', plugin_version: 'v9.0.0' });
    expect(missing.status).to.equal(400);
    expect(missing.body.errors).to.deep.equal(['plugin_version "v9.0.0" is not available for type "echo": registered versions are v1.0.0, v2.0.0']);
    // Two versions and no built-in: a mount must say which.
    const ambiguous = await client.post('sys/mounts/echo-any', { type: 'echo' });
    expect(ambiguous.status).to.equal(400);
    expect(ambiguous.body.errors[0]).to.include('choose one with plugin_version');
  });

  it('mounts built-ins as v<version>+builtin, with or without asking for that version', async () => {
    expect((await client.post('sys/mounts/t1', { type: 'transit' })).status).to.equal(204);
    expect((await client.post('sys/mounts/t2', { type: 'transit', plugin_version: 'v0.1.0+builtin' })).status).to.equal(204);
    expect((await client.get('sys/mounts/t1')).body.data).to.include({ plugin_version: '', running_plugin_version: 'v0.1.0+builtin', running_sha256: '' });
    expect((await client.get('sys/mounts/t2')).body.data).to.include({ plugin_version: 'v0.1.0+builtin', running_plugin_version: 'v0.1.0+builtin' });
  });

  it('moves a mount to a new version by tune and reload, keeping its data', async () => {
    await client.post('echo-v1/data/kept', { value: 'across versions' });
    expect((await client.post('sys/mounts/echo-v1/tune', { plugin_version: 'v2.0.0' })).status).to.equal(204);
    // The tune asks; the mount still runs v1 until it is reloaded.
    expect((await client.get('sys/mounts/echo-v1/tune')).body.data.plugin_version).to.equal('v2.0.0');
    expect((await client.get('echo-v1/info')).body.data.version).to.equal('1.0.0');
    expect((await client.post('sys/plugins/reload/backend', { plugin: 'echo' })).status).to.equal(200);
    expect((await client.get('echo-v1/info')).body.data.version).to.equal('2.0.0');
    expect((await client.get('sys/mounts/echo-v1')).body.data).to.include({ running_plugin_version: 'v2.0.0', running_sha256: sha2 });
    expect((await client.get('echo-v1/data/kept')).body.data).to.deep.equal({ value: 'across versions' });
    const bad = await client.post('sys/mounts/echo-v1/tune', { plugin_version: 'v3.0.0' });
    expect(bad.status).to.equal(400);
  });

  it('refuses to deregister a version a mount runs, and deletes one nobody uses', async () => {
    const inUse = await client.delete('sys/plugins/catalog/secret/echo?version=v2.0.0');
    expect(inUse.status).to.equal(400);
    expect(inUse.body.errors[0]).to.equal('plugin "echo" version "v2.0.0" is in use by echo-v1/: move or disable them first');
    expect((await client.delete('sys/plugins/catalog/secret/echo?version=v1.0.0')).status).to.equal(204);
    expect((await client.get('sys/plugins/catalog/secret/echo?version=v1.0.0')).status).to.equal(404);
    // Deleting what is not there is a no-op, as in Vault; built-ins stay.
    expect((await client.delete('sys/plugins/catalog/secret/echo?version=v7.0.0')).status).to.equal(204);
    expect((await client.delete('sys/plugins/catalog/secret/transit')).status).to.equal(400);
  });

  it('selects the only registered version when a mount names none, and pins it', async () => {
    expect((await client.post('sys/mounts/echo-auto', { type: 'echo' })).status).to.equal(204);
    expect((await client.get('sys/mounts/echo-auto')).body.data).to.include({ plugin_version: 'v2.0.0', running_plugin_version: 'v2.0.0' });
  });

  it('registers an unversioned entry, which a mount naming no version runs', async () => {
    const sha = await installModule(dir.path, 'plain.mjs', echoSource({ name: 'plain' }));
    expect((await client.post('sys/plugins/catalog/secret/plain', { sha256: sha, command: 'plain.mjs' })).status).to.equal(204);
    expect((await client.get('sys/plugins/catalog/secret/plain')).body.data).to.include({ name: 'plain', version: '', builtin: false, sha256: sha });
    expect((await client.post('sys/mounts/plain', { type: 'plain' })).status).to.equal(204);
    expect((await client.get('sys/mounts/plain')).body.data).to.include({ plugin_version: '', running_plugin_version: '', running_sha256: sha });
    expect((await client.delete('sys/plugins/catalog/secret/plain')).status).to.equal(400);
    expect((await client.delete('sys/mounts/plain')).status).to.equal(204);
    expect((await client.delete('sys/plugins/catalog/secret/plain')).status).to.equal(204);
  });

  it('refuses an environment that would change how the plugin\'s process starts, naming the variable', async () => {
    for (const [env, why] of [
      [['NODE_OPTIONS=--allow-fs-write=*'], 'env entry "NODE_OPTIONS" is refused'],
      [['LD_PRELOAD=/tmp/x.so'], 'env entry "LD_PRELOAD" is refused'],
      [['OPENSSL_CONF=/tmp/engine.cnf'], 'env entry "OPENSSL_CONF" is refused'],
      [['GLIBC_TUNABLES=glibc.malloc.check=3'], 'env entry "GLIBC_TUNABLES" is refused'],
      [['=value'], 'must be NAME=value'],
      [['NO_EQUALS'], 'must be NAME=value'],
      [['BAD-NAME=1'], 'must be NAME=value'],
    ] as const) {
      const res = await client.post('sys/plugins/catalog/secret/envy', { sha256: sha1, command: 'echo/1.0.0.mjs', env });
      expect(res.status, env[0]).to.equal(400);
      expect(res.body.errors[0], env[0]).to.include(why);
    }
    expect((await client.post('sys/plugins/catalog/secret/envy', { sha256: sha1, command: 'echo/1.0.0.mjs', env: ['GREETING=hi', 'TZ=UTC'] })).status).to.equal(204);
    expect((await client.delete('sys/plugins/catalog/secret/envy')).status).to.equal(204);
  });

  describe('a built-in\'s name', () => {
    let kvSha: string;

    before(async () => {
      await mkdir(path.join(dir.path, 'kv'));
      kvSha = await installModule(dir.path, 'kv/9.9.9.mjs', echoSource({ name: 'kv', version: '9.9.9' }));
      expect((await client.post('sys/mounts/kv-builtin', { type: 'kv' })).status).to.equal(204);
      await client.put('kv-builtin/held', { value: 'by the built-in' });
    });

    it('cannot be registered without a version: that entry would take over every mount of the built-in at its next reload', async () => {
      const res = await client.post('sys/plugins/catalog/secret/kv', { sha256: kvSha, command: 'kv/9.9.9.mjs' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.equal(
        'plugin "kv" is a built-in secret plugin: register its replacement with a version, then move mounts to it with plugin_version and a reload',
      );
      expect((await client.get('sys/plugins/catalog/secret/kv')).body.data).to.include({ builtin: true, version: 'v0.1.0+builtin' });
    });

    it('registered with a version, is run by a mount of the built-in only once that mount is pinned to it and reloaded', async () => {
      expect((await client.post('sys/plugins/catalog/secret/kv', { sha256: kvSha, command: 'kv/9.9.9.mjs', version: 'v9.9.9' })).status).to.equal(204);
      // The only registered version does not replace the built-in, for a new mount or at a reload.
      expect((await client.post('sys/mounts/kv-new', { type: 'kv' })).status).to.equal(204);
      expect((await client.get('sys/mounts/kv-new')).body.data).to.include({ plugin_version: '', running_plugin_version: 'v0.1.0+builtin' });
      expect((await client.post('sys/plugins/reload/backend', { plugin: 'kv' })).status).to.equal(200);
      expect((await client.get('sys/mounts/kv-builtin')).body.data).to.include({ running_plugin_version: 'v0.1.0+builtin', running_sha256: '' });
      expect((await client.get('kv-builtin/held')).body.data).to.deep.equal({ value: 'by the built-in' });
      // An operator's explicit choice moves it.
      expect((await client.post('sys/mounts/kv-new/tune', { plugin_version: 'v9.9.9' })).status).to.equal(204);
      expect((await client.post('sys/plugins/reload/backend', { mounts: ['kv-new/'] })).status).to.equal(200);
      expect((await client.get('sys/mounts/kv-new')).body.data).to.include({ running_plugin_version: 'v9.9.9', running_sha256: kvSha });
      expect((await client.get('kv-new/info')).body.data.version).to.equal('9.9.9');
      expect((await client.get('sys/mounts/kv-builtin')).body.data).to.include({ running_plugin_version: 'v0.1.0+builtin' });
    });

    it('stored without a version before such entries were refused, takes over nothing and can be deregistered', async () => {
      const shadow = { type: 'secret', name: 'kv', version: '', sha256: kvSha, command: 'kv/9.9.9.mjs', args: [], env: [] };
      await server.host.barrier.put(`${PLUGIN_CATALOG_PREFIX}secret/kv/unversioned`, Buffer.from(JSON.stringify(shadow)));
      expect((await client.post('sys/plugins/reload/backend', { mounts: ['kv-builtin/'] })).status).to.equal(200);
      expect((await client.get('sys/mounts/kv-builtin')).body.data).to.include({ running_plugin_version: 'v0.1.0+builtin' });
      expect((await client.get('kv-builtin/held')).body.data).to.deep.equal({ value: 'by the built-in' });
      expect((await client.delete('sys/plugins/catalog/secret/kv')).status).to.equal(204);
      expect(await server.host.barrier.get(`${PLUGIN_CATALOG_PREFIX}secret/kv/unversioned`)).to.equal(undefined);
      // Then only the built-in is left under the empty version, and it stays.
      expect((await client.delete('sys/plugins/catalog/secret/kv')).status).to.equal(400);
    });
  });

  it('keeps the catalog and the mounts\' versions across a restart', async () => {
    const leveldb = await tempDir();
    try {
      const first = await startTestServer({ pluginDirectory: dir.path, leveldbPath: leveldb.path });
      const { keys, rootToken } = await initAndUnseal(first, 1, 1);
      await first.client.post('sys/plugins/catalog/secret/echo', { sha256: sha1, command: 'echo/1.0.0.mjs', version: 'v1.0.0' });
      await first.client.post('sys/mounts/e', { type: 'echo' });
      await first.client.post('e/data/k', { value: 'v' });
      await first.close();
      const second = await startTestServer({ pluginDirectory: dir.path, leveldbPath: leveldb.path });
      try {
        await second.client.put('sys/unseal', { key: keys[0] });
        second.client.token = rootToken;
        expect((await second.client.get('sys/mounts/e')).body.data).to.include({ running_plugin_version: 'v1.0.0' });
        expect((await second.client.get('e/data/k')).body.data).to.deep.equal({ value: 'v' });
      } finally {
        await second.close();
      }
    } finally {
      await leveldb.remove();
    }
  });
});
