/** `keywarden server` as a user runs it: a child process, real signals, real files. */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../helpers/server.js';
import { request } from '../../helpers/http.js';
import { LevelDbStorage } from '../../../storage/leveldb.js';
import { canChown, expectPrivateTree, octal, openUp } from '../../helpers/files.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../bin/keywarden.js');

interface Running {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/** Started with umask 022, the usual default, so nothing is private unless the server makes it so. */
function run(args: string[], cwd: string): Running {
  const previous = process.umask(0o022);
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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

async function stop(proc: Running): Promise<void> {
  proc.child.kill('SIGTERM');
  expect(await proc.exited, proc.output()).to.equal(0);
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
      expect((await request(address, 'GET', 'sys/mounts', { token })).status).to.equal(200);
      first.child.kill('SIGTERM');
      expect(await first.exited).to.equal(0);

      const second = run(['server', '-dev', '-dev-listen-address=127.0.0.1:0'], dir.path);
      await waitFor(() => /VAULT_ADDR='([^']+)'/.test(second.output()), 'dev restart');
      const address2 = /VAULT_ADDR='([^']+)'/.exec(second.output())![1]!;
      const status = await request(address2, 'GET', 'sys/seal-status');
      expect(status.body.sealed).to.equal(false);
      expect((await request(address2, 'GET', 'sys/mounts', { token })).status).to.equal(200);
      second.child.kill('SIGINT');
      expect(await second.exited).to.equal(0);
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

  it('fails to start with a clear one-line error when the PostgreSQL database cannot be reached, never printing the password', async () => {
    const dir = await tempDir();
    try {
      const config = path.join(dir.path, 'config.json');
      await writeFile(
        config,
        JSON.stringify({
          storage: { postgresql: { connection_url: 'postgres://kw:hunter2@127.0.0.1:1/kw', ha_enabled: true } },
          api_addr: 'http://127.0.0.1:8299',
          listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } },
        }),
      );
      const proc = run(['server', '-config', config], dir.path);
      expect(await proc.exited).to.equal(1);
      expect(proc.output()).to.contain('PostgreSQL refused the connection (is the database running?)');
      expect(proc.output()).to.not.match(/\n\s+at /);
      expect(proc.output()).to.not.contain('hunter2');
    } finally {
      await dir.remove();
    }
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

  describe('file permissions', () => {
    /** Runs `body` with a fresh directory to run the server in and the data directory path inside it. */
    async function inTempDir(body: (cwd: string, dataDir: string) => Promise<void>): Promise<void> {
      const dir = await tempDir();
      try {
        await body(dir.path, path.join(dir.path, 'data'));
      } finally {
        await dir.remove();
      }
    }

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

  it('exits with 2 for a usage error, and 127 (as vault) for an unknown command', async () => {
    const proc = run(['server'], process.cwd());
    expect(await proc.exited).to.equal(2);
    const unknown = run(['frobnicate'], process.cwd());
    expect(await unknown.exited).to.equal(127);
  });
});
