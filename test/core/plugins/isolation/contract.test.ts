/**
 * The isolation contract: a plugin answers the same whether it runs in-process (as a built-in) or
 * isolated (the same code bundled into an external module, run in a process of its own). Each case
 * mounts one plugin both ways and sends both mounts the same requests, in the same order, with the
 * same tokens — successes, validation errors, every error class, sudo paths, storage round trips,
 * listings, help, existence checks — and compares every answer: status, body and headers. Every
 * built-in plugin is a case, beside a fixture plugin that exercises the contract's corners.
 *
 * Adding a plugin is one line in CASES: its compiled module, the export holding its manifest, and
 * its requests (test/fixtures/contract/).
 */
import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import { bundleExternal, installModule } from '../../../helpers/external-plugins.js';
import { createToken, type TestResponse } from '../../../helpers/http.js';
import notesPlugin from '../../../fixtures/plugins/notes.js';
import { CONTRACT_ERRORS } from '../../../fixtures/plugins/contract.js';
import type { Caller, ContractCase, Exchange, Given } from '../../../fixtures/contract/exchange.js';
import { TRANSIT_CONTRACT } from '../../../fixtures/contract/transit.js';
import { KV1_CONTRACT, KV2_CONTRACT } from '../../../fixtures/contract/kv.js';
import { CLOUD_CONTRACT } from '../../../fixtures/contract/cloud.js';
import { JWT_CONTRACT } from '../../../fixtures/contract/jwt.js';
import { KUBERNETES_CONTRACT } from '../../../fixtures/contract/kubernetes.js';
import { APPROLE_CONTRACT } from '../../../fixtures/contract/approle.js';
import { USERPASS_CONTRACT } from '../../../fixtures/contract/userpass.js';
import { BUILTIN_PLUGINS } from '../../../../core/plugins/builtin.js';
import type { PluginManifest } from '../../../../sdk/index.js';

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

const CASES: readonly ContractCase[] = [
  { module: 'test/fixtures/plugins/contract.js', exportName: 'contractPlugin', options: { setting: 'on' }, requests: CONTRACT_REQUESTS },
  { module: 'plugins/transit/backend.js', exportName: 'transitPlugin', ...TRANSIT_CONTRACT },
  { module: 'plugins/kv/backend.js', exportName: 'kvPlugin', ...KV1_CONTRACT },
  { module: 'plugins/kv/backend.js', exportName: 'kvPlugin', ...KV2_CONTRACT },
  { module: 'plugins/cloud-auth/backend.js', exportName: 'cloudAuthPlugin', ...CLOUD_CONTRACT },
  { module: 'plugins/jwt/backend.js', exportName: 'jwtAuthPlugin', ...JWT_CONTRACT },
  { module: 'plugins/kubernetes/backend.js', exportName: 'kubernetesAuthPlugin', ...KUBERNETES_CONTRACT },
  { module: 'plugins/approle/backend.js', exportName: 'appRolePlugin', ...APPROLE_CONTRACT },
  { module: 'plugins/userpass/backend.js', exportName: 'userpassPlugin', ...USERPASS_CONTRACT },
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

/** Replaces the value at a dotted path (`*`: every key or index) by its type, where it is present. */
function maskRandom(value: unknown, segments: readonly string[]): void {
  if (value === null || typeof value !== 'object' || segments.length === 0) return;
  const [head, ...rest] = segments as [string, ...string[]];
  const record = value as Record<string, unknown>;
  for (const key of head === '*' ? Object.keys(record) : [head]) {
    if (!(key in record)) continue;
    if (rest.length === 0) record[key] = `<random ${typeof record[key]}>`;
    else maskRandom(record[key], rest);
  }
}

/** An answer with what differs by design taken out: the request id, the mount's own name, the case's random fields. */
function comparable(res: TestResponse, mount: string, random: readonly string[]) {
  const text = res.text.replaceAll(mount, '<mount>');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: compared as text.
  }
  if (body !== null && typeof body === 'object' && 'request_id' in body) delete (body as { request_id?: unknown }).request_id;
  for (const field of random) maskRandom(body, field.split('.'));
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !VOLATILE_HEADERS.has(name)));
  return { status: res.status, body, headers };
}

for (const contract of CASES) {
  describe(`the isolation contract: ${contract.label ?? contract.exportName} answers alike in-process and isolated`, function () {
    // Plugin processes start in well under a second, but the test machine is shared and may be loaded.
    this.timeout(60_000);
    let server: Awaited<ReturnType<typeof startUnsealedServer>>;
    let dir: { path: string; remove: () => Promise<void> };
    let manifest: PluginManifest;
    const tokens = new Map<Caller, string | undefined>();
    let given: Given & { readonly close?: () => Promise<void> } = {};
    const prefix = (mount: string) => (manifest.kind === 'auth' ? `auth/${mount}` : mount);

    before(async () => {
      const file = path.join(DIST, contract.module);
      manifest = ((await import(file)) as Record<string, PluginManifest>)[contract.exportName]!;
      dir = await tempDir('keywarden-contract-');
      const builtin = BUILTIN_PLUGINS.some((p) => p.name === manifest.name);
      server = await startUnsealedServer({ pluginDirectory: dir.path, plugins: builtin ? [notesPlugin] : [notesPlugin, manifest] });
      const { client } = server;
      const isolatedName = `${manifest.name}-isolated`;
      const sha256 = await installModule(dir.path, `${isolatedName}.mjs`, await bundleExternal(file, contract.exportName, isolatedName));
      expect((await client.post(`sys/plugins/catalog/${manifest.kind}/${isolatedName}`, { sha256, command: `${isolatedName}.mjs` })).status).to.equal(204);
      const table = manifest.kind === 'auth' ? 'sys/auth' : 'sys/mounts';
      expect((await client.post(`${table}/${MOUNTS.inProcess}`, { type: manifest.name, options: contract.options ?? {} })).status).to.equal(204);
      const isolated = await client.post(`${table}/${MOUNTS.isolated}`, { type: isolatedName, options: contract.options ?? {} });
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
      given = (await contract.setup?.({ client, prefixes: [prefix(MOUNTS.inProcess), prefix(MOUNTS.isolated)] })) ?? {};
    });

    after(async () => {
      await given.close?.();
      await server?.close();
      await dir?.remove();
    });

    for (const exchange of contract.requests) {
      const caller = exchange.as ?? 'root';
      it(`${exchange.method} ${exchange.path} (${caller}): the same status, body and headers`, async () => {
        // Made once and sent to both mounts (a freshly signed token must be the same token).
        const body = typeof exchange.body === 'function' ? await exchange.body(given) : exchange.body;
        const send = (mount: string) =>
          server.client.send(exchange.method, `${prefix(mount)}/${exchange.path}`, {
            token: tokens.get(caller) ?? '',
            ...(body ? { body } : {}),
            ...(exchange.rawBody ? { rawBody: exchange.rawBody } : {}),
            ...(exchange.headers ? { headers: exchange.headers } : {}),
          });
        const random = [...(contract.random ?? []), ...(exchange.random ?? [])];
        const inProcess = comparable(await send(MOUNTS.inProcess), MOUNTS.inProcess, random);
        const isolated = comparable(await send(MOUNTS.isolated), MOUNTS.isolated, random);
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

describe('the isolation contract: a leased secret is issued, renewed and revoked alike in-process and isolated', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  let dir: { path: string; remove: () => Promise<void> };

  before(async () => {
    const file = path.join(DIST, 'test/fixtures/plugins/contract.js');
    const manifest = ((await import(file)) as Record<string, PluginManifest>).contractPlugin!;
    dir = await tempDir('keywarden-contract-');
    server = await startUnsealedServer({ pluginDirectory: dir.path, plugins: [manifest] });
    const sha256 = await installModule(dir.path, 'contract-isolated.mjs', await bundleExternal(file, 'contractPlugin', 'contract-isolated'));
    expect((await server.client.post('sys/plugins/catalog/secret/contract-isolated', { sha256, command: 'contract-isolated.mjs' })).status).to.equal(204);
    expect((await server.client.post(`sys/mounts/${MOUNTS.inProcess}`, { type: 'contract' })).status).to.equal(204);
    expect((await server.client.post(`sys/mounts/${MOUNTS.isolated}`, { type: 'contract-isolated' })).status).to.equal(204);
  });
  after(async () => {
    await server?.close();
    await dir?.remove();
  });

  /** One lease's life on a mount: every answer, comparable across mounts (lease ids and times masked). */
  async function life(mount: string): Promise<unknown[]> {
    const { client } = server;
    const answers: unknown[] = [];
    const record = (res: TestResponse) => answers.push(comparable(res, mount, ['lease_id', 'data.id', 'data.issue_time', 'data.expire_time', 'data.last_renewal']));
    const issued = await client.post(`${mount}/leased/a`, { ttl: '1h', max_ttl: '2h' });
    record(issued);
    const leaseId = issued.body.lease_id as string;
    record(await client.put('sys/leases/lookup', { lease_id: leaseId }));
    record(await client.put('sys/leases/renew', { lease_id: leaseId, increment: '30m' }));
    record(await client.put('sys/leases/renew', { lease_id: leaseId, increment: '5h' }));
    record(await client.put(`${mount}/refuse-revocation`, { refuse: true }));
    record(await client.put('sys/leases/revoke', { lease_id: leaseId }));
    record(await client.put(`${mount}/refuse-revocation`, { refuse: false }));
    record(await client.put('sys/leases/revoke', { lease_id: leaseId }));
    record(await client.get(`${mount}/leased/a`));
    record(await client.put('sys/leases/lookup', { lease_id: leaseId }));
    return answers;
  }

  it('answers every step of a lease\'s life the same: issue, lookup, renew, a refused and a done revocation', async () => {
    const inProcess = await life(MOUNTS.inProcess);
    const isolated = await life(MOUNTS.isolated);
    expect((inProcess[2] as { status: number }).status).to.equal(200);
    expect((inProcess[5] as { status: number }).status).to.equal(502);
    expect((inProcess[8] as { body: { data: unknown } }).body.data).to.deep.equal({ state: 'revoked', renewals: 2 });
    expect(isolated).to.deep.equal(inProcess);
  });
});
