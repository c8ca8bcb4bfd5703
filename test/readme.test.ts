/**
 * The README cannot go stale: its quick-start run line, its install commands and its ten-minute
 * tour are executed here as written, the install in a fresh clone, the tour from the repository
 * root as the README says. The environment holds only what the README lets a reader choose (the
 * ports, the repository's URL), a home directory of the test's own for the tour (so npm's cache and
 * the CLI's files stay out of the real one), and, for the install, a global npm directory of the
 * test's own and the machine's way to the registry.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/server.js';
import { request } from './helpers/http.js';
import { freePort } from './helpers/net.js';
import { ProcessGroup } from './helpers/process-group.js';
import { runProcess } from './helpers/process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOUR_DIR = path.join(ROOT, 'tour');
/** How a machine reaches the npm registry: extra CAs (a proxy that inspects TLS), a proxy. */
const NETWORK_VARIABLES = /^(?:NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|(?:HTTPS?|NO|ALL)_PROXY)$/i;

/** Whether nothing accepts connections on 127.0.0.1:port. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** The ```sh blocks between two headings. */
function shellBlocks(readme: string, from: string, to: string): string[] {
  const section = readme.slice(readme.indexOf(from), readme.indexOf(to));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe('README', function () {
  it('quick start: `npm start` serves an unsealed dev server with transit and cloud mounted, and prints the root token', async function () {
    this.timeout(120_000);
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).to.contain('npm ci && npm start');
    expect(readme).to.contain('npm ci && npm test');
    expect(readme).to.contain('KEYWARDEN_DEV_LISTEN_ADDRESS');
    // Not 8200, the default: another server (a second run of this suite) may hold it.
    const address = `127.0.0.1:${await freePort()}`;
    const url = `http://${address}`;
    // The dev server stores its root token for the CLI, as Vault's does: here, not in the user's home.
    const home = await tempDir('keywarden-readme-start-');
    // `npm ci` has run already (CI runs this very suite through `npm ci && npm test`).
    const start = new ProcessGroup('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, KEYWARDEN_DEV_LISTEN_ADDRESS: address, KEYWARDEN_TOKEN_FILE: path.join(home.path, '.keywarden-token') },
    });
    try {
      const deadline = Date.now() + 60_000;
      while (!/Root Token: (\S+)/.test(start.output())) {
        if (Date.now() > deadline || start.exitCode() !== undefined) throw new Error(`npm start did not come up:\n${start.output()}`);
        await delay(100);
      }
      const out = start.output();
      const token = /Root Token: (\S+)/.exec(out)![1]!;
      expect(out).to.contain(`VAULT_ADDR='${url}'`);
      const health = await request(url, 'GET', 'sys/health');
      expect(health.status).to.equal(200);
      const mounts = await request(url, 'GET', 'sys/mounts', { token });
      expect(Object.keys(mounts.body.data)).to.include.members(['transit/']);
      const auth = await request(url, 'GET', 'sys/auth', { token });
      expect(Object.keys(auth.body.data)).to.include.members(['cloud/', 'token/']);
    } finally {
      await start.stop();
      await home.remove();
    }
  });

  it('install: the tarball made in a fresh clone, and the one npm makes from the git URL, install a keywarden command; docs/deployment.md installs the same way', async function () {
    // Three builds from nothing (npm ci and npm pack in the clone, npm pack from git) and two global
    // installs, on a machine that may be busy with other work: a generous limit.
    this.timeout(1_800_000);
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const blocks = shellBlocks(readme, '## Install', '## Production server');
    expect(blocks).to.have.length(2);
    const work = await tempDir('keywarden-install-');
    try {
      const clone = path.join(work.path, 'keywarden');
      const cloned = await runProcess('git', ['clone', '--quiet', ROOT, clone], { env: process.env });
      expect(cloned.code, cloned.stderr).to.equal(0);
      // npm's global directory is the test's own, named in a global npm configuration file of its own
      // (not npm_config_prefix: npm would take that variable as the place of the git clone's own
      // install when it builds it). The user's own settings, the npm cache, and the variables with
      // which the machine reaches the registry (a CA, a proxy) stay as they are: the global installs
      // fetch what the cache lacks.
      const prefix = path.join(work.path, 'global');
      const globalConfig = path.join(work.path, 'npmrc');
      await writeFile(globalConfig, `prefix=${prefix}\nupdate-notifier=false\n`);
      const network = Object.fromEntries(Object.entries(process.env).filter(([name]) => NETWORK_VARIABLES.test(name)));
      const env = { ...network, PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH}`, HOME: process.env.HOME, npm_config_globalconfig: globalConfig };
      expect((await runProcess('npm', ['prefix', '-g'], { env })).stdout.trim(), 'npm installs globally into the test\'s directory').to.equal(prefix);
      const run = async (block: string, cwd: string, extra: NodeJS.ProcessEnv = {}) => {
        const result = await runProcess('bash', ['-c', `set -euo pipefail\n${block}`], { cwd, env: { ...env, ...extra } });
        expect(result.code, `${block}\n${result.stdout}\n${result.stderr}`).to.equal(0);
        return result;
      };

      const fromClone = await run(blocks[0]!, clone);
      expect(fromClone.stdout).to.match(/^Keywarden v\d+\.\d+\.\d+$/m);
      const root = (await runProcess('npm', ['root', '-g'], { env })).stdout.trim();
      expect(existsSync(path.join(root, 'keywarden/examples/systemd/keywarden.service')), 'the unit file docs/deployment.md installs').to.equal(true);

      const elsewhere = path.join(work.path, 'elsewhere');
      await mkdir(elsewhere);
      await run(blocks[1]!, elsewhere, { KEYWARDEN_REPO: `file://${clone}` });
      const version = await runProcess('keywarden', ['version'], { env });
      expect(version.stdout).to.match(/^Keywarden v\d+\.\d+\.\d+\n$/);

      // docs/deployment.md installs the tarball the README makes, as root.
      const deployment = await readFile(path.join(ROOT, 'docs/deployment.md'), 'utf8');
      const install = /^sudo (npm install -g .+)$/m.exec(deployment)![1]!;
      expect(blocks.join('\n').split('\n')).to.include(install);
    } finally {
      await work.remove();
    }
  });

  it('install: npm pack in a clone without npm ci says to run npm ci first, without a stack trace', async function () {
    this.timeout(60_000);
    const work = await tempDir('keywarden-pack-bare-');
    try {
      const clone = path.join(work.path, 'keywarden');
      expect((await runProcess('git', ['clone', '--quiet', ROOT, clone], { env: process.env })).code).to.equal(0);
      const pack = await runProcess('npm', ['pack'], { cwd: clone, env: { PATH: process.env.PATH, HOME: work.path, npm_config_update_notifier: 'false' } });
      expect(pack.code).to.not.equal(0);
      expect(pack.stderr).to.contain('Run `npm ci` first');
      expect(pack.stderr).to.not.match(/^\s+at /m);
      expect(pack.stderr).to.not.contain('Cannot find package');
      expect(existsSync(path.join(clone, 'keywarden-0.1.0.tgz'))).to.equal(false);
    } finally {
      await work.remove();
    }
  });

  describe('the ten-minute tour', function () {
    // One home for the tour's runs: the first `npx keywarden` of a fresh npm cache links the clone
    // into it and builds it again; the runs after it find it there.
    let home: Awaited<ReturnType<typeof tempDir>>;
    before(async () => {
      home = await tempDir('keywarden-tour-home-');
    });
    after(async () => {
      await home.remove();
    });

    /** The tour's shell blocks run as written, in bash with -euo pipefail, with `env` added. */
    async function runTour(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null | undefined; out: string; tour: ProcessGroup }> {
      const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
      const blocks = shellBlocks(readme, '## A ten-minute tour', '## Development server');
      expect(blocks.length).to.be.greaterThan(5);
      expect(existsSync(TOUR_DIR), `${TOUR_DIR} exists, left by running the tour by hand: stop what it started and remove it`).to.equal(false);
      const tour = new ProcessGroup('bash', ['-c', ['set -euo pipefail', ...blocks].join('\n')], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: home.path,
          // A fresh npm cache would otherwise ask the registry whether npm itself is up to date.
          npm_config_update_notifier: 'false',
          ...env,
        },
      });
      if (!(await tour.waitExit(timeoutMs))) throw new Error(`the tour did not finish in time:\n${tour.output()}`);
      return { code: tour.exitCode(), out: tour.output(), tour };
    }

    /** A development server of the quick start's kind, in a directory of its own; its root token once it listens. */
    async function devServer(address: string): Promise<{ dev: ProcessGroup; token: string; dir: Awaited<ReturnType<typeof tempDir>> }> {
      const dir = await tempDir('keywarden-tour-dev-');
      const dev = new ProcessGroup(process.execPath, [path.join(ROOT, 'bin/keywarden.js'), 'server', '-dev', '-workers=1', `-dev-listen-address=${address}`], {
        cwd: dir.path,
        env: { PATH: process.env.PATH, HOME: dir.path },
      });
      const deadline = Date.now() + 60_000;
      while (!/Root Token: (\S+)/.test(dev.output())) {
        if (Date.now() > deadline || dev.exitCode() !== undefined) throw new Error(`the dev server did not come up:\n${dev.output()}`);
        await delay(100);
      }
      return { dev, token: /Root Token: (\S+)/.exec(dev.output())![1]!, dir };
    }

    /** Whether something accepts connections on 127.0.0.1:port. */
    function listening(port: number): Promise<boolean> {
      return new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
    }

    it('runs as written on its own port while the quick start\'s dev server holds 8200, shows a call its token may make and one it may not, and its last step stops everything it started', async function () {
      this.timeout(300_000);
      // The quick start's server, left running as it would be after step one (or whatever holds 8200 already).
      const ours = (await listening(8200)) ? undefined : await devServer('127.0.0.1:8200');
      expect(await listening(8210), 'port 8210, the tour\'s default, is taken by another program').to.equal(false);
      try {
        const { code, out, tour } = await runTour({}, 280_000);
        expect(code, out).to.equal(0);
        // The server it started told it what to do first.
        expect(out).to.contain('Keywarden is not initialized: run keywarden operator init (with KEYWARDEN_ADDR=http://127.0.0.1:8210)');
        expect(out).to.contain('order 1');
        expect(out).to.contain('order 2');
        expect(out).to.match(/token_policies\s+\["default" "orders-app"\]/);
        expect(out).to.match(/\npolicies\s+\["default" "orders-app"\]/);
        // The orders-app token: encrypting allowed, reading the key refused, and the CLI says why.
        expect(out).to.match(/\nciphertext\s+vault:v1:/);
        expect(out).to.contain('The token from VAULT_TOKEN is valid, but its policies (default, orders-app) do not allow GET on crypto/eu/keys/orders');
        expect(out).to.contain('refused, as the policy says (exit 2)');
        // The last step only sends signals: give what it stopped a moment to shut down.
        expect(await tour.waitEmpty(20_000), 'still running after the last step').to.deep.equal([]);
        // Each removes its file when it stops cleanly.
        expect(existsSync(path.join(TOUR_DIR, 'server.pid')), 'the server removes its pid_file').to.equal(false);
        expect(existsSync(path.join(TOUR_DIR, 'provider.env')), 'the stand-in removes its file').to.equal(false);
        if (ours) {
          // The dev server was never spoken to by the tour: it has no orders-app policy.
          const policies = await request('http://127.0.0.1:8200', 'GET', 'sys/policies/acl?list=true', { token: ours.token });
          expect(policies.body.data.keys).to.not.include('orders-app');
        }
      } finally {
        await rm(TOUR_DIR, { recursive: true, force: true });
        if (ours) {
          await ours.dev.stop();
          await ours.dir.remove();
        }
      }
    });

    it('stops at its first step, with the server\'s reason, when another server answers on its port', async function () {
      this.timeout(300_000);
      const port = await freePort();
      const other = await devServer(`127.0.0.1:${port}`);
      try {
        const { code, out } = await runTour({ TOUR_PORT: String(port) }, 280_000);
        expect(code, out).to.not.equal(0);
        expect(out).to.contain('address already in use');
        expect(out).to.not.contain('Unseal Key');
        expect(out).to.not.contain('already initialized');
        const policies = await request(`http://127.0.0.1:${port}`, 'GET', 'sys/policies/acl?list=true', { token: other.token });
        expect(policies.body.data.keys).to.not.include('orders-app');
      } finally {
        await rm(TOUR_DIR, { recursive: true, force: true });
        await other.dev.stop();
        await other.dir.remove();
      }
    });
  });

  describe('auto-unseal with a second Keywarden', function () {
    const SEAL_TOUR_DIR = path.join(ROOT, 'seal-tour');

    it('runs as written: the node is initialized with recovery shares, killed with SIGKILL, and restarts unsealed by the transit seal; its last step stops both servers', async function () {
      this.timeout(300_000);
      const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
      const blocks = shellBlocks(readme, '## Auto-unseal with a second Keywarden', '## Web UI');
      expect(blocks).to.have.length(3);
      expect(existsSync(SEAL_TOUR_DIR), `${SEAL_TOUR_DIR} exists, left by running the section by hand: stop what it started and remove it`).to.equal(false);
      // Two free ports in a row: the transit server's, and the node's after it.
      let port = await freePort();
      while (!(await portFree(port + 1))) port = await freePort();
      const home = await tempDir('keywarden-seal-tour-home-');
      const run = new ProcessGroup('bash', ['-c', ['set -euo pipefail', ...blocks].join('\n')], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: home.path, npm_config_update_notifier: 'false', SEAL_TOUR_PORT: String(port) },
      });
      try {
        if (!(await run.waitExit(280_000))) throw new Error(`the section did not finish in time:\n${run.output()}`);
        const out = run.output();
        expect(run.exitCode(), out).to.equal(0);
        expect(out).to.match(/^3$/m);
        expect(out).to.match(/^Seal Type\s+transit$/m);
        expect(out).to.match(/^Sealed\s+false$/m);
        expect(out).to.match(/^Total Shares\s+3$/m);
        // The section never unseals by hand: the second start after the SIGKILL unsealed itself.
        expect(blocks.join('\n')).to.not.contain('operator unseal');
        expect(await run.waitEmpty(20_000), 'still running after the last step').to.deep.equal([]);
      } finally {
        await run.stop();
        await rm(SEAL_TOUR_DIR, { recursive: true, force: true });
        await home.remove();
      }
    });
  });
});
