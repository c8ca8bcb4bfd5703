/**
 * A registered plugin that attacks its host (test/fixtures/external-plugins/hostile.mjs), as the
 * third security review did (issue #30, finding 5): it sees only the environment its catalog entry
 * gives it, reads none of the server's files, writes nothing, starts nothing, is killed when it
 * holds more memory than its limit, and whatever ends its process ends only that process: the
 * host, and the other mounts, keep answering, and the next request starts it again. When its host
 * dies, it does not stay behind.
 */
import { expect } from 'chai';
import inspector from 'node:inspector';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import { echoSource, installModule } from '../../../helpers/external-plugins.js';
import { TestClient } from '../../../helpers/http.js';
import { MARKER } from '../../../helpers/leaks.js';
import { spawnServer } from '../../../reliability/support/child.js';

const HOSTILE = fileURLToPath(new URL('../../../../../test/fixtures/external-plugins/hostile.mjs', import.meta.url));

type Server = Awaited<ReturnType<typeof startUnsealedServer>>;

/** Installs the hostile module into a plugin directory and returns its SHA-256. */
async function installHostile(directory: string): Promise<string> {
  return installModule(directory, 'hostile.mjs', await readFile(HOSTILE, 'utf8'));
}

/** Resolves once no process has the id `pid` any more. */
async function gone(pid: number): Promise<void> {
  while (existsSync(`/proc/${pid}`)) await delay(50);
}

describe('a hostile plugin', function () {
  // Plugin processes start in well under a second, but the test machine is shared and may be loaded.
  this.timeout(60_000);
  let plugins: { path: string; remove: () => Promise<void> };
  let data: { path: string; remove: () => Promise<void> };
  let configFile: string;
  let server: Server;
  let client: TestClient;

  before(async () => {
    plugins = await tempDir('keywarden-plugins-');
    data = await tempDir('keywarden-data-');
    // A configuration file beside the data, as a real server has one, with a secret in it.
    configFile = path.join(data.path, 'keywarden.hcl');
    await writeFile(configFile, 'storage "postgresql" { connection_url = "postgres://keywarden:s3cret@db/keywarden" }\n', { mode: 0o600 });
    server = await startUnsealedServer({
      pluginDirectory: plugins.path,
      leveldbPath: path.join(data.path, 'leveldb'),
      isolation: { memoryLimitMb: 64, residentLimitMb: 192, watchdogMs: 5000 },
    });
    client = server.client;
    const sha256 = await installHostile(plugins.path);
    expect((await client.post('sys/plugins/catalog/secret/hostile', { sha256, command: 'hostile.mjs', env: ['ONLY=this'] })).status).to.equal(204);
    expect((await client.post('sys/mounts/hostile', { type: 'hostile' })).status).to.equal(204);
    const echo = await installModule(plugins.path, 'echo.mjs', echoSource());
    await client.post('sys/plugins/catalog/secret/echo', { sha256: echo, command: 'echo.mjs' });
    expect((await client.post('sys/mounts/bystander', { type: 'echo' })).status).to.equal(204);
    await client.post('bystander/data/kept', { value: 'still here' });
  });

  after(async () => {
    await server?.close();
    await plugins?.remove();
    await data?.remove();
    // Only opened if the host obeyed a signal it must ignore (the test then failed).
    inspector.close();
  });

  /** The host and the other mount answer while `work` runs, and `work`'s answer comes back. */
  async function whileHostServes<T>(work: Promise<T>): Promise<T> {
    expect((await client.get('sys/health')).status).to.equal(200);
    expect((await client.get('bystander/data/kept')).body.data).to.deep.equal({ value: 'still here' });
    return work;
  }

  /** After the plugin's process ended: the next request starts a new one (another process id). */
  async function restartsAfter(pid: number): Promise<void> {
    const next = await client.get('hostile/environment');
    expect(next.status, next.text).to.equal(200);
    expect(next.body.data.pid).not.to.equal(pid);
    expect((await client.get('bystander/data/kept')).body.data).to.deep.equal({ value: 'still here' });
  }

  it('sees only the environment its catalog entry declares, and cannot read its own or its host\'s from /proc', async () => {
    const seen = (await client.get('hostile/environment')).body.data;
    expect(seen.pid).not.to.equal(process.pid);
    // The test run marks every process it starts (test/helpers/leaks.ts); that variable is the tests', not the server's.
    expect(seen.env.filter((name: string) => name !== MARKER)).to.deep.equal(['ONLY']);
    expect(seen.proc_self_environ).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect(seen.proc_parent_environ).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
  });

  it('cannot read the server\'s configuration file, list its data directory, or read the plugin directory (its own module included)', async () => {
    const read = async (file: string) => (await client.get(`hostile/read?file=${encodeURIComponent(file)}`)).body.data;
    const list = async (dir: string) => (await client.get(`hostile/list?dir=${encodeURIComponent(dir)}`)).body.data;
    expect(await read(configFile)).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect(await list(path.join(data.path, 'leveldb'))).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect(await list(plugins.path)).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect(await read(path.join(plugins.path, 'echo.mjs'))).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect(await read(path.join(plugins.path, 'hostile.mjs'))).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect(await read('/etc/passwd')).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
  });

  it('cannot write a file, start a process, become one (execve) or start a worker, create a database file, or set V8 flags', async () => {
    const target = path.join(plugins.path, 'planted.mjs');
    expect((await client.get(`hostile/write?file=${encodeURIComponent(target)}`)).body.data).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect((await client.get('hostile/spawn')).body.data).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect((await client.get('hostile/execve')).body.data).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    expect((await client.get('hostile/worker')).body.data).to.deep.equal({ refused: 'ERR_ACCESS_DENIED' });
    const database = path.join(plugins.path, 'planted.db');
    expect((await client.get(`hostile/sqlite?file=${encodeURIComponent(database)}`)).body.data).to.have.key('refused');
    expect(existsSync(target) || existsSync(database)).to.equal(false);
    expect((await client.get('hostile/v8-flags')).body.data).to.have.property('refused').that.includes('a plugin may not set V8 flags');
  });

  it('cannot signal its host or its process group, open its host\'s inspector, or lower its host\'s priority', async () => {
    const host = process.pid;
    for (const target of [host, 0, -host]) {
      const res = (await client.get(`hostile/signal?pid=${target}&signal=0`)).body.data;
      expect(res, `signal to ${target}`).to.have.property('refused').that.includes('a plugin may signal only its own process');
    }
    expect((await client.get(`hostile/inspect?pid=${host}`)).body.data).to.have.property('refused').that.includes('a plugin may not open the inspector');
    expect((await client.get(`hostile/renice?pid=${host}`)).body.data).to.have.property('refused').that.includes('a plugin may change the priority of only its own process');
  });

  it('cannot have the host open its inspector by SIGUSR1, which a process of the same user could still send', async () => {
    process.kill(process.pid, 'SIGUSR1');
    // The signal is handled on a later turn of the event loop; a request round trip gives it one.
    expect((await client.get('sys/health')).status).to.equal(200);
    expect(inspector.url()).to.equal(undefined);
  });

  it('holding Buffers far beyond its resident limit is killed: a 503 naming it, the host unharmed, and a fresh process next', async () => {
    const { pid } = (await client.get('hostile/environment')).body.data;
    const res = await whileHostServes(client.get('hostile/hold?mb=1024'));
    expect(res.status, res.text).to.equal(503);
    expect(res.body.errors[0]).to.include('plugin "hostile" (mount "hostile/") ran out of memory').and.include('its limit is 192 MB');
    await restartsAfter(pid);
  });

  for (const [how, request, why] of [
    ['killing itself with SIGKILL', 'hostile/suicide', 'exited (signal SIGKILL)'],
    ['exiting', 'hostile/exit?code=0', 'exited (code 0)'],
  ] as const) {
    it(`${how} ends only its own process: a 503 naming it, the host and the other mounts unharmed, and a fresh process next`, async () => {
      const { pid } = (await client.get('hostile/environment')).body.data;
      const res = await whileHostServes(client.get(request));
      expect(res.status, res.text).to.equal(503);
      expect(res.body.errors[0]).to.include(`plugin "hostile" (mount "hostile/") ${why}`);
      await restartsAfter(pid);
    });
  }

  describe('when its host dies', () => {
    let dir: { path: string; remove: () => Promise<void> };
    let child: Awaited<ReturnType<typeof spawnServer>> | undefined;

    before(async () => {
      dir = await tempDir('keywarden-host-');
      await mkdir(path.join(dir.path, 'plugins'), { mode: 0o700 });
      await copyFile(HOSTILE, path.join(dir.path, 'plugins', 'hostile.mjs'));
    });

    after(async () => {
      if (child && child.child.exitCode === null && child.child.signalCode === null) {
        child.child.kill('SIGKILL');
        await child.exited;
      }
      await dir?.remove();
    });

    it('exits with it rather than staying behind', async () => {
      const config = path.join(dir.path, 'keywarden.json');
      await writeFile(
        config,
        JSON.stringify({
          listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } },
          storage: { leveldb: { path: path.join(dir.path, 'data') } },
          plugin_directory: path.join(dir.path, 'plugins'),
          log_level: 'info',
        }),
      );
      child = await spawnServer(config, dir.path);
      const api = new TestClient(child.address);
      const init = await api.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
      await api.put('sys/unseal', { key: init.body.keys[0] });
      api.token = init.body.root_token as string;
      const sha256 = await installHostile(path.join(dir.path, 'plugins'));
      expect((await api.post('sys/plugins/catalog/secret/hostile', { sha256, command: 'hostile.mjs' })).status).to.equal(204);
      expect((await api.post('sys/mounts/hostile', { type: 'hostile' })).status).to.equal(204);
      const { pid } = (await api.get('hostile/environment')).body.data;
      expect(pid).not.to.equal(child.child.pid);
      child.child.kill('SIGKILL');
      await child.exited;
      await gone(pid);
    });
  });
});
