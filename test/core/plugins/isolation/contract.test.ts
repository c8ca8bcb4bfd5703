/**
 * The isolation contract: a plugin answers the same whether it runs in-process (as a built-in) or
 * isolated (the same code bundled into an external module, run in a process of its own). Each case
 * mounts one plugin both ways and sends both mounts the same requests, in the same order, with the
 * same tokens — successes, validation errors, every error class, sudo paths, storage round trips,
 * listings, help, existence checks — and compares every answer: status, body and headers.
 *
 * Adding a plugin is one line in CASES: its compiled module, the export holding its manifest, and
 * the requests to send it (and, for a method that talks to a provider, the stand-in to start).
 * A body may be computed when its request is sent (a freshly signed token); both mounts get the
 * same one.
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
import { StandInOidcProvider } from '../../../fixtures/identity/oidc-provider.js';
import { StandInKubernetesApi } from '../../../fixtures/identity/kubernetes-api.js';

/** Who sends a request: the root token, a token by policy (see POLICY), or nobody. */
type Caller = 'root' | 'sudo' | 'plain' | 'create-only' | 'none';

interface Exchange {
  readonly method: 'GET' | 'LIST' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to the mount; may carry a query. */
  readonly path: string;
  readonly body?: Record<string, unknown> | (() => Promise<Record<string, unknown>>);
  readonly as?: Caller;
  readonly headers?: Record<string, string>;
}

interface ContractCase {
  /** The plugin's compiled module, relative to dist/. */
  readonly module: string;
  /** The export of that module holding the manifest. */
  readonly exportName: string;
  readonly requests: readonly Exchange[];
  /** Starts what the plugin talks to, before the first request; stopped after the last. */
  readonly standIn?: { start(): Promise<unknown>; close(): Promise<void> };
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

/** The JWT/OIDC method against the stand-in provider: config, roles, logins that pass and fail. */
const provider = new StandInOidcProvider();
const now = () => Math.floor(Date.now() / 1000);
const ciClaims = () => ({ sub: 'repo:acme/app:ref:refs/heads/main', aud: 'ci', repository: 'acme/app', groups: ['release'], iat: now(), exp: now() + 300 });
const JWT_REQUESTS: readonly Exchange[] = [
  { method: 'POST', path: 'config', body: async () => ({ jwks_url: `${provider.url}/keys`, jwks_ca_pem: provider.ca.certPem, bound_issuer: provider.url }) },
  { method: 'GET', path: 'config' },
  { method: 'POST', path: 'config', body: { jwks_url: 'https://127.0.0.1:1/keys' } },
  { method: 'POST', path: 'config', body: { jwt_validation_pubkeys: 'x', jwt_supported_algs: 'HS256' } },
  {
    method: 'POST',
    path: 'role/ci',
    body: { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'ci', bound_claims_type: 'glob', bound_claims: { repository: 'acme/*' }, groups_claim: 'groups', claim_mappings: { repository: 'repo' }, token_policies: 'deploy', token_ttl: '10m' },
  },
  { method: 'GET', path: 'role/ci' },
  { method: 'POST', path: 'role/bad', body: { role_type: 'jwt', user_claim: 'sub' } },
  { method: 'POST', path: 'role/bad', body: { user_claim: 'sub', allowed_redirect_uris: 'http://localhost/cb', verbose_oidc_logging: true } },
  { method: 'LIST', path: 'role' },
  { method: 'POST', path: 'login', as: 'none', body: async () => ({ role: 'ci', jwt: await provider.sign(ciClaims()) }) },
  { method: 'POST', path: 'login', as: 'none', body: async () => ({ role: 'ci', jwt: await provider.sign({ ...ciClaims(), aud: 'other' }) }) },
  { method: 'POST', path: 'login', as: 'none', body: async () => ({ role: 'ci', jwt: await provider.sign({ ...ciClaims(), iat: now() - 7200, exp: now() - 3600 }) }) },
  { method: 'POST', path: 'login', as: 'none', body: async () => ({ role: 'ci', jwt: await provider.sign({ ...ciClaims(), repository: 'evil/app' }) }) },
  { method: 'POST', path: 'login', as: 'none', body: { role: 'ci', jwt: 'eyJhbGciOiJub25lIn0.e30.' } },
  { method: 'POST', path: 'login', as: 'none', body: { role: 'nobody', jwt: 'x' } },
  { method: 'POST', path: 'oidc/auth_url', as: 'none', body: { role: 'ci', redirect_uri: 'http://localhost:8250/oidc/callback' } },
  { method: 'GET', path: 'oidc/callback?state=unknown&code=x', as: 'none' },
  { method: 'DELETE', path: 'role/ci' },
  { method: 'GET', path: 'role/ci' },
  { method: 'GET', path: 'login?help=1' },
];

/** The Kubernetes method against the stand-in API server: config, roles, logins that pass and fail. */
const cluster = new StandInKubernetesApi();
const KUBERNETES_REQUESTS: readonly Exchange[] = [
  { method: 'GET', path: 'config' },
  { method: 'POST', path: 'config', body: async () => ({ kubernetes_host: cluster.url, kubernetes_ca_cert: cluster.ca.certPem, token_reviewer_jwt: await cluster.reviewerToken(), disable_local_ca_jwt: true }) },
  { method: 'GET', path: 'config' },
  { method: 'POST', path: 'config', body: { disable_local_ca_jwt: true, kubernetes_host: 'https://192.0.2.1' } },
  { method: 'POST', path: 'role/app', body: { bound_service_account_names: 'api', bound_service_account_namespaces: 'payments', audience: 'keywarden', token_policies: 'payments' } },
  { method: 'GET', path: 'role/app' },
  { method: 'POST', path: 'role/bad', body: { bound_service_account_names: 'api' } },
  { method: 'LIST', path: 'role' },
  { method: 'POST', path: 'login', as: 'none', body: async () => ({ role: 'app', jwt: await cluster.projectedToken(cluster.createServiceAccount('payments', 'api'), { audiences: ['keywarden'] }) }) },
  { method: 'POST', path: 'login', as: 'none', body: async () => ({ role: 'app', jwt: await cluster.projectedToken(cluster.createServiceAccount('default', 'api'), { audiences: ['keywarden'] }) }) },
  { method: 'POST', path: 'login', as: 'none', body: async () => ({ role: 'app', jwt: await cluster.projectedToken(cluster.createServiceAccount('payments', 'api'), { audiences: ['other'] }) }) },
  {
    method: 'POST',
    path: 'login',
    as: 'none',
    body: async () => {
      const gone = cluster.createServiceAccount('payments', 'api');
      const jwt = await cluster.projectedToken(gone, { audiences: ['keywarden'] });
      cluster.deleteServiceAccount(gone);
      return { role: 'app', jwt };
    },
  },
  { method: 'POST', path: 'login', as: 'none', body: { role: 'app' } },
  { method: 'DELETE', path: 'role/app' },
  { method: 'GET', path: 'login?help=1' },
];

const CASES: readonly ContractCase[] = [
  { module: 'test/fixtures/plugins/contract.js', exportName: 'contractPlugin', requests: CONTRACT_REQUESTS },
  { module: 'plugins/jwt/backend.js', exportName: 'jwtAuthPlugin', requests: JWT_REQUESTS, standIn: provider },
  { module: 'plugins/kubernetes/backend.js', exportName: 'kubernetesAuthPlugin', requests: KUBERNETES_REQUESTS, standIn: cluster },
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

/** An answer with what differs by design taken out: the request id, and the mount's own name. */
function comparable(res: TestResponse, mount: string) {
  const text = res.text.replaceAll(mount, '<mount>');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: compared as text.
  }
  if (body !== null && typeof body === 'object' && 'request_id' in body) delete (body as { request_id?: unknown }).request_id;
  // A login's token, accessor and entity are new each time: only their presence is compared.
  const auth = (body as { auth?: Record<string, unknown> } | null)?.auth;
  if (auth) for (const name of ['client_token', 'accessor', 'entity_id']) if (typeof auth[name] === 'string' && auth[name] !== '') auth[name] = '<new>';
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
      await contract.standIn?.start();
      const file = path.join(DIST, contract.module);
      manifest = ((await import(file)) as Record<string, PluginManifest>)[contract.exportName]!;
      dir = await tempDir('keywarden-contract-');
      // A built-in is registered by every server already; a fixture plugin is given to it.
      const builtIn = BUILTIN_PLUGINS.includes(manifest);
      server = await startUnsealedServer({ pluginDirectory: dir.path, plugins: builtIn ? [notesPlugin] : [notesPlugin, manifest] });
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
      await contract.standIn?.close();
    });

    for (const exchange of contract.requests) {
      const caller = exchange.as ?? 'root';
      it(`${exchange.method} ${exchange.path} (${caller}): the same status, body and headers`, async () => {
        const body = typeof exchange.body === 'function' ? await exchange.body() : exchange.body;
        const send = (mount: string) =>
          server.client.send(exchange.method, `${prefix(mount)}/${exchange.path}`, {
            token: tokens.get(caller) ?? '',
            ...(body ? { body } : {}),
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
