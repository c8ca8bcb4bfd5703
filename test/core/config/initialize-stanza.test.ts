import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, parseConfig } from '../../../core/config/config.js';

const BASE = path.resolve('/etc/keywarden');
const SEAL = { static: { current_key_id: 'k', current_key: 'ab'.repeat(32) } };

const withInitialize = (initialize: unknown, seal: unknown = SEAL): Record<string, unknown> => ({
  storage: { inmem: {} },
  listener: { tcp: { tls_disable: true } },
  ...(seal ? { seal } : {}),
  initialize,
});

function refusal(doc: unknown): string {
  try {
    parseConfig(doc, BASE);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  expect.fail(`expected ${JSON.stringify(doc)} to be refused`);
}

const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../examples/self-init/keywarden.hcl');

describe('configuration: the initialize stanzas (self-initialization)', () => {
  it('reads the example file: stanzas and requests in order, data as JSON, references kept for the start', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keywarden-init-config-'));
    try {
      const file = path.join(dir, 'keywarden.hcl');
      writeFileSync(file, readFileSync(EXAMPLE, 'utf8'));
      const config = loadConfig(file);
      expect(config.initialize!.map((b) => [b.name, b.requests.map((r) => r.name)])).to.deep.equal([
        ['engines', ['mount-transit', 'app-key']],
        ['access', ['app-policy', 'enable-cloud', 'cloud-role']],
      ]);
      const [mount] = config.initialize![0]!.requests;
      expect(mount).to.deep.include({ operation: 'update', path: 'sys/mounts/crypto', allowFailure: false, data: { type: 'transit', description: 'encryption as a service' } });
      const role = config.initialize![1]!.requests[2]!;
      expect(role.allowFailure).to.equal(true);
      expect(role.data).to.deep.include({ bound_iam_principal_arn: 'env://APP_ROLE_ARN', resolve_cloud_unique_ids: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resolves file:// references against the configuration file directory', () => {
    const config = parseConfig(withInitialize({ a: { request: { r: { operation: 'update', path: '/v1/sys/policies/acl/p', data: { policy: 'file://p.hcl', nested: ['file:///abs'] } } } } }), BASE);
    expect(config.initialize![0]!.requests[0]).to.deep.include({ path: 'sys/policies/acl/p', data: { policy: `file://${path.join(BASE, 'p.hcl')}`, nested: ['file:///abs'] } });
  });

  it('needs an auto seal', () => {
    expect(refusal(withInitialize({ a: { request: { r: { operation: 'read', path: 'sys/mounts' } } } }, null))).to.match(/initialize\.a: self-initialization needs an auto seal: add a seal stanza/);
  });

  it('refuses what it does not honour and what is malformed, naming the key', () => {
    const request = (body: Record<string, unknown>) => withInitialize({ a: { request: { r: { operation: 'update', path: 'sys/x', ...body } } } });
    expect(refusal(request({ token: 's.x' }))).to.match(/initialize\.a\.request\.r\.token: not supported: self-initialization runs every request with its own short-lived root token/);
    expect(refusal(request({ when: false }))).to.match(/\.when: not supported/);
    expect(refusal(request({ operation: 'sudo' }))).to.match(/\.operation: expected one of create, read, update, patch, delete, list, got "sudo"/);
    expect(refusal(request({ data: 'text' }))).to.match(/\.data: expected an object/);
    expect(refusal(withInitialize({ a: { request: { r: { path: 'sys/x' } } } }))).to.match(/initialize\.a\.request\.r: operation is required/);
    expect(refusal(withInitialize({ 'bad name': { request: { r: { operation: 'read', path: 'x' } } } }))).to.match(/"bad name" is not a valid name/);
    expect(refusal(withInitialize({ a: { other: {} } }))).to.match(/initialize\.a\.other: unknown key; an initialize stanza takes only request blocks/);
    expect(refusal(withInitialize([{ a: { request: { r: { operation: 'read', path: 'x' } } } }, { a: { request: { s: { operation: 'read', path: 'x' } } } }]))).to.match(
      /initialize "a" is declared twice/,
    );
  });
});
