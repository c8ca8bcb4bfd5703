/** sys/tools (transit's hash and random tools without a mount) and smaller Vault behaviours of the sys and token backends. */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';

describe('sys/tools and smaller Vault behaviours', function () {
  this.timeout(20_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  const input = Buffer.from('hash me').toString('base64');

  before(async () => {
    server = await startUnsealedServer();
  });
  after(() => server.close());

  it('hashes with sys/tools/hash, the algorithm in the URL or the body, as hex or base64', async () => {
    const sha256 = createHash('sha256').update('hash me').digest('hex');
    expect((await server.client.post('sys/tools/hash', { input })).body.data.sum).to.equal(sha256);
    expect((await server.client.post('sys/tools/hash/sha2-512', { input, format: 'base64' })).body.data.sum).to.equal(createHash('sha512').update('hash me').digest('base64'));
    expect((await server.client.post('sys/tools/hash', { input, algorithm: 'sha3-256' })).body.data.sum).to.equal(createHash('sha3-256').update('hash me').digest('hex'));
    const bad = await server.client.post('sys/tools/hash/md5', { input });
    expect(bad.status).to.equal(400);
    expect((await server.client.post('sys/tools/hash', { input: 'not base64!' })).status).to.equal(400);
  });

  it('answers the same sums as transit\'s hash', async () => {
    await server.client.post('sys/mounts/transit', { type: 'transit' });
    for (const alg of ['sha2-224', 'sha2-384', 'sha3-512']) {
      const sys = await server.client.post(`sys/tools/hash/${alg}`, { input });
      const transit = await server.client.post(`transit/hash/${alg}`, { input });
      expect(sys.body.data.sum, alg).to.equal(transit.body.data.sum);
    }
  });

  it('draws random bytes with sys/tools/random, the source and count in the URL or the body', async () => {
    expect(Buffer.from((await server.client.post('sys/tools/random', {})).body.data.random_bytes, 'base64')).to.have.length(32);
    expect(Buffer.from((await server.client.post('sys/tools/random/64', {})).body.data.random_bytes, 'base64')).to.have.length(64);
    expect((await server.client.post('sys/tools/random/all/16', { format: 'hex' })).body.data.random_bytes).to.match(/^[0-9a-f]{32}$/);
    expect((await server.client.post('sys/tools/random/seal', {})).status).to.equal(400);
    expect((await server.client.post('sys/tools/random', { bytes: 1_000_000 })).status).to.equal(400);
  });

  it('looks up the calling token with GET auth/token/lookup, and another token by body', async () => {
    const child = (await server.client.post('auth/token/create', { policies: ['default'], display_name: 'child' })).body.auth;
    const self = await server.client.get('auth/token/lookup');
    expect(self.status).to.equal(200);
    expect(self.body.data.policies).to.deep.equal(['root']);
    const other = await server.client.post('auth/token/lookup', { token: child.client_token });
    expect(other.body.data.accessor).to.equal(child.accessor);
    expect((await new TestClient(server.address, child.client_token).get('auth/token/lookup')).status).to.equal(403);
  });

  it('lets a mount\'s max_lease_ttl exceed the system maximum, and keeps default ≤ max', async () => {
    await server.client.post('sys/mounts/long', { type: 'transit' });
    expect((await server.client.post('sys/mounts/long/tune', { max_lease_ttl: '87600h' })).status).to.equal(204);
    expect((await server.client.get('sys/mounts/long/tune')).body.data.max_lease_ttl).to.equal(87600 * 3600);
    expect((await server.client.post('sys/mounts/long/tune', { default_lease_ttl: '87601h' })).status).to.equal(400);
  });

  it('says enterprise: false in sys/health, as Vault\'s community edition does', async () => {
    expect((await new TestClient(server.address).get('sys/health')).body.enterprise).to.equal(false);
  });
});
