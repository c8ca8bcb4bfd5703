/**
 * The README cannot go stale: its quick-start run line and its ten-minute tour are executed here as
 * written, from the repository root as the README says. The environment holds only what the README
 * lets a reader choose (the ports) and a home directory of the test's own, so npm's cache and the
 * CLI's files stay out of the real one.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/server.js';
import { request } from './helpers/http.js';
import { freePort } from './helpers/net.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOUR_DIR = path.join(ROOT, 'tour');

/** The ```sh blocks between two headings. */
function shellBlocks(readme: string, from: string, to: string): string[] {
  const section = readme.slice(readme.indexOf(from), readme.indexOf(to));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

interface Script {
  readonly output: () => string;
  /** The exit code, or undefined while the script runs. */
  readonly exitCode: () => number | null | undefined;
  /** Ends everything the script started, background jobs included, and the script itself. */
  readonly stopAll: () => Promise<void>;
}

/**
 * Runs a bash script as the leader of a process group of its own: whatever it starts in the
 * background stays in that group (bash without job control makes no groups of its own), so one
 * signal to the group reaches all of it.
 */
function startScript(script: string, cwd: string, env: NodeJS.ProcessEnv): Script {
  const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    });
  });
  child.once('error', (err) => {
    out += `\n${err.message}`;
    exitCode = null;
  });
  const signalGroup = (signal: NodeJS.Signals): boolean => {
    try {
      process.kill(-child.pid!, signal);
      return true;
    } catch {
      return false; // the group is empty
    }
  };
  return {
    output: () => out,
    exitCode: () => exitCode,
    stopAll: async () => {
      if (!signalGroup('SIGTERM')) return;
      await delay(3_000);
      signalGroup('SIGKILL');
      if (exitCode === undefined) await exited;
    },
  };
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
    // `npm ci` has run already (CI runs this very suite through `npm ci && npm test`).
    const child = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, KEYWARDEN_DEV_LISTEN_ADDRESS: address },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const deadline = Date.now() + 60_000;
      while (!/Root Token: (\S+)/.test(out)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`);
        await delay(100);
      }
      const token = /Root Token: (\S+)/.exec(out)![1]!;
      expect(out).to.contain(`VAULT_ADDR='${url}'`);
      const health = await request(url, 'GET', 'sys/health');
      expect(health.status).to.equal(200);
      const mounts = await request(url, 'GET', 'sys/mounts', { token });
      expect(Object.keys(mounts.body.data)).to.include.members(['transit/']);
      const auth = await request(url, 'GET', 'sys/auth', { token });
      expect(Object.keys(auth.body.data)).to.include.members(['cloud/', 'token/']);
    } finally {
      if (child.exitCode === null) {
        process.kill(-child.pid!, 'SIGINT');
        await new Promise((r) => child.once('exit', r));
      }
    }
  });

  it('the ten-minute tour runs as written and its last step stops everything it started', async function () {
    // The first `npx keywarden` of a fresh npm cache links the clone into it and builds it again.
    this.timeout(300_000);
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const blocks = shellBlocks(readme, '## A ten-minute tour', '## Development server');
    expect(blocks.length).to.be.greaterThan(5);
    expect(existsSync(TOUR_DIR), `${TOUR_DIR} exists, left by running the tour by hand: stop what it started and remove it`).to.equal(false);

    const home = await tempDir('keywarden-tour-home-');
    // Printed once every step has run; then `wait` returns only when the jobs the tour started have ended.
    const done = 'README-TOUR-STEPS-DONE';
    const script = startScript(['set -euo pipefail', ...blocks, `echo ${done}`, 'wait'].join('\n'), ROOT, {
      PATH: process.env.PATH,
      HOME: home.path,
      TOUR_PORT: String(await freePort()),
      // A fresh npm cache would otherwise ask the registry whether npm itself is up to date.
      npm_config_update_notifier: 'false',
    });
    try {
      const deadline = Date.now() + 280_000;
      let stepsDoneAt: number | undefined;
      while (script.exitCode() === undefined) {
        if (stepsDoneAt === undefined && script.output().includes(done)) stepsDoneAt = Date.now();
        if (stepsDoneAt !== undefined && Date.now() - stepsDoneAt > 20_000) {
          throw new Error(`every step ran, but what the tour started was still running 20 s after its last step:\n${script.output()}`);
        }
        if (Date.now() > deadline) throw new Error(`the tour did not finish in time:\n${script.output()}`);
        await delay(100);
      }
      const out = script.output();
      expect(script.exitCode(), out).to.equal(0);
      expect(out).to.contain('order 1');
      expect(out).to.contain('order 2');
      expect(out).to.match(/token_policies\s+\[default orders-app\]/);
      expect(out).to.match(/policies\s+\[default orders-app\]/);
      // Each removes its file when it stops cleanly, on the signal of the last step.
      expect(existsSync(path.join(TOUR_DIR, 'server.pid')), 'the server removes its pid_file').to.equal(false);
      expect(existsSync(path.join(TOUR_DIR, 'provider.env')), 'the stand-in removes its file').to.equal(false);
    } finally {
      if (script.exitCode() !== 0) await script.stopAll();
      await rm(TOUR_DIR, { recursive: true, force: true });
      await home.remove();
    }
  });
});
