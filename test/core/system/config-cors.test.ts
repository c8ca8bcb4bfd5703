/** sys/config/cors over HTTP, and the CORS answers it governs. */
import { expect } from 'chai';
import { initAndUnseal, startTestServer } from '../../helpers/server.js';
import { TestClient, createToken } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

const ALLOWED = 'https://app.example.com';

describe('sys/config/cors', function () {
  let server: RunningServer & { client: TestClient };
  let unsealKey: string;

  before(async () => {
    server = await startTestServer();
    unsealKey = (await initAndUnseal(server, 1, 1)).keys[0]!;
  });
  after(() => server.close());
  afterEach(() => server.client.delete('sys/config/cors'));

  it('is off by default: a request with an Origin is answered without CORS headers', async () => {
    expect((await server.client.get('sys/config/cors')).body.data).to.deep.equal({ enabled: false });
    const res = await server.client.get('sys/mounts', { headers: { Origin: 'https://elsewhere.example.com' } });
    expect(res.status).to.equal(200);
    expect(res.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('reads back what was set, with the standard headers and the configured ones', async () => {
    expect((await server.client.put('sys/config/cors', { allowed_origins: [ALLOWED], allowed_headers: ['X-Custom'] })).status).to.equal(204);
    const data = (await server.client.get('sys/config/cors')).body.data;
    expect(data.enabled).to.equal(true);
    expect(data.allowed_origins).to.deep.equal([ALLOWED]);
    expect(data.allowed_headers).to.include.members(['X-Vault-Token', 'Content-Type', 'X-Custom']);
  });

  it('gives an allowed origin Access-Control-Allow-Origin and Vary: Origin', async () => {
    await server.client.put('sys/config/cors', { allowed_origins: [ALLOWED] });
    const res = await server.client.get('sys/mounts', { headers: { Origin: ALLOWED } });
    expect(res.status).to.equal(200);
    expect(res.headers['access-control-allow-origin']).to.equal(ALLOWED);
    expect(res.headers.vary).to.equal('Origin');
  });

  it('answers a preflight from an allowed origin 204 with the allowed methods and headers, without a token', async () => {
    await server.client.put('sys/config/cors', { allowed_origins: [ALLOWED], allowed_headers: ['X-Custom'] });
    const res = await new TestClient(server.address).send('OPTIONS', 'secret/data/x', {
      headers: { Origin: ALLOWED, 'Access-Control-Request-Method': 'PUT' },
    });
    expect(res.status).to.equal(204);
    expect(res.headers['access-control-allow-origin']).to.equal(ALLOWED);
    expect(String(res.headers['access-control-allow-methods']).split(',')).to.include.members(['GET', 'PUT', 'POST', 'DELETE', 'LIST', 'OPTIONS']);
    expect(String(res.headers['access-control-allow-headers']).split(',')).to.include.members(['X-Vault-Token', 'X-Custom']);
  });

  it('refuses a request from an origin that is not allowed with 403', async () => {
    await server.client.put('sys/config/cors', { allowed_origins: [ALLOWED] });
    const res = await server.client.get('sys/mounts', { headers: { Origin: 'https://evil.example.com' } });
    expect(res.status).to.equal(403);
    expect(res.body.errors).to.deep.equal(['origin not allowed']);
    expect(res.headers['access-control-allow-origin']).to.equal(undefined);
    // A client that sends no Origin (not a browser) is served as before.
    expect((await server.client.get('sys/mounts')).status).to.equal(200);
  });

  it('allows every origin with the wildcard alone, and refuses it among other origins', async () => {
    await server.client.put('sys/config/cors', { allowed_origins: '*' });
    const res = await server.client.get('sys/mounts', { headers: { Origin: 'https://any.example.com' } });
    expect(res.headers['access-control-allow-origin']).to.equal('https://any.example.com');
    const mixed = await server.client.put('sys/config/cors', { allowed_origins: ['*', ALLOWED] });
    expect(mixed.status).to.equal(400);
    expect(mixed.body.errors[0]).to.match(/allowed_origins/);
  });

  it('refuses turning CORS on without an origin, naming allowed_origins', async () => {
    const res = await server.client.put('sys/config/cors', {});
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.match(/allowed_origins/);
  });

  it('DELETE turns CORS off, and so does enabled false', async () => {
    await server.client.put('sys/config/cors', { allowed_origins: [ALLOWED] });
    await server.client.delete('sys/config/cors');
    expect((await server.client.get('sys/mounts', { headers: { Origin: 'https://evil.example.com' } })).status).to.equal(200);
    await server.client.put('sys/config/cors', { allowed_origins: [ALLOWED] });
    await server.client.put('sys/config/cors', { enabled: false, allowed_origins: [ALLOWED] });
    expect((await server.client.get('sys/config/cors')).body.data.enabled).to.equal(false);
    expect((await server.client.get('sys/mounts', { headers: { Origin: 'https://evil.example.com' } })).status).to.equal(200);
  });

  it('keeps the setting across a seal and unseal (it is stored behind the barrier)', async () => {
    await server.client.put('sys/config/cors', { allowed_origins: [ALLOWED] });
    expect((await server.client.put('sys/seal')).status).to.equal(204);
    expect((await server.client.put('sys/unseal', { key: unsealKey })).body.sealed).to.equal(false);
    expect((await server.client.get('sys/mounts', { headers: { Origin: 'https://evil.example.com' } })).status).to.equal(403);
    expect((await server.client.get('sys/mounts', { headers: { Origin: ALLOWED } })).headers['access-control-allow-origin']).to.equal(ALLOWED);
  });

  it('needs sudo: a policy granting every capability but sudo is refused', async () => {
    await server.client.put('sys/policies/acl/cors', { policy: 'path "sys/config/cors" { capabilities = ["create", "read", "update", "delete"] }' });
    const caller = new TestClient(server.address, await createToken(server.client, { policies: ['cors'] }));
    expect((await caller.get('sys/config/cors')).status).to.equal(403);
    expect((await caller.put('sys/config/cors', { allowed_origins: [ALLOWED] })).status).to.equal(403);
  });
});
