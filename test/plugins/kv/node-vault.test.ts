/**
 * kv version 2 through the npm client node-vault, as an application uses it: its generic read,
 * write, list and delete calls on the data/ and metadata/ paths, and a version 1 mount.
 */
import { expect } from 'chai';
import nodeVault from 'node-vault';
import { startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

describe('kv through node-vault', function () {
  this.timeout(30_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let vault: nodeVault.client;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    vault = nodeVault({ apiVersion: 'v1', endpoint: server.address, token: server.rootToken });
    await vault.mount({ mount_point: 'secret', type: 'kv', options: { version: '2' } });
    await vault.mount({ mount_point: 'plain', type: 'kv' });
  });
  after(() => server.close());

  it('mounts kv with its version option', async () => {
    const mounts = await vault.mounts();
    expect(mounts['secret/'].type).to.equal('kv');
    expect(mounts['secret/'].options).to.deep.equal({ version: '2' });
  });

  it('writes versions, reads them back, lists and deletes', async () => {
    const written = await vault.write('secret/data/app/config', { data: { url: 'https://db', retries: 3 } });
    expect(written.data.version).to.equal(1);
    await vault.write('secret/data/app/config', { data: { url: 'https://db2', retries: 3 }, options: { cas: 1 } });
    const read = await vault.read('secret/data/app/config');
    expect(read.data.data).to.deep.equal({ url: 'https://db2', retries: 3 });
    expect(read.data.metadata.version).to.equal(2);
    expect((await vault.read('secret/data/app/config?version=1')).data.data.url).to.equal('https://db');

    expect((await vault.list('secret/metadata/app')).data.keys).to.deep.equal(['config']);
    expect((await vault.read('secret/metadata/app/config')).data.current_version).to.equal(2);

    await vault.delete('secret/data/app/config');
    try {
      await vault.read('secret/data/app/config');
      expect.fail('a deleted version read');
    } catch (err) {
      expect((err as { response?: { statusCode: number } }).response?.statusCode).to.equal(404);
    }
    await vault.write('secret/undelete/app/config', { versions: [2] });
    expect((await vault.read('secret/data/app/config')).data.data.url).to.equal('https://db2');
  });

  it('surfaces a check-and-set conflict as an error with Vault\'s message', async () => {
    try {
      await vault.write('secret/data/app/config', { data: { url: 'x' }, options: { cas: 1 } });
      expect.fail('a stale cas write succeeded');
    } catch (err) {
      expect((err as Error).message).to.contain('check-and-set parameter did not match the current version');
    }
  });

  it('reads and writes plain data on a version 1 mount', async () => {
    await vault.write('plain/service', { api_key: 'k1' });
    expect((await vault.read('plain/service')).data).to.deep.equal({ api_key: 'k1' });
    expect((await vault.list('plain')).data.keys).to.deep.equal(['service']);
  });
});
