/**
 * External plugins run in processes of their own: requests and storage cross a message protocol,
 * and each way a plugin can fail (throw, crash, exit, memory, blocked loop) fails only its own
 * mount's requests, with a 5xx naming the plugin, and the next request gets a fresh process.
 */
import { expect } from 'chai';
import { unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import { echoSource, gateSource, installModule } from '../../../helpers/external-plugins.js';
import { createToken, type TestClient } from '../../../helpers/http.js';
import { IsolatedBackend } from '../../../../core/plugins/isolation/isolated-backend.js';
import { MARKER } from '../../../helpers/leaks.js';

type Server = Awaited<ReturnType<typeof startUnsealedServer>>;

describe('isolated external plugins', function () {
  // Plugin processes start in well under a second, but the test machine is shared and may be loaded.
  this.timeout(60_000);
  let dir: { path: string; remove: () => Promise<void> };
  let server: Server;
  let client: TestClient;

  before(async () => {
    dir = await tempDir('keywarden-plugins-');
    server = await startUnsealedServer({ pluginDirectory: dir.path, isolation: { memoryLimitMb: 32, residentLimitMb: 256, watchdogMs: 3000 } });
    client = server.client;
    const sha256 = await installModule(dir.path, 'echo.mjs', echoSource());
    expect((await client.post('sys/plugins/catalog/secret/echo', { sha256, command: 'echo.mjs', version: 'v1.0.0', env: ['GREETING=hello'], args: ['--flag'] })).status).to.equal(204);
    expect((await client.post('sys/mounts/echo-a', { type: 'echo' })).status).to.equal(204);
    expect((await client.post('sys/mounts/echo-b', { type: 'echo' })).status).to.equal(204);
    await client.post('sys/mounts/notes', { type: 'notes' });
  });

  after(async () => {
    await server?.close();
    await dir?.remove();
  });

  it('serves requests from a process of its own, with storage through the host', async () => {
    expect((await client.post('echo-a/data/greeting', { value: 'hi' })).status).to.equal(204);
    expect((await client.get('echo-a/data/greeting')).body.data).to.deep.equal({ value: 'hi' });
    expect((await client.list('echo-a/data')).body.data.keys).to.deep.equal(['greeting']);
    const info = (await client.get('echo-a/info')).body.data;
    expect(info.pid).to.be.a('number').and.not.equal(process.pid);
    expect(info.version).to.equal('1.0.0');
  });

  it('describes its paths from its process: help and the OpenAPI document', async () => {
    const help = await client.get('echo-a/data/x?help=1');
    expect(help.status).to.equal(200);
    expect(help.body.help).to.include('A stored value.');
    const openapi = (await client.get('sys/internal/specs/openapi')).body;
    expect(openapi.paths).to.include.keys('/echo-a/data/{name}', '/echo-b/info');
    expect((await client.get('echo-a/nowhere?help=1')).status).to.equal(404);
  });

  it('gives the process only the catalog entry\'s environment and arguments, no client token and no headers', async () => {
    const info = (await client.get('echo-a/info', { headers: { 'X-Custom': 'x' } })).body.data;
    // The test run marks every process it starts (test/helpers/leaks.ts); that variable is the tests', not the server's.
    expect(info.env.filter((name: string) => name !== MARKER)).to.deep.equal(['GREETING']);
    expect(info.argv).to.deep.equal(['--flag']);
    expect(info.token).to.equal(null);
    expect(info.headers).to.deep.equal([]);
    expect(info.globals).to.deep.equal([]);
  });

  it('keeps two mounts of one plugin apart: neither sees the other\'s data, nor reaches outside its own', async () => {
    await client.post('echo-a/data/only-a', { value: 'a' });
    expect((await client.get('echo-b/data/only-a')).status).to.equal(404);
    const escape = await client.get('echo-b/raw?key=../core/keyring');
    expect(escape.status).to.equal(400);
    const mounts = (await client.get('sys/mounts')).body.data;
    const other = await client.get(`echo-b/raw?key=${encodeURIComponent(`../logical/${mounts['echo-a/'].uuid}/data/only-a`)}`);
    expect(other.status).to.equal(400);
  });

  it('reports the running version and checksum on the mount', async () => {
    const mount = (await client.get('sys/mounts/echo-a')).body.data;
    expect(mount).to.include({ plugin_version: 'v1.0.0', running_plugin_version: 'v1.0.0' });
    expect(mount.running_sha256).to.match(/^[0-9a-f]{64}$/);
  });

  it('answers a handler that throws with a 500 that hides the detail, and keeps the process', async () => {
    const before = (await client.get('echo-a/info')).body.data.instance;
    const res = await client.get('echo-a/fail/throw');
    expect(res.status).to.equal(500);
    expect(res.body.errors).to.deep.equal(['internal error']);
    expect((await client.get('echo-a/info')).body.data.instance).to.equal(before);
  });

  for (const [how, why] of [
    ['crash', 'crashed'],
    ['exit', 'exited'],
    ['memory', 'ran out of memory (its heap limit is 32 MB)'],
    ['block', 'stopped responding: its event loop was blocked for more than 3000 ms'],
  ] as const) {
    it(`a plugin that fails by "${how}" fails its own request with a 503 naming it, and is restarted`, async () => {
      const before = (await client.get('echo-a/info')).body.data.instance;
      await client.post('echo-b/data/kept', { value: 'b' });
      const failing = client.get(`echo-a/fail/${how}`);
      // While it fails, the host and the other mounts keep serving.
      expect((await client.get('sys/health')).status).to.equal(200);
      expect((await client.get('echo-b/data/kept')).body.data).to.deep.equal({ value: 'b' });
      const res = await failing;
      expect(res.status).to.equal(503);
      expect(res.body.errors[0]).to.include('plugin "echo" (mount "echo-a/")').and.include(why);
      const after = await client.get('echo-a/info');
      expect(after.status).to.equal(200);
      expect(after.body.data.instance).not.to.equal(before);
      expect((await client.get('echo-a/data/greeting')).body.data).to.deep.equal({ value: 'hi' });
    });
  }

  it('checks the checksum again when it restarts a process, and refuses a changed file', async () => {
    const backend = server.host.mounts!.live('secret', 'echo-b/').backend as IsolatedBackend;
    await writeFile(path.join(dir.path, 'echo.mjs'), echoSource({ extra: '// changed on disk' }));
    try {
      backend.terminateProcess();
      const res = await client.get('echo-b/info');
      expect(res.status).to.equal(503);
      expect(res.body.errors[0]).to.include('cannot be restarted').and.include('SHA-256 of echo.mjs does not match');
      expect((await client.get('notes/state')).status).to.equal(200);
    } finally {
      await writeFile(path.join(dir.path, 'echo.mjs'), echoSource());
    }
    expect((await client.get('echo-b/info')).status).to.equal(200);
  });

  it('ends the process when the mount is disabled', async () => {
    await client.post('sys/mounts/echo-c', { type: 'echo' });
    const backend = server.host.mounts!.live('secret', 'echo-c/').backend as IsolatedBackend;
    expect((await client.delete('sys/mounts/echo-c')).status).to.equal(204);
    let error: unknown;
    try {
      await backend.prepare({ id: 'x', operation: 'read', path: 'info', data: {}, storage: undefined as never, mount: { path: 'echo-c/', type: 'echo', accessor: '', uuid: '' } });
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).to.include('is stopped');
  });

  it('serves an isolated auth method: an unauthenticated login mints a token, renewal runs its hook', async () => {
    const sha256 = await installModule(dir.path, 'gate.mjs', gateSource());
    expect((await client.post('sys/plugins/catalog/auth/gate', { sha256, command: 'gate.mjs' })).status).to.equal(204);
    expect((await client.post('sys/auth/gate', { type: 'gate' })).status).to.equal(204);
    const login = await client.post('auth/gate/login', { user: 'alice' }, { token: '' });
    expect(login.status, login.text).to.equal(200);
    expect(login.body.auth).to.include({ lease_duration: 600, renewable: true });
    const token = login.body.auth.client_token as string;
    expect((await client.get('auth/token/lookup-self', { token })).body.data.display_name).to.equal('gate-alice');
    expect((await client.post('auth/gate/login', { user: 'mallory' }, { token: '' })).status).to.equal(403);
    const renew = await client.post('auth/token/renew-self', {}, { token });
    expect(renew.status, renew.text).to.equal(200);
    expect(renew.body.auth.lease_duration).to.equal(300);
    expect((await client.get('auth/gate/stats')).body.data).to.deep.equal({ renewals: 1 });
  });

  it('refuses a prepare answer that changes the operation asked: a plugin cannot talk its way past the ACL', async () => {
    const sha256 = await installModule(dir.path, 'forger.mjs', forgerSource());
    expect((await client.post('sys/plugins/catalog/secret/forger', { sha256, command: 'forger.mjs' })).status).to.equal(204);
    expect((await client.post('sys/mounts/forger', { type: 'forger' })).status).to.equal(204);
    await client.put('sys/policy/forger-read', { policy: 'path "forger/*" { capabilities = ["read"] }' });
    const reader = await createToken(client, { policies: ['forger-read'] });
    expect((await client.get('forger/thing', { token: reader })).body.data).to.deep.equal({ writes: 0 });
    const write = await client.post('forger/thing', {}, { token: reader });
    expect(write.status, write.text).to.equal(500);
    expect(write.body.errors).to.deep.equal(['internal error']);
    expect((await client.get('forger/thing', { token: reader })).body.data).to.deep.equal({ writes: 0 });
  });

  it('runs an isolated plugin\'s periodic hook on the host\'s timer', async () => {
    const sha256 = await installModule(dir.path, 'tick.mjs', echoSource({
      name: 'tick',
      extra: "let ticks = 0;",
    }).replace("paths: [value, list, raw, info, fail] })", "paths: [value, list, raw, info, fail, definePath({ pattern: 'ticks', fields: {}, operations: { read: { summary: 'Ticks.', handler: async () => ({ data: { ticks } }) } }, synopsis: 'Ticks.', description: 'Periodic runs.' })], periodic: async () => { ticks++; } })"));
    await client.post('sys/plugins/catalog/secret/tick', { sha256, command: 'tick.mjs' });
    expect((await client.post('sys/mounts/tick', { type: 'tick' })).status).to.equal(204);
    await server.host.runPeriodic();
    await server.host.runPeriodic();
    expect((await client.get('tick/ticks')).body.data).to.deep.equal({ ticks: 2 });
  });

  describe('refusing modules', () => {
    it('refuses to mount a module whose file changed since it was registered', async () => {
      const sha256 = await installModule(dir.path, 'drift.mjs', echoSource({ name: 'drift' }));
      await client.post('sys/plugins/catalog/secret/drift', { sha256, command: 'drift.mjs' });
      await writeFile(path.join(dir.path, 'drift.mjs'), echoSource({ name: 'drift', extra: '// tampered' }));
      const res = await client.post('sys/mounts/drift', { type: 'drift' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.equal('plugin "drift" is refused: the SHA-256 of drift.mjs does not match the one registered in the catalog');
    });

    it('does not run a module that is in the plugin directory but not registered', async () => {
      await installModule(dir.path, 'stray.mjs', echoSource({ name: 'stray' }));
      const res = await client.post('sys/mounts/stray', { type: 'stray' });
      expect(res.status).to.equal(400);
      expect(res.body.errors).to.deep.equal(['unknown secrets engine type: stray']);
    });

    it('refuses a module whose manifest names another plugin, kind or version', async () => {
      for (const [name, source, why] of [
        ['liar', echoSource({ name: 'other' }), 'declares the secret plugin "other", not the secret plugin "liar"'],
        ['wrong-kind', echoSource({ name: 'wrong-kind', kind: 'auth' }), 'declares the auth plugin "wrong-kind", not the secret plugin'],
      ] as const) {
        const sha256 = await installModule(dir.path, `${name}.mjs`, source);
        await client.post(`sys/plugins/catalog/secret/${name}`, { sha256, command: `${name}.mjs` });
        const res = await client.post(`sys/mounts/${name}`, { type: name });
        expect(res.status, name).to.equal(400);
        expect(res.body.errors[0]).to.include(why);
      }
      const sha256 = await installModule(dir.path, 'old.mjs', echoSource({ name: 'old', version: '1.0.0' }));
      await client.post('sys/plugins/catalog/secret/old', { sha256, command: 'old.mjs', version: '2.0.0' });
      const res = await client.post('sys/mounts/old', { type: 'old' });
      expect(res.body.errors[0]).to.include('declares version v1.0.0, but it is registered as v2.0.0');
    });

    it('refuses a module that imports files beside it (the checksum covers one file)', async () => {
      await writeFile(path.join(dir.path, 'helper.mjs'), 'export const x = 1;');
      const sha256 = await installModule(dir.path, 'split.mjs', echoSource({ name: 'split', extra: "import './helper.mjs';" }));
      await client.post('sys/plugins/catalog/secret/split', { sha256, command: 'split.mjs' });
      const res = await client.post('sys/mounts/split', { type: 'split' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.include('it imports "./helper.mjs": a plugin is one module file');
    });

    it('refuses a module that throws while it loads, and leaves the server serving', async () => {
      const sha256 = await installModule(dir.path, 'boom.mjs', echoSource({ name: 'boom', extra: "throw new Error('cannot load');" }));
      await client.post('sys/plugins/catalog/secret/boom', { sha256, command: 'boom.mjs' });
      const res = await client.post('sys/mounts/boom', { type: 'boom' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.equal('plugin "boom" is unusable: it failed to load: cannot load');
      expect((await client.get('echo-a/info')).status).to.equal(200);
      await unlink(path.join(dir.path, 'boom.mjs'));
    });
  });
});

/**
 * A secrets engine whose backend answers every write's `prepare` as a read, hoping the host
 * authorizes the read and runs the write (its `execute` turns the operation back).
 */
function forgerSource(): string {
  return `import { FrameworkBackend, definePath } from 'keywarden/sdk';
let writes = 0;
const inner = new FrameworkBackend({ description: 'Forger (test plugin).', paths: [definePath({
  pattern: 'thing',
  fields: {},
  operations: {
    read: { summary: 'Count.', handler: async () => ({ data: { writes } }) },
    update: { summary: 'Write.', handler: async () => { writes++; return { data: { wrote: true } }; } },
  },
  synopsis: 'A thing.',
  description: 'Counted writes.',
})] });
export default {
  name: 'forger', kind: 'secret', version: '1.0.0', description: 'Forger (test plugin).',
  factory: () => ({
    description: inner.description,
    isUnauthenticated: (path) => inner.isUnauthenticated(path),
    help: (path) => inner.help(path),
    describePaths: () => inner.describePaths(),
    async prepare(target) {
      const real = await inner.prepare(target);
      const forged = { ...real, operation: real.operation === 'update' ? 'read' : real.operation };
      Object.defineProperty(forged, 'execute', { enumerable: false, value: () => real.execute() });
      return forged;
    },
    execute: (request, prepared) => inner.execute({ ...request, operation: 'update' }, { ...prepared, operation: prepared.operation === 'read' && request.operation === 'read' ? 'read' : 'update' }),
  }),
};
`;
}
