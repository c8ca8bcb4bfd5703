/**
 * The sys paths and older spellings operators and clients (hvac, the vault CLI) still call:
 * LIST sys/policy, POST sys/internal/specs/openapi, sys/generate-root without /attempt, the
 * `generic` mount type, the file audit device's `path` option, sys/wrapping/wrap with an empty
 * body, sys/version-history, sys/internal/counters/*, and the clear refusal of what is out of scope.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer, tempDir } from '../../helpers/server.js';
import { TestClient, createToken } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

describe('sys: the rest of what operators and tools call', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;
  let dir: { path: string; remove: () => Promise<void> };

  before(async () => {
    dir = await tempDir();
    server = await startUnsealedServer({ plugins: [], audit: API_AUDIT });
    root = server.client;
  });
  after(async () => {
    await server.close();
    await dir.remove();
  });

  it('lists policies with LIST sys/policy as with GET', async () => {
    const listed = await root.list('sys/policy');
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.data.keys).to.include.members(['default', 'root']);
    expect(listed.body.data.policies).to.deep.equal(listed.body.data.keys);
  });

  it('answers POST sys/internal/specs/openapi with the document, as GET', async () => {
    const posted = await root.post('sys/internal/specs/openapi', {});
    expect(posted.status, posted.text).to.equal(200);
    expect(posted.body.openapi).to.match(/^3\./);
    expect(Object.keys(posted.body.paths)).to.include('/sys/quotas/config');
  });

  it('serves sys/generate-root as sys/generate-root/attempt', async () => {
    const status = await root.get('sys/generate-root', { token: '' });
    expect(status.status, status.text).to.equal(200);
    expect(status.body).to.include({ started: false });
    const started = await root.put('sys/generate-root', {}, { token: '' });
    expect(started.status, started.text).to.equal(200);
    expect(started.body.started).to.equal(true);
    expect((await root.get('sys/generate-root/attempt', { token: '' })).body.started).to.equal(true);
    expect((await root.delete('sys/generate-root')).status).to.equal(204);
  });

  it('mounts the `generic` type as a kv version 1 store', async () => {
    expect((await root.post('sys/mounts/old-secrets', { type: 'generic' })).status).to.equal(204);
    expect((await root.post('old-secrets/app', { password: 'hunter2' })).status).to.equal(204);
    expect((await root.get('old-secrets/app')).body.data).to.deep.equal({ password: 'hunter2' });
    expect((await root.get('sys/mounts/old-secrets')).body.data.type).to.equal('generic');
  });

  it('takes the file audit device\'s `path` option as the older name of file_path', async () => {
    const file = path.join(dir.path, 'audit.log');
    const enabled = await root.put('sys/audit/old-file', { type: 'file', options: { path: file } });
    expect(enabled.status, enabled.text).to.equal(204);
    await root.get('sys/mounts');
    expect(await readFile(file, 'utf8')).to.contain('"path":"sys/mounts"');
    const both = await root.put('sys/audit/both', { type: 'file', options: { path: file, file_path: path.join(dir.path, 'other.log') } });
    expect(both.status).to.equal(400);
    expect(both.body.errors[0]).to.match(/"file_path" and "path"/);
    expect((await root.delete('sys/audit/old-file')).status).to.equal(204);
  });

  it('wraps an empty body: unwrapping gives an empty object', async () => {
    const wrapped = await root.post('sys/wrapping/wrap', undefined, { headers: { 'X-Vault-Wrap-TTL': '60' } });
    expect(wrapped.status, wrapped.text).to.equal(200);
    const unwrapped = await root.post('sys/wrapping/unwrap', { token: wrapped.body.wrap_info.token });
    expect(unwrapped.status, unwrapped.text).to.equal(200);
    expect(unwrapped.body.data).to.deep.equal({});
  });

  it('lists the version this server has run in sys/version-history', async () => {
    const res = await root.list('sys/version-history');
    expect(res.status, res.text).to.equal(200);
    const [version] = res.body.data.keys as string[];
    expect(res.body.data.key_info[version!]).to.include({ previous_version: null });
    expect(Date.parse(res.body.data.key_info[version!].timestamp_installed)).to.be.greaterThan(0);
  });

  it('counts service tokens and entities in sys/internal/counters/*', async () => {
    const before = (await root.get('sys/internal/counters/tokens')).body.data.counters.service_tokens.total as number;
    await createToken(root);
    expect((await root.get('sys/internal/counters/tokens')).body.data.counters.service_tokens.total).to.equal(before + 1);
    const entities = await root.get('sys/internal/counters/entities');
    expect(entities.body.data.counters.entities.total).to.be.a('number');
  });

  it('merges the calling token\'s policies by path in sys/internal/ui/resultant-acl', async () => {
    const rules = ['path "secret/app" { capabilities = ["read"] }', 'path "secret/*" { capabilities = ["list"] }', 'path "secret/app" { capabilities = ["update"] }'].join('\n');
    expect((await root.put('sys/policies/acl/app-reader', { policy: rules })).status).to.equal(204);
    const reader = new TestClient(server.address, await createToken(root, { policies: ['app-reader'] }));
    const res = await reader.get('sys/internal/ui/resultant-acl');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.root).to.equal(false);
    expect(res.body.data.exact_paths['secret/app']).to.deep.equal({ capabilities: ['read', 'update'] });
    expect(res.body.data.glob_paths['secret/']).to.deep.equal({ capabilities: ['list'] });
    expect(res.body.data.exact_paths, 'the default policy joins').to.have.property('auth/token/lookup-self');
    expect((await root.get('sys/internal/ui/resultant-acl')).body.data.root).to.equal(true);
    expect((await reader.get('sys/internal/ui/resultant-acl', { token: '' })).status).to.equal(403);
  });

  it('answers sys/experiments and sys/internal/ui/feature-flags with empty lists: there are none', async () => {
    expect((await root.get('sys/experiments')).body.data).to.deep.equal({ available: [], enabled: [] });
    const flags = await root.get('sys/internal/ui/feature-flags', { token: '' });
    expect([flags.status, flags.body]).to.deep.equal([200, { feature_flags: [] }]);
  });

  it('refuses sys/raw, sys/pprof, MFA, replication and namespaces with a 404 that says why', async () => {
    for (const [target, why] of [
      ['sys/raw/core/keyring', /storage past the barrier/],
      ['sys/pprof/heap', /Go's profiler/],
      ['sys/mfa/method/totp/x', /MFA/],
      ['sys/replication/status', /Enterprise/],
      ['sys/namespaces/team', /namespaces are a Vault Enterprise feature/],
    ] as const) {
      const res = await root.get(target);
      expect(res.status, target).to.equal(404);
      expect(res.body.errors[0], target).to.match(why);
    }
  });
});
