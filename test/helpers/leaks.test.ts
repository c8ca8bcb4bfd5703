/** The leak check (leaks.ts) on specs of its own, each run by a mocha of its own. */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess } from './process.js';
import { tempDir } from './server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MOCHA = path.join(ROOT, 'node_modules/mocha/bin/mocha.js');

function mochaOn(spec: string, env: NodeJS.ProcessEnv) {
  return runProcess(process.execPath, [MOCHA, '--no-config', '--no-package', '--require', 'dist/test/helpers/leaks.js', `dist/test/fixtures/leaks/${spec}.js`], { cwd: ROOT, env });
}

/** Running, not merely a zombie its new parent has yet to reap. */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && !/^\d+ \(.*\) Z /.test(stat);
}

describe('the leak check', function () {
  this.timeout(30_000);

  before(function () {
    // The check reads /proc, and stands down where there is none.
    if (!existsSync('/proc/self/environ')) this.skip();
  });

  it('fails a run that leaves a process behind, naming it, where it started and the test, even once its parent has exited; and stops it', async () => {
    const dir = await tempDir('keywarden-leaks-');
    try {
      const pidFile = path.join(dir.path, 'sleep.pid');
      const run = await mochaOn('orphan', { ...process.env, LEAK_PID_FILE: pidFile });
      const pid = Number(await readFile(pidFile, 'utf8'));
      expect(run.code, run.stdout).to.equal(1);
      expect(run.stdout).to.contain('1 passing');
      expect(run.stderr).to.contain('1 process(es) started by the tests were still running at the end (now killed)');
      expect(run.stderr).to.contain(`pid ${pid}: sleep 120`);
      expect(run.stderr).to.match(/started at .*dist\/test\/fixtures\/leaks\/orphan\.js:\d+:\d+/);
      expect(run.stderr).to.contain('during (or after) test "a spec that leaks starts a process it never stops"');
      expect(await running(pid)).to.equal(false);
    } finally {
      await dir.remove();
    }
  });

  it('passes a run whose processes have ended, those stopped in a root after hook included', async () => {
    const run = await mochaOn('tidy', process.env);
    expect(run.code, `${run.stdout}\n${run.stderr}`).to.equal(0);
    expect(run.stderr).not.to.contain('still running');
  });
});
