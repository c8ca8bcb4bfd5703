/**
 * sys/config/auditing/request-headers over HTTP: configuring which request headers audit entries
 * record, and what the entries then hold.
 */
import { expect } from 'chai';
import path from 'node:path';
import { API_AUDIT, initAndUnseal, startTestServer, tempDir } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { readEntries } from '../audit/helpers.js';

describe('sys/config/auditing/request-headers', function () {
  this.timeout(30_000);
  let server: RunningServer & { client: TestClient };
  let dir: { path: string; remove: () => Promise<void> };
  let keys: string[];
  let rootToken: string;
  let auditFile: string;

  beforeEach(async () => {
    server = await startTestServer({ audit: API_AUDIT });
    ({ keys, rootToken } = await initAndUnseal(server, 1, 1));
    dir = await tempDir();
    auditFile = path.join(dir.path, 'audit.log');
    expect((await server.client.post('sys/mounts/notes', { type: 'notes' })).status).to.equal(204);
  });
  afterEach(async () => {
    await server.close();
    await dir.remove();
  });

  const headersPath = 'sys/config/auditing/request-headers';

  it('adds, reads, lists and removes audited headers, by lower-case name', async () => {
    expect((await server.client.get(headersPath)).body.data).to.deep.equal({ headers: {} });
    expect((await server.client.post(`${headersPath}/X-Forwarded-For`, { hmac: false })).status).to.equal(204);
    expect((await server.client.post(`${headersPath}/X-Correlation-Id`, { hmac: 'true' })).status).to.equal(204);
    expect((await server.client.post(`${headersPath}/x-default-off`, {})).status).to.equal(204);

    expect((await server.client.get(headersPath)).body.data).to.deep.equal({
      headers: { 'x-correlation-id': { hmac: true }, 'x-default-off': { hmac: false }, 'x-forwarded-for': { hmac: false } },
    });
    expect((await server.client.get(`${headersPath}/X-CORRELATION-ID`)).body.data).to.deep.equal({ 'x-correlation-id': { hmac: true } });
    const missing = await server.client.get(`${headersPath}/x-not-audited`);
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ errors: [] });

    expect((await server.client.delete(`${headersPath}/x-default-off`)).status).to.equal(204);
    expect((await server.client.delete(`${headersPath}/x-never-there`)).status).to.equal(204);
    expect(Object.keys((await server.client.get(headersPath)).body.data.headers)).to.deep.equal(['x-correlation-id', 'x-forwarded-for']);
  });

  it('records the configured headers in both entries of a request, HMAC\'d where asked, and no others', async () => {
    expect((await server.client.put('sys/audit/file', { type: 'file', options: { file_path: auditFile } })).status).to.equal(204);
    await server.client.post(`${headersPath}/x-forwarded-for`, { hmac: false });
    await server.client.post(`${headersPath}/x-correlation-id`, { hmac: true });
    await server.client.post(`${headersPath}/x-vault-token`, { hmac: true });

    const res = await server.client.post(
      'notes/notes/h',
      { text: 'x' },
      { headers: { 'X-Forwarded-For': '203.0.113.7', 'X-Correlation-Id': 'corr-42', 'X-Unlisted': 'not recorded' } },
    );
    expect(res.status).to.equal(204);

    const hash = async (input: string) => (await server.client.post('sys/audit-hash/file', { input })).body.data.hash as string;
    const entries = (await readEntries(auditFile)).filter((e) => e.request?.path === 'notes/notes/h');
    expect(entries.map((e) => e.type)).to.deep.equal(['request', 'response']);
    for (const entry of entries) {
      expect(entry.request.headers).to.deep.equal({
        'x-forwarded-for': ['203.0.113.7'],
        'x-correlation-id': [await hash('corr-42')],
        'x-vault-token': [await hash(rootToken)],
      });
    }
    const log = JSON.stringify(entries);
    expect(log).not.to.contain('corr-42');
    expect(log).not.to.contain(rootToken);

    // A request that carries only the token records only the token's HMAC.
    await server.client.get('notes/notes/h');
    const plain = (await readEntries(auditFile)).filter((e) => e.request?.path === 'notes/notes/h' && e.request.operation === 'read');
    expect(plain).to.have.length(2);
    expect(plain[0]!.request.headers).to.deep.equal({ 'x-vault-token': [await hash(rootToken)] });
  });

  it('refuses to audit a token-carrying header in the clear, and names that are not header names', async () => {
    for (const name of ['X-Vault-Token', 'authorization', 'X-Service-Token']) {
      const res = await server.client.post(`${headersPath}/${name}`, { hmac: false });
      expect(res.status, name).to.equal(400);
      expect(res.body.errors[0]).to.equal(`header "${name.toLowerCase()}" carries a token and can be audited only with "hmac": true`);
    }
    const bad = await server.client.post(`${headersPath}/x%20y`, { hmac: true });
    expect(bad.status).to.equal(400);
    expect(bad.body.errors[0]).to.equal('"x y" is not an HTTP header name');
    const notBool = await server.client.post(`${headersPath}/x-ok`, { hmac: 'maybe' });
    expect(notBool.status).to.equal(400);
    expect(notBool.body.errors[0]).to.match(/hmac/);
    expect((await server.client.get(headersPath)).body.data).to.deep.equal({ headers: {} });
  });

  it('needs sudo: a token granted every other capability on the paths is refused', async () => {
    await server.client.put('sys/policy/auditing', {
      policy: 'path "sys/config/auditing/*" { capabilities = ["create", "read", "update", "delete", "list"] }',
    });
    const token = (await server.client.post('auth/token/create', { policies: ['auditing'] })).body.auth.client_token as string;
    const limited = new TestClient(server.address, token);
    expect((await limited.post(`${headersPath}/x-forwarded-for`, { hmac: false })).status).to.equal(403);
    expect((await limited.get(`${headersPath}/x-forwarded-for`)).status).to.equal(403);
  });

  it('keeps the configuration behind the barrier across seal and unseal', async () => {
    await server.client.post(`${headersPath}/x-forwarded-for`, { hmac: true });
    expect((await server.client.put('sys/seal')).status).to.equal(204);
    expect((await server.client.get(headersPath)).status).to.equal(503);
    expect((await server.client.put('sys/unseal', { key: keys[0] })).body.sealed).to.equal(false);
    expect((await server.client.get(headersPath)).body.data).to.deep.equal({ headers: { 'x-forwarded-for': { hmac: true } } });
  });

  it('is in the OpenAPI document', async () => {
    const paths = (await server.client.get('sys/internal/specs/openapi')).body.paths as Record<string, unknown>;
    expect(paths['/sys/config/auditing/request-headers']).to.be.an('object');
    expect(paths['/sys/config/auditing/request-headers/{header}']).to.be.an('object');
  });
});
