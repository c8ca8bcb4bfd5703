/**
 * "A field we do not honour is refused, never silently ignored", through HTTP against a real
 * server with transit and the cloud auth method mounted. Each field Vault defines on an endpoint
 * and Keywarden does not honour gets a 400 naming it and why; the same request without it runs.
 *
 * The table of refusals is checked against the server's own listing (the x-keywarden-refused-fields
 * of its OpenAPI document, built from the paths' refusedFields): a refusal declared in code but
 * missing here, or listed here but no longer declared, fails the first test, and every one listed
 * is sent for real. Fields refused inside the `config` object of sys/mounts and sys/auth are not
 * path fields, so they have a table of their own below.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

type Method = 'GET' | 'POST';

interface Refusal {
  /** The OpenAPI path whose listing names the field. */
  readonly listed: string;
  readonly field: string;
  readonly method: Method;
  /** The request path; a GET sends `body` as the query. */
  readonly path: string;
  /** A request that runs without the field; the field is added to it with `value`. */
  readonly body: Record<string, unknown>;
  readonly value: unknown;
  /** Sent with the token of a child token instead of the root token. */
  readonly asChild?: boolean;
}

const ED_INPUT = b64('refused fields');
/** Filled in before the table is sent: an ed25519 signature of ED_INPUT, and a child token. */
const state = { signature: '', child: '' };

const TUNE_SECRET: ReadonlyArray<[string, unknown]> = [
  ['allowed_managed_keys', ['hsm-key']],
  ['allowed_response_headers', ['X-Custom']],
  ['delegated_auth_accessors', ['auth_cloud_1234abcd']],
  ['identity_token_key', 'default'],
  ['trim_request_trailing_slashes', true],
  ['user_lockout_config', { lockout_threshold: '5' }],
];
/** Auth mounts honour user_lockout_config (test/core/auth/lockout/user-lockout.test.ts). */
const TUNE_AUTH = TUNE_SECRET.filter(([field]) => !['allowed_managed_keys', 'delegated_auth_accessors', 'user_lockout_config'].includes(field));

const CATALOG_BODY = { sha256: '0'.repeat(64), command: 'refused.mjs' };

const REFUSALS: readonly Refusal[] = [
  { listed: '/sys/mounts/{path}', field: 'seal_wrap', method: 'POST', path: 'sys/mounts/wrapped', body: { type: 'transit' }, value: true },
  { listed: '/sys/auth/{path}', field: 'seal_wrap', method: 'POST', path: 'sys/auth/wrapped', body: { type: 'cloud' }, value: true },
  ...TUNE_SECRET.map(([field, value]): Refusal => ({ listed: '/sys/mounts/{path}/tune', field, method: 'POST', path: 'sys/mounts/transit/tune', body: {}, value })),
  ...TUNE_AUTH.map(([field, value]): Refusal => ({ listed: '/sys/auth/{path}/tune', field, method: 'POST', path: 'sys/auth/cloud/tune', body: {}, value })),
  {
    listed: '/sys/capabilities-self',
    field: 'token',
    method: 'POST',
    path: 'sys/capabilities-self',
    body: { paths: ['transit/keys/ed'] },
    value: 'hvs.someone-elses-token',
  },
  { listed: '/sys/plugins/catalog/{type}/{name}', field: 'oci_image', method: 'POST', path: 'sys/plugins/catalog/secret/refused', body: CATALOG_BODY, value: 'image:1' },
  { listed: '/sys/plugins/catalog/{type}/{name}', field: 'runtime', method: 'POST', path: 'sys/plugins/catalog/secret/refused', body: CATALOG_BODY, value: 'gvisor' },
  { listed: '/sys/plugins/catalog/{name}/', field: 'oci_image', method: 'POST', path: 'sys/plugins/catalog/refused', body: { ...CATALOG_BODY, type: 'secret' }, value: 'image:1' },
  { listed: '/sys/plugins/catalog/{name}/', field: 'runtime', method: 'POST', path: 'sys/plugins/catalog/refused', body: { ...CATALOG_BODY, type: 'secret' }, value: 'gvisor' },
  { listed: '/sys/internal/specs/openapi', field: 'generic_mount_paths', method: 'GET', path: 'sys/internal/specs/openapi', body: {}, value: 'true' },
  { listed: '/auth/token/lookup-self', field: 'token', method: 'POST', path: 'auth/token/lookup-self', body: {}, value: 'hvs.someone-elses-token' },
  {
    listed: '/auth/token/renew-self',
    field: 'token',
    method: 'POST',
    path: 'auth/token/renew-self',
    body: {},
    value: 'hvs.someone-elses-token',
    asChild: true,
  },
  ...[
    ['role_arn', 'arn:aws:iam::111122223333:role/federated'],
    ['identity_token_audience', 'keywarden'],
    ['identity_token_ttl', '1h'],
    ['rotation_period', '24h'],
    ['rotation_schedule', '0 * * * SAT'],
    ['rotation_window', '1h'],
  ].map(([field, value]): Refusal => ({ listed: '/auth/cloud/config/client', field: field!, method: 'POST', path: 'auth/cloud/config/client', body: {}, value })),
  {
    listed: '/auth/cloud/config/sts/{account_id}',
    field: 'external_id',
    method: 'POST',
    path: 'auth/cloud/config/sts/444455556666',
    body: { sts_role: 'arn:aws:iam::444455556666:role/keywarden' },
    value: 'shared-external-id',
  },
];

/** Fields refused inside the `config` object of an enable (Vault reads them there, no mount here honours them). */
const REFUSED_CONFIG: ReadonlyArray<[string, unknown]> = [
  ['allowed_managed_keys', ['hsm-key']],
  ['allowed_response_headers', ['X-Custom']],
  ['delegated_auth_accessors', ['auth_cloud_1234abcd']],
  ['force_no_cache', true],
  ['identity_token_key', 'default'],
  ['options', { version: '2' }],
  ['trim_request_trailing_slashes', true],
  ['user_lockout_config', { lockout_threshold: '5' }],
];

describe('fields Vault defines that Keywarden does not honour', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;

  let plugins: { path: string; remove: () => Promise<void> };

  before(async () => {
    // A plugin directory with one module, so a catalog registration without a refused field succeeds.
    plugins = await tempDir('keywarden-plugins-');
    await writeFile(path.join(plugins.path, 'refused.mjs'), 'export default {};');
    server = await startUnsealedServer({ plugins: [], pluginDirectory: plugins.path });
    root = server.client;
    expect((await root.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
    expect((await root.post('sys/auth/cloud', { type: 'cloud' })).status).to.equal(204);
    expect((await root.post('transit/keys/ed', { type: 'ed25519' })).status).to.equal(200);
    state.signature = (await root.post('transit/sign/ed', { input: ED_INPUT })).body.data.signature;
    state.child = (await root.post('auth/token/create', { policies: ['default'], ttl: '1h' })).body.auth.client_token;
  });
  after(async () => {
    await server.close();
    await plugins.remove();
  });

  function send(method: Method, path: string, data: Record<string, unknown>, token?: string): Promise<TestResponse> {
    const client = token ? new TestClient(server.address, token) : root;
    if (method === 'POST') return client.post(path, data);
    const query = new URLSearchParams(Object.fromEntries(Object.entries(data).map(([k, v]) => [k, String(v)]))).toString();
    return client.get(query ? `${path}?${query}` : path);
  }

  function bodyOf(refusal: Refusal): Record<string, unknown> {
    return refusal.path.startsWith('transit/verify/') ? { ...refusal.body, signature: state.signature } : refusal.body;
  }

  async function listing(): Promise<Record<string, Record<string, string>>> {
    const doc = await root.get('sys/internal/specs/openapi');
    expect(doc.status).to.equal(200);
    const listed: Record<string, Record<string, string>> = {};
    for (const [path, item] of Object.entries(doc.body.paths as Record<string, Record<string, unknown>>)) {
      const refused = item['x-keywarden-refused-fields'] as Record<string, string> | undefined;
      if (refused) listed[path] = refused;
    }
    return listed;
  }

  it('lists, in the OpenAPI document, exactly the refusals this table sends', async () => {
    const listed = await listing();
    const expected: Record<string, string[]> = {};
    for (const r of REFUSALS) (expected[r.listed] ??= []).push(r.field);
    const actual = Object.fromEntries(Object.entries(listed).map(([path, fields]) => [path, Object.keys(fields).sort()]));
    expect(actual).to.deep.equal(Object.fromEntries(Object.entries(expected).map(([path, fields]) => [path, fields.sort()])));
    for (const fields of Object.values(listed)) for (const reason of Object.values(fields)) expect(reason).to.be.a('string').and.not.be.empty;
  });

  describe('a request setting one is refused with a 400 naming the field and why', () => {
    for (const refusal of REFUSALS) {
      it(`${refusal.method} ${refusal.path} refuses ${refusal.field}, and runs without it`, async () => {
        const token = refusal.asChild ? state.child : undefined;
        const refused = await send(refusal.method, refusal.path, { ...bodyOf(refusal), [refusal.field]: refusal.value }, token);
        const reason = (await listing())[refusal.listed]?.[refusal.field];
        expect(refused.status, refused.text).to.equal(400);
        expect(refused.body.errors).to.deep.equal([`field "${refusal.field}" is not supported here: ${reason}`]);
        const plain = await send(refusal.method, refusal.path, bodyOf(refusal), token);
        expect(plain.status, plain.text).to.be.within(200, 204);
      });
    }

    for (const [field, value] of REFUSED_CONFIG) {
      it(`sys/mounts and sys/auth refuse ${field} inside config on enable`, async () => {
        const secret = await root.post(`sys/mounts/config-${field}`, { type: 'transit', config: { [field]: value } });
        expect(secret.status, secret.text).to.equal(400);
        expect(secret.body.errors[0]).to.match(new RegExp(`^config: field "${field}" is not supported here: .+`));
        const auth = await root.post(`sys/auth/config-${field}`, { type: 'cloud', config: { [field]: value } });
        expect(auth.body.errors[0]).to.equal(secret.body.errors[0]);
        expect((await root.post(`sys/mounts/config-${field}`, { type: 'transit', config: {} })).status).to.equal(204);
      });
    }
  });

  describe('a request sending one with a zero value asks for nothing and runs, without a warning', () => {
    it('as the vault CLI enables a mount: false, "", null and [] for everything left alone', async () => {
      const res = await root.post('sys/mounts/from-cli', {
        type: 'transit',
        seal_wrap: false,
        local: false,
        external_entropy_access: false,
        config: { options: null, force_no_cache: false, allowed_managed_keys: [], plugin_version: '', user_lockout_config: {} },
        options: null,
      });
      expect(res.status, res.text).to.equal(204);
      expect((await root.post('sys/mounts/from-write', { type: 'transit', seal_wrap: 'false' })).status).to.equal(204);
    });

    it('on a transit key, a tune and a token lookup', async () => {
      const key = await root.post('transit/keys/zeroes', { parameter_set: '', hybrid_key_type_pqc: null, hybrid_key_type_ec: '' });
      expect(key.status, key.text).to.equal(200);
      expect(key.body.warnings).to.equal(null);
      expect((await root.post('sys/mounts/transit/tune', { identity_token_key: '', trim_request_trailing_slashes: false })).status).to.equal(204);
      const lookup = await root.post('auth/token/lookup-self', { token: '' });
      expect(lookup.status).to.equal(200);
      expect(lookup.body.warnings).to.equal(null);
    });
  });

  it('lists a path\'s refused fields in its help', async () => {
    const help = await root.get('auth/token/lookup-self?help=1');
    expect(help.body.help).to.contain('### Refused parameters');
    expect(help.body.help).to.contain('`token`: lookup-self looks up the calling token; auth/token/lookup looks up another');
  });

  describe('values Keywarden does not honour', () => {
    it('keys/:name/config refuses to turn exportable or allow_plaintext_backup off once on', async () => {
      expect((await root.post('transit/keys/one-way', { exportable: true, allow_plaintext_backup: true })).status).to.equal(200);
      const off = await root.post('transit/keys/one-way/config', { exportable: false });
      expect(off.status).to.equal(400);
      expect(off.body.errors).to.deep.equal(['exportable is set on this key and cannot be turned off']);
      expect((await root.post('transit/keys/one-way/config', { allow_plaintext_backup: 'false' })).status).to.equal(400);
      expect((await root.get('transit/keys/one-way')).body.data).to.include({ exportable: true, allow_plaintext_backup: true });
    });

    it('sys/mounts refuses a plugin_version that is not in the catalog, on enable and on tune', async () => {
      const expected = 'plugin_version "v9.9.9" is not available for type "transit": registered versions are v0.1.0+builtin';
      const enable = await root.post('sys/mounts/versioned', { type: 'transit', plugin_version: 'v9.9.9' });
      expect(enable.status).to.equal(400);
      expect(enable.body.errors).to.deep.equal([expected]);
      expect((await root.post('sys/mounts/versioned', { type: 'transit', config: { plugin_version: 'v9.9.9' } })).body.errors).to.deep.equal([expected]);
      expect((await root.post('sys/mounts/transit/tune', { plugin_version: 'v9.9.9' })).body.errors).to.deep.equal([expected]);
      expect((await root.post('sys/mounts/versioned', { type: 'transit', plugin_version: 'v0.1.0' })).status).to.equal(204);
      expect((await root.post('sys/mounts/versioned/tune', { plugin_version: '0.1.0' })).status).to.equal(204);
    });

    it('sys/health knows haunhealthycode and removedcode: status codes for states this server is never in', async () => {
      expect((await root.get('sys/health?haunhealthycode=abc')).status).to.equal(400);
      expect((await root.get('sys/health?removedcode=99')).status).to.equal(400);
      expect((await root.get('sys/health?haunhealthycode=299&removedcode=298')).status).to.equal(200);
    });
  });
});
