/**
 * The README cannot go stale: its quick-start run line and its ten-minute tour are executed here as
 * written, from the repository root as the README says. The environment holds only what the README
 * lets a reader choose (the ports) and a home directory of the test's own, so npm's cache and the
 * CLI's files stay out of the real one.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/server.js';
import { request } from './helpers/http.js';
import { freePort } from './helpers/net.js';
import { ProcessGroup } from './helpers/process-group.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOUR_DIR = path.join(ROOT, 'tour');

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

  it('the ten-minute tour runs as written and its last step stops everything it started', async function () {
    // The first `npx keywarden` of a fresh npm cache links the clone into it and builds it again.
    this.timeout(300_000);
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const blocks = shellBlocks(readme, '## A ten-minute tour', '## Development server');
    expect(blocks.length).to.be.greaterThan(5);
    expect(existsSync(TOUR_DIR), `${TOUR_DIR} exists, left by running the tour by hand: stop what it started and remove it`).to.equal(false);

    const home = await tempDir('keywarden-tour-home-');
    const tour = new ProcessGroup('bash', ['-c', ['set -euo pipefail', ...blocks].join('\n')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: home.path,
        TOUR_PORT: String(await freePort()),
        // A fresh npm cache would otherwise ask the registry whether npm itself is up to date.
        npm_config_update_notifier: 'false',
      },
    });
    try {
      if (!(await tour.waitExit(280_000))) throw new Error(`the tour did not finish in time:\n${tour.output()}`);
      const out = tour.output();
      expect(tour.exitCode(), out).to.equal(0);
      expect(out).to.contain('order 1');
      expect(out).to.contain('order 2');
      expect(out).to.match(/token_policies\s+\["default" "orders-app"\]/);
      expect(out).to.match(/\npolicies\s+\["default" "orders-app"\]/);
      // The last step only sends signals: give what it stopped a moment to shut down.
      expect(await tour.waitEmpty(20_000), 'still running after the last step').to.deep.equal([]);
      // Each removes its file when it stops cleanly.
      expect(existsSync(path.join(TOUR_DIR, 'server.pid')), 'the server removes its pid_file').to.equal(false);
      expect(existsSync(path.join(TOUR_DIR, 'provider.env')), 'the stand-in removes its file').to.equal(false);
    } finally {
      await tour.stop();
      await rm(TOUR_DIR, { recursive: true, force: true });
      await home.remove();
    }
  });
});
