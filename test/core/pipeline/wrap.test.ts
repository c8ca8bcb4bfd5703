/** Response wrapping: X-Vault-Wrap-TTL on any request, single-use wrapping tokens, sys/wrapping/*. */
import { expect } from 'chai';
import nodeVault from 'node-vault';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { API_AUDIT, startTestServer, startUnsealedServer, tempDir } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';
import notesPlugin from '../../fixtures/plugins/notes.js';

describe('response wrapping', function () {
  this.timeout(20_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  const plaintext = Buffer.from('wrapped secret').toString('base64');
  const wrapped = (ttl: string) => ({ headers: { 'X-Vault-Wrap-TTL': ttl } });

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin], audit: API_AUDIT });
    await server.client.post('sys/mounts/transit', { type: 'transit' });
    await server.client.post('sys/auth/greeter', { type: 'greeter' });
    await server.client.post('transit/keys/k', {});
  });
  after(() => server.close());

  for (const ttl of ['5m', '300']) {
    it(`wraps any answer for X-Vault-Wrap-TTL ${ttl}: only wrap_info comes back, never the secret beside it`, async () => {
      const res = await server.client.post('transit/encrypt/k', { plaintext }, wrapped(ttl));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.equal(null);
      expect(res.text).not.to.contain('vault:v1:');
      const info = res.body.wrap_info;
      expect(info).to.include({ ttl: 300, creation_path: 'transit/encrypt/k' });
      expect(info.token).to.match(/^hvs\./);
      expect(info.accessor).to.be.a('string');
      expect(Date.parse(info.creation_time)).to.be.closeTo(Date.now(), 60_000);
      expect(info).not.to.have.property('wrapped_accessor');

      const unwrapped = await new TestClient(server.address, info.token).post('sys/wrapping/unwrap', {});
      expect(unwrapped.status).to.equal(200);
      const decrypted = await server.client.post('transit/decrypt/k', { ciphertext: unwrapped.body.data.ciphertext });
      expect(decrypted.body.data.plaintext).to.equal(plaintext);
    });
  }

  it('wraps a batch answer: the unwrapped batch_results decrypt to the batch, with their references', async () => {
    const batch = [{ plaintext, reference: 'a' }, { plaintext: Buffer.from('two').toString('base64') }];
    const res = await server.client.post('transit/encrypt/k', { batch_input: batch }, wrapped('1m'));
    expect(res.status).to.equal(200);
    expect(res.text).not.to.contain('vault:v1:');
    const unwrapped = await new TestClient(server.address, res.body.wrap_info.token).post('sys/wrapping/unwrap', {});
    const results = unwrapped.body.data.batch_results as Array<{ ciphertext: string; key_version: number; reference: string }>;
    expect(results.map((r) => [r.key_version, r.reference])).to.deep.equal([[1, 'a'], [1, '']]);
    const decrypted = await server.client.post('transit/decrypt/k', { batch_input: results.map((r) => ({ ciphertext: r.ciphertext })) });
    expect(decrypted.body.data.batch_results.map((r: { plaintext: string }) => r.plaintext)).to.deep.equal(batch.map((item) => item.plaintext));
  });

  it('unwraps once: a second unwrap, by header or by body, is refused', async () => {
    const info = (await server.client.post('transit/encrypt/k', { plaintext }, wrapped('1m'))).body.wrap_info;
    const first = await server.client.post('sys/wrapping/unwrap', { token: info.token });
    expect(first.status).to.equal(200);
    expect(first.body.data.ciphertext).to.match(/^vault:v1:/);
    for (const again of [server.client.post('sys/wrapping/unwrap', { token: info.token }), new TestClient(server.address, info.token).post('sys/wrapping/unwrap', {})]) {
      const res = await again;
      expect(res.status).to.be.oneOf([400, 403]);
      expect(res.text).not.to.contain('vault:v1:');
    }
  });

  it('lets only one of two concurrent unwraps of one token succeed', async () => {
    const info = (await server.client.post('transit/encrypt/k', { plaintext }, wrapped('1m'))).body.wrap_info;
    const results = await Promise.all([1, 2, 3].map(() => server.client.post('sys/wrapping/unwrap', { token: info.token })));
    expect(results.map((r) => r.status).sort()).to.deep.equal([200, 400, 400]);
  });

  it('confines a wrapping token to unwrapping', async () => {
    const info = (await server.client.post('transit/encrypt/k', { plaintext }, wrapped('1m'))).body.wrap_info;
    const asWrapping = new TestClient(server.address, info.token);
    expect((await asWrapping.get('transit/keys/k')).status).to.equal(403);
    expect((await asWrapping.post('auth/token/create', {})).status).to.equal(403);
  });

  it('looks a wrapping token up without a token of its own and without spending it', async () => {
    const info = (await server.client.post('transit/encrypt/k', { plaintext }, wrapped('2m'))).body.wrap_info;
    const anonymous = new TestClient(server.address);
    const looked = await anonymous.post('sys/wrapping/lookup', { token: info.token });
    expect(looked.status).to.equal(200);
    expect(looked.body.data).to.include({ creation_path: 'transit/encrypt/k', creation_ttl: 120 });
    expect((await server.client.post('sys/wrapping/unwrap', { token: info.token })).status).to.equal(200);
    expect((await anonymous.post('sys/wrapping/lookup', { token: info.token })).status).to.equal(400);
  });

  it('rewraps under a new token with the same TTL and path, spending the old one', async () => {
    const info = (await server.client.post('transit/encrypt/k', { plaintext }, wrapped('3m'))).body.wrap_info;
    const rewrapped = await server.client.post('sys/wrapping/rewrap', { token: info.token });
    expect(rewrapped.status).to.equal(200);
    const next = rewrapped.body.wrap_info;
    expect(next).to.include({ ttl: 180, creation_path: 'transit/encrypt/k' });
    expect(next.token).not.to.equal(info.token);
    expect((await server.client.post('sys/wrapping/unwrap', { token: info.token })).status).to.equal(400);
    expect((await server.client.post('sys/wrapping/unwrap', { token: next.token })).body.data.ciphertext).to.match(/^vault:v1:/);
  });

  it('wraps arbitrary data through sys/wrapping/wrap, which needs a TTL', async () => {
    expect((await server.client.post('sys/wrapping/wrap', { a: 'b' })).status).to.equal(400);
    const info = (await server.client.post('sys/wrapping/wrap', { user: 'app', password: 'p4ss' }, wrapped('1m'))).body.wrap_info;
    expect(info.creation_path).to.equal('sys/wrapping/wrap');
    const res = await server.client.post('sys/wrapping/unwrap', { token: info.token });
    expect(res.body.data).to.deep.equal({ user: 'app', password: 'p4ss' });
  });

  it('wraps a token creation with wrapped_accessor, and the unwrapped token works', async () => {
    const res = await server.client.post('auth/token/create', { policies: ['default'] }, wrapped('1m'));
    expect(res.body.auth).to.equal(null);
    const info = res.body.wrap_info;
    const unwrapped = await server.client.post('sys/wrapping/unwrap', { token: info.token });
    expect(unwrapped.body.auth.accessor).to.equal(info.wrapped_accessor);
    const self = await new TestClient(server.address, unwrapped.body.auth.client_token).get('auth/token/lookup-self');
    expect(self.status).to.equal(200);
  });

  it('enforces a policy\'s min_wrapping_ttl and max_wrapping_ttl', async () => {
    await server.client.put('sys/policies/acl/wrapped-only', {
      policy: 'path "transit/encrypt/k" { capabilities = ["update"]\n min_wrapping_ttl = "30s"\n max_wrapping_ttl = "2m" }',
    });
    const user = new TestClient(server.address, (await server.client.post('auth/token/create', { policies: ['wrapped-only'] })).body.auth.client_token);
    expect((await user.post('transit/encrypt/k', { plaintext })).status).to.equal(403);
    expect((await user.post('transit/encrypt/k', { plaintext }, wrapped('10s'))).status).to.equal(403);
    expect((await user.post('transit/encrypt/k', { plaintext }, wrapped('5m'))).status).to.equal(403);
    expect((await user.post('transit/encrypt/k', { plaintext }, wrapped('1m'))).body.wrap_info.ttl).to.equal(60);
  });

  for (const [value, why] of [['soon', 'not a duration'], ['0', 'zero'], ['-5s', 'negative']]) {
    it(`refuses an X-Vault-Wrap-TTL that is ${why}, running nothing`, async () => {
      const res = await server.client.post('transit/keys/never', {}, wrapped(value));
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.contain('X-Vault-Wrap-TTL');
      expect((await server.client.get('transit/keys/never')).status).to.equal(404);
    });
  }

  it('refuses the JWT wrapping format', async () => {
    const res = await server.client.post('transit/encrypt/k', { plaintext }, { headers: { 'X-Vault-Wrap-TTL': '1m', 'X-Vault-Wrap-Format': 'jwt' } });
    expect(res.status).to.equal(400);
  });

  it('unwraps through node-vault', async () => {
    const info = (await server.client.post('sys/wrapping/wrap', { k: 'v' }, wrapped('1m'))).body.wrap_info;
    const vault = nodeVault({ apiVersion: 'v1', endpoint: server.address, token: server.rootToken });
    const res = await vault.unwrap({ token: info.token });
    expect(res.data).to.deep.equal({ k: 'v' });
  });

  describe('where no token authenticates the request', () => {
    /** Accessors of every stored token: a refused wrap must mint none. */
    const accessors = async () => ((await server.client.list('auth/token/accessors')).body.data.keys as string[]).length;

    for (const [method, target, body] of [
      ['GET', 'sys/health', undefined],
      ['GET', 'sys/seal-status', undefined],
      ['GET', 'sys/leader', undefined],
      ['GET', 'sys/init', undefined],
      ['GET', 'sys/generate-root/attempt', undefined],
      ['GET', 'sys/internal/specs/openapi', undefined],
      ['POST', 'sys/wrapping/lookup', { token: 'hvs.nothing' }],
      ['GET', 'auth/greeter/hello', undefined],
    ] as const) {
      it(`refuses X-Vault-Wrap-TTL on ${method} ${target}, minting no token`, async () => {
        const before = await accessors();
        const anonymous = new TestClient(server.address);
        const res = await anonymous.send(method, target, { ...(body ? { body } : {}), headers: { 'X-Vault-Wrap-TTL': '1h' } });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.errors[0]).to.contain('X-Vault-Wrap-TTL');
        expect(await accessors()).to.equal(before);
      });
    }

    it('still wraps a login\'s answer, and the unwrapped token works', async () => {
      const res = await new TestClient(server.address).post('auth/greeter/login', { user: 'wrapped-ann' }, wrapped('1m'));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.auth).to.equal(null);
      const unwrapped = await server.client.post('sys/wrapping/unwrap', { token: res.body.wrap_info.token });
      const token = unwrapped.body.auth.client_token as string;
      expect((await new TestClient(server.address, token).get('auth/token/lookup-self')).body.data.display_name).to.contain('wrapped-ann');
    });

    it('refuses X-Vault-Wrap-TTL on sys/init before initializing anything', async () => {
      const fresh = await startTestServer();
      try {
        const res = await fresh.client.put('sys/init', { secret_shares: 1, secret_threshold: 1 }, wrapped('5m'));
        expect(res.status).to.equal(400);
        expect((await fresh.client.get('sys/init')).body.initialized).to.equal(false);
        const init = await fresh.client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
        expect(init.status).to.equal(200);
        expect(init.body.keys).to.have.length(1);
      } finally {
        await fresh.close();
      }
    });
  });

  it('caps the wrapping TTL at the system max_lease_ttl', async () => {
    const res = await server.client.post('sys/wrapping/wrap', { k: 'v' }, wrapped('87600h'));
    expect(res.status).to.equal(200);
    expect(res.body.wrap_info.ttl).to.equal(768 * 3600);
    const looked = await server.client.post('sys/wrapping/lookup', { token: res.body.wrap_info.token });
    expect(looked.body.data.creation_ttl).to.equal(768 * 3600);
  });

  it('records the wrap_info of a wrapped answer in the audit log, and what the unwrap released', async () => {
    const dir = await tempDir();
    const file = path.join(dir.path, 'audit.log');
    await server.host.audit.enable('wrapaudit', { type: 'file', options: { file_path: file } });
    try {
      const res = await server.client.post('sys/wrapping/wrap', { password: 'p4ss' }, wrapped('1m'));
      const info = res.body.wrap_info;
      await server.client.post('sys/wrapping/unwrap', { token: info.token });
      const hashOf = async (input: string) => (await server.client.post('sys/audit-hash/wrapaudit', { input })).body.data.hash as string;
      const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      const wrapEntry = lines.find((l) => l.type === 'response' && l.request.path === 'sys/wrapping/wrap');
      expect(wrapEntry.response.wrap_info).to.include({ token: await hashOf(info.token), accessor: await hashOf(info.accessor), ttl: 60, creation_path: 'sys/wrapping/wrap' });
      expect(wrapEntry.response.data).to.equal(undefined);
      const unwrapEntry = lines.find((l) => l.type === 'response' && l.request.path === 'sys/wrapping/unwrap');
      expect(unwrapEntry.response.data).to.deep.equal({ password: await hashOf('p4ss') });
      expect(JSON.stringify(lines)).not.to.contain(info.token);
    } finally {
      await server.host.audit.disable('wrapaudit');
      await dir.remove();
    }
  });
});
