/**
 * The README cannot go stale: its quick-start run line and its ten-minute tour are executed here as
 * written (the tour's provider endpoints, account and port pointed at this machine's fakes).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/server.js';
import { request } from './helpers/http.js';
import { FakeCloud } from './fixtures/cloud/server.js';
import { World } from './fixtures/cloud/world.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/keywarden.js');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The ```sh blocks between two headings. */
function shellBlocks(readme: string, from: string, to: string): string[] {
  const section = readme.slice(readme.indexOf(from), readme.indexOf(to));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('README', function () {
  this.timeout(120_000);

  it('quick start: `npm start` serves an unsealed dev server on 127.0.0.1:8200 and prints the root token', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).to.contain('npm ci && npm start');
    expect(readme).to.contain('npm ci && npm test');
    // `npm ci` has run already (CI runs this very suite through `npm ci && npm test`).
    const child = spawn('npm', ['start'], { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const deadline = Date.now() + 60_000;
      while (!/Root Token: (\S+)/.test(out)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const token = /Root Token: (\S+)/.exec(out)![1]!;
      expect(out).to.contain("VAULT_ADDR='http://127.0.0.1:8200'");
      const health = await request('http://127.0.0.1:8200', 'GET', 'sys/health');
      expect(health.status).to.equal(200);
      const mounts = await request('http://127.0.0.1:8200', 'GET', 'sys/mounts', { token });
      expect(Object.keys(mounts.body.data)).to.include.members(['transit/']);
      const auth = await request('http://127.0.0.1:8200', 'GET', 'sys/auth', { token });
      expect(Object.keys(auth.body.data)).to.include.members(['cloud/', 'token/']);
    } finally {
      if (child.exitCode === null) {
        process.kill(-child.pid!, 'SIGINT');
        await new Promise((r) => child.once('exit', r));
      }
    }
  });

  it('the ten-minute tour runs as written', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const blocks = shellBlocks(readme, '## A ten-minute tour', '## Development server');
    expect(blocks.length).to.be.greaterThan(5);

    const world = new World();
    const fake = await new FakeCloud(world).start();
    const dir = await tempDir('keywarden-tour-');
    try {
      const account = '111122223333';
      const serverUser = world.addUser(account, 'keywarden-server');
      const app = world.addUser(account, 'orders-app');
      const serverKey = world.keyFor(serverUser);
      const appKey = world.keyFor(app);
      const port = await freePort();
      const script = blocks
        .join('\n')
        .replaceAll('127.0.0.1:8200', `127.0.0.1:${port}`)
        .replaceAll('https://sts.amazonaws.com', fake.url)
        .replaceAll('https://iam.amazonaws.com', fake.url)
        .replaceAll('https://ec2.us-east-1.amazonaws.com', fake.url)
        .replaceAll('123456789012', account);
      const prelude = [
        'set -euo pipefail',
        // `npx keywarden` as it resolves in a clone, without touching the registry from a temp dir.
        'npx() { if [ "$1" = keywarden ]; then shift; node "$KEYWARDEN_BIN" "$@"; else command npx "$@"; fi; }',
        'trap \'[ -f tour/server.pid ] && kill "$(cat tour/server.pid)" 2>/dev/null || true\' EXIT',
      ].join('\n');
      const result = await run('bash', ['-c', `${prelude}\n${script}`], {
        cwd: dir.path,
        timeoutMs: 100_000,
        env: {
          PATH: process.env.PATH,
          HOME: dir.path,
          KEYWARDEN_BIN: BIN,
          SERVER_ACCESS_KEY: serverKey.accessKeyId,
          SERVER_SECRET_KEY: serverKey.secretAccessKey,
          APP_ACCESS_KEY: appKey.accessKeyId,
          APP_SECRET_KEY: appKey.secretAccessKey,
          CLOUD_METADATA_ENDPOINT: fake.url,
          CLOUD_PROVIDER_TIMEOUT: '2s',
        },
      });
      expect(result.code, result.out).to.equal(0);
      expect(result.out).to.contain('order 1');
      expect(result.out).to.contain('order 2');
      expect(result.out).to.match(/token_policies\s+\[default orders-app\]/);
      expect(result.out).to.match(/policies\s+\[default orders-app\]/);
    } finally {
      await fake.close();
      await dir.remove();
    }
  });
});
