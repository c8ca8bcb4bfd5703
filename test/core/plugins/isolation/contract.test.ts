/**
 * The isolation contract: a plugin answers the same whether it runs in-process (as a built-in) or
 * isolated (the same code bundled into an external module, run in a process of its own). Each case
 * mounts one plugin both ways and sends both mounts the same requests, in the same order, with the
 * same tokens — successes, validation errors, every error class, sudo paths, storage round trips,
 * listings, help, existence checks — and compares every answer: status, body and headers.
 *
 * Adding a plugin is one line in CASES: its compiled module, the export holding its manifest, and
 * the requests to send it (the built-in auth methods' requests use fixed credentials, so both
 * mounts are sent the same).
 */
import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import { bundleExternal, installModule } from '../../../helpers/external-plugins.js';
import { createToken, type TestResponse } from '../../../helpers/http.js';
import notesPlugin from '../../../fixtures/plugins/notes.js';
import { CONTRACT_ERRORS } from '../../../fixtures/plugins/contract.js';
import type { PluginManifest } from '../../../../sdk/index.js';
import { BUILTIN_PLUGINS } from '../../../../core/plugins/builtin.js';

/** Who sends a request: the root token, a token by policy (see POLICY), or nobody. */
type Caller = 'root' | 'sudo' | 'plain' | 'create-only' | 'none';

interface Exchange {
  readonly method: 'GET' | 'LIST' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to the mount; may carry a query. */
  readonly path: string;
  readonly body?: Record<string, unknown>;
  readonly as?: Caller;
  readonly headers?: Record<string, string>;
}

interface ContractCase {
  /** The plugin's compiled module, relative to dist/. */
  readonly module: string;
  /** The export of that module holding the manifest. */
  readonly exportName: string;
  readonly requests: readonly Exchange[];
}

const CONTRACT_REQUESTS: readonly Exchange[] = [
  { method: 'POST', path: 'items/a', body: { value: 'one', count: 2, tags: 'x,y', ttl: '1h', kind: 'a' } },
  { method: 'POST', path: 'items/a', body: { value: 'two', count: '3' } },
  { method: 'GET', path: 'items/a' },
  { method: 'POST', path: 'items/b', body: { value: 'three', unknown_field: true } },
  { method: 'LIST', path: 'items' },
  { method: 'GET', path: 'items/?list=true' },
  { method: 'GET', path: 'items/missing' },
  { method: 'POST', path: 'items/c', body: { count: 'many' } },
  { method: 'POST', path: 'items/c', body: { kind: 'z' } },
  { method: 'POST', path: 'items/c', body: { ttl: 'soon' } },
  { method: 'PATCH', path: 'items/a', body: { value: 'x' }, headers: { 'Content-Type': 'application/merge-patch+json' } },
  { method: 'DELETE', path: 'items/b' },
  { method: 'GET', path: 'items/b' },
  { method: 'PUT', path: 'batch', body: { names: 'p,q' } },
  { method: 'LIST', path: 'items' },
  { method: 'DELETE', path: 'whoami' },
  { method: 'GET', path: 'nowhere' },
  ...Object.keys(CONTRACT_ERRORS).map((name): Exchange => ({ method: 'GET', path: `errors/${name}` })),
  { method: 'GET', path: 'whoami' },
  { method: 'GET', path: 'whoami', as: 'sudo' },
  { method: 'GET', path: 'whoami', as: 'plain' },
  { method: 'GET', path: 'whoami', as: 'none' },
  { method: 'GET', path: 'admin' },
  { method: 'POST', path: 'admin', body: { value: 'v' } },
  { method: 'GET', path: 'admin', as: 'sudo' },
  { method: 'POST', path: 'admin', body: { value: 'v' }, as: 'sudo' },
  { method: 'GET', path: 'admin', as: 'plain' },
  { method: 'POST', path: 'items/new', body: { value: 'created' }, as: 'create-only' },
  { method: 'POST', path: 'items/a', body: { value: 'an update' }, as: 'create-only' },
  { method: 'GET', path: 'items/new', as: 'create-only' },
  { method: 'GET', path: 'public', as: 'none' },
  { method: 'GET', path: 'public?name=you' },
  { method: 'GET', path: 'services' },
  { method: 'GET', path: 'mount' },
  ...['values', 'warnings', 'status', 'raw', 'raw-json', 'empty'].map((shape): Exchange => ({ method: 'GET', path: `shapes/${shape}` })),
  { method: 'GET', path: 'items/a?help=1' },
  { method: 'GET', path: 'admin?help=1' },
  { method: 'GET', path: 'nowhere?help=1' },
];

/** AppRole with a custom role ID and secret ID, so that both mounts are sent the same credentials. */
const APPROLE_REQUESTS: readonly Exchange[] = [
  { method: 'POST', path: 'role/builder', body: { role_id: 'builder-role-id', token_policies: 'default', secret_id_num_uses: 3, token_ttl: '1h' } },
  { method: 'GET', path: 'role/builder' },
  { method: 'LIST', path: 'role' },
  { method: 'GET', path: 'role/builder/role-id' },
  { method: 'POST', path: 'role/builder/custom-secret-id', body: { secret_id: 'builder-secret', metadata: '{"team":"ci"}' } },
  { method: 'POST', path: 'role/builder/secret-id/lookup', body: { secret_id: 'builder-secret' } },
  { method: 'POST', path: 'login', body: { role_id: 'builder-role-id', secret_id: 'builder-secret' }, as: 'none' },
  { method: 'POST', path: 'login', body: { role_id: 'builder-role-id', secret_id: 'not-it' }, as: 'none' },
  { method: 'POST', path: 'login', body: { role_id: 'builder-role-id' }, as: 'none' },
  { method: 'POST', path: 'role/builder/secret-id-num-uses', body: { secret_id_num_uses: 'many' } },
  { method: 'POST', path: 'role/builder', body: { token_type: 'sideways' } },
  { method: 'GET', path: 'role/missing' },
  { method: 'GET', path: 'role/builder?help=1' },
  { method: 'DELETE', path: 'role/builder' },
  { method: 'POST', path: 'login', body: { role_id: 'builder-role-id', secret_id: 'builder-secret' }, as: 'none' },
];

const USERPASS_REQUESTS: readonly Exchange[] = [
  { method: 'POST', path: 'users/ada', body: { password: 'analytical', token_policies: 'default', token_ttl: '1h' } },
  { method: 'GET', path: 'users/ada' },
  { method: 'LIST', path: 'users' },
  { method: 'POST', path: 'login/ada', body: { password: 'analytical' }, as: 'none' },
  { method: 'POST', path: 'login/ada', body: { password: 'engine' }, as: 'none' },
  { method: 'POST', path: 'login/nobody', body: { password: 'engine' }, as: 'none' },
  { method: 'POST', path: 'login/ada', body: {}, as: 'none' },
  { method: 'POST', path: 'users/ada/password', body: { password: 'difference' } },
  { method: 'POST', path: 'login/ada', body: { password: 'difference' }, as: 'none' },
  { method: 'POST', path: 'users/ada', body: { token_ttl: 'soon' } },
  { method: 'GET', path: 'users/ada?help=1' },
  { method: 'DELETE', path: 'users/ada' },
  { method: 'GET', path: 'users/ada' },
];

const CASES: readonly ContractCase[] = [
  { module: 'test/fixtures/plugins/contract.js', exportName: 'contractPlugin', requests: CONTRACT_REQUESTS },
  { module: 'plugins/approle/backend.js', exportName: 'appRolePlugin', requests: APPROLE_REQUESTS },
  { module: 'plugins/userpass/backend.js', exportName: 'userpassPlugin', requests: USERPASS_REQUESTS },
];

const DIST = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * The two mounts of each plugin; the policies below name both, so one token serves both. Where an
 * answer names its mount (an operation id, a tag), the name is replaced before answers are compared.
 */
const MOUNTS = { inProcess: 'mount-in-process', isolated: 'mount-isolated' } as const;
const POLICY = {
  sudo: ['create', 'read', 'update', 'delete', 'list', 'sudo'],
  plain: ['create', 'read', 'update', 'delete', 'list'],
} as const;

/** Headers that differ between any two answers (time, connection, a length that follows the body). */
const VOLATILE_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/**
 * Values that differ between any two answers by design, wherever they are in a body: what a login
 * mints (a token, its accessor, its entity) and when something was created.
 */
const VOLATILE_FIELDS = new Set(['client_token', 'accessor', 'entity_id', 'secret_id_accessor', 'creation_time', 'last_updated_time', 'expiration_time']);

function withoutVolatile(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutVolatile);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, VOLATILE_FIELDS.has(key) && typeof v === 'string' ? '<volatile>' : withoutVolatile(v)]));
}

/** An answer with what differs by design taken out: the request id, minted values, and the mount's own name. */
function comparable(res: TestResponse, mount: string) {
  const text = res.text.replaceAll(mount, '<mount>');
  let body: unknown = text;
  try {
    body = withoutVolatile(JSON.parse(text));
  } catch {
    // Not JSON: compared as text.
  }
  if (body !== null && typeof body === 'object' && 'request_id' in body) delete (body as { request_id?: unknown }).request_id;
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !VOLATILE_HEADERS.has(name)));
  return { status: res.status, body, headers };
}

for (const contract of CASES) {
  describe(`the isolation contract: ${contract.exportName} answers alike in-process and isolated`, function () {
    // Plugin processes start in well under a second, but the test machine is shared and may be loaded.
    this.timeout(60_000);
    let server: Awaited<ReturnType<typeof startUnsealedServer>>;
    let dir: { path: string; remove: () => Promise<void> };
    let manifest: PluginManifest;
    const tokens = new Map<Caller, string | undefined>();
    const prefix = (mount: string) => (manifest.kind === 'auth' ? `auth/${mount}` : mount);

    before(async () => {
      const file = path.join(DIST, contract.module);
      manifest = ((await import(file)) as Record<string, PluginManifest>)[contract.exportName]!;
      dir = await tempDir('keywarden-contract-');
      // A built-in plugin is mounted in-process as the server has it; a fixture is registered for the test.
      const builtin = BUILTIN_PLUGINS.includes(manifest);
      server = await startUnsealedServer({ pluginDirectory: dir.path, plugins: builtin ? [notesPlugin] : [notesPlugin, manifest] });
      const { client } = server;
      const isolatedName = `${manifest.name}-isolated`;
      const sha256 = await installModule(dir.path, `${isolatedName}.mjs`, await bundleExternal(file, contract.exportName, isolatedName));
      expect((await client.post(`sys/plugins/catalog/${manifest.kind}/${isolatedName}`, { sha256, command: `${isolatedName}.mjs` })).status).to.equal(204);
      const table = manifest.kind === 'auth' ? 'sys/auth' : 'sys/mounts';
      expect((await client.post(`${table}/${MOUNTS.inProcess}`, { type: manifest.name, options: { setting: 'on' } })).status).to.equal(204);
      const isolated = await client.post(`${table}/${MOUNTS.isolated}`, { type: isolatedName, options: { setting: 'on' } });
      expect(isolated.status, isolated.text).to.equal(204);
      const paths = (capabilities: readonly string[]) =>
        Object.values(MOUNTS)
          .map((m) => `path "${prefix(m)}/*" { capabilities = ${JSON.stringify(capabilities)} }\npath "${prefix(m)}/items/*" { capabilities = ${JSON.stringify(capabilities)} }`)
          .join('\n');
      await client.put('sys/policy/contract-sudo', { policy: paths(POLICY.sudo) });
      await client.put('sys/policy/contract-plain', { policy: paths(POLICY.plain) });
      await client.put('sys/policy/contract-create', {
        policy: Object.values(MOUNTS).map((m) => `path "${prefix(m)}/items/*" { capabilities = ["create", "read"] }`).join('\n'),
      });
      tokens.set('root', server.rootToken);
      tokens.set('sudo', await createToken(client, { policies: ['contract-sudo'] }));
      tokens.set('plain', await createToken(client, { policies: ['contract-plain'] }));
      tokens.set('create-only', await createToken(client, { policies: ['contract-create'] }));
      tokens.set('none', undefined);
    });

    after(async () => {
      await server?.close();
      await dir?.remove();
    });

    for (const exchange of contract.requests) {
      const caller = exchange.as ?? 'root';
      it(`${exchange.method} ${exchange.path} (${caller}): the same status, body and headers`, async () => {
        const send = (mount: string) =>
          server.client.send(exchange.method, `${prefix(mount)}/${exchange.path}`, {
            token: tokens.get(caller) ?? '',
            ...(exchange.body ? { body: exchange.body } : {}),
            ...(exchange.headers ? { headers: exchange.headers } : {}),
          });
        const inProcess = comparable(await send(MOUNTS.inProcess), MOUNTS.inProcess);
        const isolated = comparable(await send(MOUNTS.isolated), MOUNTS.isolated);
        expect(isolated, `isolated answer (in-process: ${JSON.stringify(inProcess)})`).to.deep.equal(inProcess);
      });
    }

    it('describes the same paths in the OpenAPI document', async () => {
      const doc = (await server.client.get('sys/internal/specs/openapi')).body as { paths: Record<string, unknown> };
      const of = (mount: string) =>
        JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(doc.paths).filter(([p]) => p.startsWith(`/${prefix(mount)}/`)))).replaceAll(mount, '<mount>')) as Record<
          string,
          unknown
        >;
      expect(Object.keys(of(MOUNTS.inProcess))).not.to.be.empty;
      expect(of(MOUNTS.isolated)).to.deep.equal(of(MOUNTS.inProcess));
    });
  });
}
