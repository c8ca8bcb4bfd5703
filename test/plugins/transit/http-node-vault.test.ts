/**
 * Transit over real HTTP with the npm client node-vault, at a custom mount path, as an application
 * would use it: mount, create, encrypt, decrypt, rotate, rewrap, and reload with a new cache size.
 */
import { expect } from 'chai';
import nodeVault from 'node-vault';
import { startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

describe('transit through node-vault', function () {
  this.timeout(30_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let vault: nodeVault.client;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    vault = nodeVault({ apiVersion: 'v1', endpoint: server.address, token: server.rootToken });
    await vault.mount({ mount_point: 'crypto/eu', type: 'transit', description: 'EU keys' });
  });
  after(() => server.close());

  it('lists the custom mount', async () => {
    const mounts = await vault.mounts();
    expect(mounts['crypto/eu/'].type).to.equal('transit');
  });

  it('encrypts and decrypts, rotates, and rewraps to the new version', async () => {
    await vault.write('crypto/eu/keys/orders', { type: 'aes256-gcm96' });
    const plaintext = Buffer.from('order #4711: 3 widgets').toString('base64');
    const encrypted = await vault.write('crypto/eu/encrypt/orders', { plaintext });
    expect(encrypted.data.ciphertext).to.match(/^vault:v1:/);
    const decrypted = await vault.write('crypto/eu/decrypt/orders', { ciphertext: encrypted.data.ciphertext });
    expect(decrypted.data.plaintext).to.equal(plaintext);

    const rotated = await vault.write('crypto/eu/keys/orders/rotate', {});
    expect(rotated.data.latest_version).to.equal(2);
    const rewrapped = await vault.write('crypto/eu/rewrap/orders', { ciphertext: encrypted.data.ciphertext });
    expect(rewrapped.data.ciphertext).to.match(/^vault:v2:/);
    expect((await vault.write('crypto/eu/decrypt/orders', { ciphertext: rewrapped.data.ciphertext })).data.plaintext).to.equal(plaintext);
    expect((await vault.write('crypto/eu/decrypt/orders', { ciphertext: encrypted.data.ciphertext })).data.plaintext).to.equal(plaintext);
  });

  it('encrypts and decrypts a batch', async () => {
    const items = ['a', 'b', 'c'].map((s) => ({ plaintext: Buffer.from(s).toString('base64') }));
    const encrypted = await vault.write('crypto/eu/encrypt/orders', { batch_input: items });
    expect(encrypted.data.batch_results).to.have.length(3);
    const decrypted = await vault.write('crypto/eu/decrypt/orders', {
      batch_input: encrypted.data.batch_results.map((r: { ciphertext: string }) => ({ ciphertext: r.ciphertext })),
    });
    expect(decrypted.data.batch_results.map((r: { plaintext: string }) => Buffer.from(r.plaintext, 'base64').toString())).to.deep.equal(['a', 'b', 'c']);
  });

  it('lists keys with the LIST verb', async () => {
    const list = await vault.list('crypto/eu/keys');
    expect(list.data.keys).to.include('orders');
  });

  it('surfaces a 400 as an error with the server\'s message', async () => {
    try {
      await vault.write('crypto/eu/decrypt/orders', { ciphertext: 'vault:v1:not-base64!' });
      expect.fail('decrypt of garbage succeeded');
    } catch (err) {
      expect((err as { response?: { statusCode: number } }).response?.statusCode).to.equal(400);
    }
  });

  it('applies a new cache size after the mount is reloaded, and keys survive', async () => {
    await vault.write('crypto/eu/cache-config', { size: 25 });
    const reload = await vault.write('sys/plugins/reload/backend', { mounts: ['crypto/eu'] });
    expect(reload.data.reload_id).to.be.a('string');
    const cache = await vault.read('crypto/eu/cache-config');
    expect(cache.data.size).to.equal(25);
    expect(cache.warnings).to.equal(null);
    const key = await vault.read('crypto/eu/keys/orders');
    expect(key.data.latest_version).to.equal(2);
  });
});
