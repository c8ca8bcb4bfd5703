/**
 * The host end to end on LevelDB: init with shares, unseal, two mounts of one plugin, restart,
 * sealed after restart, data kept, reload rebuilding state, nothing readable on disk.
 */
import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestServer, tempDir } from '../helpers/server.js';
import type { TestClient } from '../helpers/http.js';
import type { RunningServer } from '../../core/server.js';
import { LevelDbStorage } from '../../storage/leveldb.js';
import { SealedError } from '../../core/errors.js';

async function filesUnder(dir: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    parts.push(entry.isDirectory() ? await filesUnder(full) : await readFile(full));
  }
  return Buffer.concat(parts);
}

describe('server on LevelDB', function () {
  this.timeout(60_000);
  let dir: { path: string; remove: () => Promise<void> };
  let server: (RunningServer & { client: TestClient }) | undefined;
  let keys: string[];
  let rootToken: string;
  const marker = 'plaintext-marker-7f3a9c2e';

  before(async () => {
    dir = await tempDir();
  });
  after(async () => {
    await server?.close();
    await dir.remove();
  });

  const start = async () => {
    server = await startTestServer({ leveldbPath: path.join(dir.path, 'data') });
    return server.client;
  };

  it('initializes with 5 shares and threshold 3, and stays sealed', async () => {
    const client = await start();
    const init = await client.put('sys/init', { secret_shares: 5, secret_threshold: 3 });
    expect(init.status).to.equal(200);
    expect(init.body.keys).to.have.length(5);
    expect(init.body.keys_base64).to.have.length(5);
    for (const key of init.body.keys as string[]) expect(key).to.match(/^[0-9a-f]{66}$/);
    expect(init.body.root_token).to.match(/^hvs\.[A-Za-z0-9]{24}$/);
    keys = init.body.keys;
    rootToken = init.body.root_token;
    const status = await client.get('sys/seal-status');
    expect(status.body).to.include({ initialized: true, sealed: true, t: 3, n: 5, progress: 0 });
    const again = await client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
    expect(again.status).to.equal(400);
  });

  it('refuses a wrong share with 400 and leaves progress unchanged', async () => {
    const client = server!.client;
    expect((await client.put('sys/unseal', { key: keys[0] })).body.progress).to.equal(1);
    const forged = `${keys[1]!.slice(0, 10)}${keys[1]![10] === '0' ? '1' : '0'}${keys[1]!.slice(11)}`;
    const wrong = await client.put('sys/unseal', { key: forged });
    expect(wrong.status).to.equal(400);
    const garbage = await client.put('sys/unseal', { key: 'not a key' });
    expect(garbage.status).to.equal(400);
    expect((await client.get('sys/seal-status')).body.progress).to.equal(1);
    const repeated = await client.put('sys/unseal', { key: keys[0] });
    expect(repeated.body.progress).to.equal(1);
    const reset = await client.put('sys/unseal', { reset: true });
    expect(reset.body.progress).to.equal(0);
  });

  it('unseals with any 3 of the 5 shares, hex or base64', async () => {
    const client = server!.client;
    expect((await client.put('sys/unseal', { key: keys[4] })).body).to.include({ sealed: true, progress: 1 });
    const b64 = Buffer.from(keys[2]!, 'hex').toString('base64');
    expect((await client.put('sys/unseal', { key: b64 })).body).to.include({ sealed: true, progress: 2 });
    const done = await client.put('sys/unseal', { key: keys[0] });
    expect(done.body).to.include({ sealed: false, progress: 0 });
    expect(done.body.cluster_id).to.be.a('string');
    expect((await client.get('sys/health')).status).to.equal(200);
  });

  it('mounts the test plugin at two custom paths and keeps their data apart', async () => {
    const client = server!.client;
    client.token = rootToken;
    expect((await client.post('sys/mounts/crypto/eu', { type: 'notes', description: 'EU notes' })).status).to.equal(204);
    expect((await client.post('sys/mounts/team-a/', { type: 'notes' })).status).to.equal(204);
    expect((await client.post('crypto/eu/notes/shared', { text: `${marker}-eu` })).status).to.equal(204);
    expect((await client.post('team-a/notes/shared', { text: `${marker}-a` })).status).to.equal(204);
    expect((await client.get('crypto/eu/notes/shared')).body.data.text).to.equal(`${marker}-eu`);
    expect((await client.get('team-a/notes/shared')).body.data.text).to.equal(`${marker}-a`);
    const mounts = await client.get('sys/mounts');
    expect(mounts.body.data['crypto/eu/']).to.include({ type: 'notes', description: 'EU notes', running_plugin_version: 'v1.2.3+builtin' });
    expect(mounts.body.data['crypto/eu/'].uuid).to.not.equal(mounts.body.data['team-a/'].uuid);
    expect(mounts.body.data['crypto/eu/'].accessor).to.match(/^notes_[0-9a-f]{8}$/);
  });

  it('refuses a path in use (409), a nested path (409) and an unknown type (400)', async () => {
    const client = server!.client;
    expect((await client.post('sys/mounts/team-a', { type: 'notes' })).status).to.equal(409);
    expect((await client.post('sys/mounts/crypto', { type: 'notes' })).status).to.equal(409);
    expect((await client.post('sys/mounts/team-a/inner', { type: 'notes' })).status).to.equal(409);
    const unknown = await client.post('sys/mounts/x', { type: 'no-such-engine' });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.errors[0]).to.contain('no-such-engine');
    expect((await client.post('sys/mounts/sys/x', { type: 'notes' })).status).to.equal(400);
  });

  it('tunes a mount and reports effective TTLs', async () => {
    const client = server!.client;
    expect((await client.post('sys/mounts/team-a/tune', { default_lease_ttl: '1h', description: 'team A' })).status).to.equal(204);
    const tune = await client.get('sys/mounts/team-a/tune');
    expect(tune.body.data).to.include({ default_lease_ttl: 3600, max_lease_ttl: 768 * 3600, description: 'team A' });
    const bad = await client.post('sys/mounts/team-a/tune', { default_lease_ttl: '10000h' });
    expect(bad.status).to.equal(400);
  });

  it('survives a restart: sealed (503) until unsealed, then the data is there', async () => {
    await server!.close();
    const client = await start();
    client.token = rootToken;
    const sealed = await client.get('crypto/eu/notes/shared');
    expect(sealed.status).to.equal(503);
    expect(sealed.body).to.deep.equal({ errors: [new SealedError().message] });
    for (const key of [keys[1], keys[3], keys[4]]) await client.put('sys/unseal', { key });
    expect((await client.get('sys/seal-status')).body.sealed).to.equal(false);
    expect((await client.get('crypto/eu/notes/shared')).body.data.text).to.equal(`${marker}-eu`);
    expect((await client.get('team-a/notes/shared')).body.data.text).to.equal(`${marker}-a`);
    expect((await client.get('sys/mounts/team-a/tune')).body.data.description).to.equal('team A');
  });

  it('reloads one mount: its in-memory state is rebuilt, the other mount and the data are untouched', async () => {
    const client = server!.client;
    const eu1 = (await client.get('crypto/eu/state')).body.data;
    const a1 = (await client.get('team-a/state')).body.data;
    expect(eu1.initialized).to.equal(true);
    const reload = await client.post('sys/plugins/reload/backend', { mounts: ['crypto/eu/'] });
    expect(reload.status).to.equal(200);
    expect(reload.body.data.reload_id).to.be.a('string');
    const eu2 = (await client.get('crypto/eu/state')).body.data;
    const a2 = (await client.get('team-a/state')).body.data;
    expect(eu2.instance).to.not.equal(eu1.instance);
    expect(eu2.uuid).to.equal(eu1.uuid);
    expect(eu2.requests).to.equal(0);
    expect(a2.instance).to.equal(a1.instance);
    expect((await client.get('crypto/eu/notes/shared')).body.data.text).to.equal(`${marker}-eu`);
  });

  it('reloads every mount of a plugin by name, and refuses bad reload requests', async () => {
    const client = server!.client;
    const before = [(await client.get('crypto/eu/state')).body.data.instance, (await client.get('team-a/state')).body.data.instance];
    expect((await client.post('sys/plugins/reload/backend', { plugin: 'notes' })).status).to.equal(200);
    const after = [(await client.get('crypto/eu/state')).body.data.instance, (await client.get('team-a/state')).body.data.instance];
    expect(after[0]).to.not.equal(before[0]);
    expect(after[1]).to.not.equal(before[1]);
    const both = await client.post('sys/plugins/reload/backend', { plugin: 'notes', mounts: 'team-a' });
    expect(both.body.errors).to.deep.equal(['plugin and mounts cannot be set at the same time']);
    const neither = await client.post('sys/plugins/reload/backend', {});
    expect(neither.body.errors).to.deep.equal(['plugin or mounts must be provided']);
    expect((await client.post('sys/plugins/reload/backend', { mounts: 'nowhere' })).status).to.equal(400);
  });

  it('runs backends\' periodic hooks from the host', async () => {
    const client = server!.client;
    const before = (await client.get('team-a/state')).body.data.periodic_runs;
    await server!.host.runPeriodic();
    expect((await client.get('team-a/state')).body.data.periodic_runs).to.equal(before + 1);
  });

  it('seals on request and answers 503 afterwards', async () => {
    const client = server!.client;
    expect((await client.put('sys/seal')).status).to.equal(204);
    expect((await client.get('team-a/notes/shared')).status).to.equal(503);
    for (const key of [keys[0], keys[1], keys[2]]) await client.put('sys/unseal', { key });
    expect((await client.get('team-a/notes/shared')).status).to.equal(200);
  });

  it('deletes a mount\'s storage when it is disabled', async () => {
    const client = server!.client;
    const uuid = (await client.get('sys/mounts')).body.data['team-a/'].uuid as string;
    expect((await client.delete('sys/mounts/team-a')).status).to.equal(204);
    expect((await client.get('team-a/notes/shared')).status).to.equal(404);
    await server!.close();
    server = undefined;
    const physical = await LevelDbStorage.open(path.join(dir.path, 'data'));
    try {
      expect(await physical.list(`logical/${uuid}/`)).to.deep.equal([]);
      expect((await physical.list('logical/')).length).to.be.greaterThan(0);
    } finally {
      await physical.close();
    }
  });

  it('keeps no stored value, share or token in plaintext in the LevelDB files', async () => {
    const bytes = await filesUnder(path.join(dir.path, 'data'));
    expect(bytes.length).to.be.greaterThan(0);
    for (const secret of [marker, rootToken, ...keys]) {
      expect(bytes.includes(Buffer.from(secret)), secret.slice(0, 12)).to.equal(false);
    }
    expect(bytes.includes(Buffer.from(keys[0]!, 'hex'))).to.equal(false);
  });
});
