/** `keywarden server` as a user runs it: a child process, real signals, real files. */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../helpers/server.js';
import { request } from '../../helpers/http.js';
import { LevelDbStorage } from '../../../storage/leveldb.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../bin/keywarden.js');

interface Running {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

function run(args: string[], cwd: string): Running {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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

  it('exits with 2 for a usage error', async () => {
    const proc = run(['server'], process.cwd());
    expect(await proc.exited).to.equal(2);
    const unknown = run(['frobnicate'], process.cwd());
    expect(await unknown.exited).to.equal(2);
  });
});
