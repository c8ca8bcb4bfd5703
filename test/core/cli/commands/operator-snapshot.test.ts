/**
 * `operator raft snapshot save|restore` and `operator snapshot save|restore` as a user runs them
 * (a subprocess) against a real LevelDB server; and the progress bar they draw on a terminal.
 */
import { expect } from 'chai';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Progress } from '../../../../core/cli/progress.js';
import type { Io } from '../../../../core/cli/output.js';
import type { RunningServer } from '../../../../core/server.js';
import { runCli, type CliRun } from '../../../helpers/cli.js';
import type { TestClient } from '../../../helpers/http.js';
import { initAndUnseal, startTestServer, tempDir } from '../../../helpers/server.js';

describe('keywarden operator snapshot commands', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let dir: { path: string; remove: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[]): Promise<CliRun> => runCli(args, env);
  const note = async (text?: string): Promise<string | undefined> => {
    if (text !== undefined) expect((await server.client.post('notes/notes/n', { text })).status).to.be.oneOf([200, 204]);
    return (await server.client.get('notes/notes/n')).body?.data?.text as string | undefined;
  };

  before(async () => {
    dir = await tempDir();
    server = await startTestServer({ leveldbPath: path.join(dir.path, 'data') });
    const { rootToken } = await initAndUnseal(server, 3, 2);
    expect((await server.client.post('sys/mounts/notes', { type: 'notes' })).status).to.equal(204);
    env = { PATH: process.env.PATH, HOME: dir.path, KEYWARDEN_ADDR: server.address, KEYWARDEN_TOKEN: rootToken };
  });
  after(async () => {
    await server.close();
    await dir.remove();
  });

  for (const group of [['operator', 'raft', 'snapshot'], ['operator', 'snapshot']]) {
    it(`${group.join(' ')} save writes a private file and restore brings its state back, printing nothing`, async () => {
      const file = path.join(dir.path, `${group.length}.snap`);
      await note('saved');
      const save = await cli([...group, 'save', file]);
      expect(save.code, save.stderr).to.equal(0);
      expect(save.stdout).to.equal('');
      // Standard error is not a terminal here: no progress bar.
      expect(save.stderr).to.equal('');
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      expect((await readFile(file)).subarray(0, 8).toString('latin1')).to.equal('KWSNAP\r\n');
      expect((await readdir(dir.path)).filter((name) => name.endsWith('.partial'))).to.deep.equal([]);

      await note('changed');
      const restore = await cli([...group, 'restore', file]);
      expect(restore.code, restore.stderr).to.equal(0);
      expect(restore.stdout + restore.stderr).to.equal('');
      expect(await note()).to.equal('saved');
    });
  }

  it('exits 2 with the server\'s reason for a corrupt snapshot, and 1 for a missing file or argument', async () => {
    const file = path.join(dir.path, 'corrupt.snap');
    expect((await cli(['operator', 'snapshot', 'save', file])).code).to.equal(0);
    const bytes = await readFile(file);
    bytes[bytes.length >> 1]! ^= 0xff;
    await writeFile(file, bytes);
    await note('kept');
    const corrupt = await cli(['operator', 'raft', 'snapshot', 'restore', file]);
    expect(corrupt.code).to.equal(2);
    expect(corrupt.stderr).to.match(/^Error installing the snapshot: Error making API request\./);
    expect(corrupt.stderr).to.contain('snapshot is corrupt');
    expect(await note()).to.equal('kept');

    const missing = await cli(['operator', 'snapshot', 'restore', path.join(dir.path, 'nothing.snap')]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/^Error opening snapshot file: .*ENOENT/);
    expect((await cli(['operator', 'snapshot', 'restore'])).code).to.equal(1);
    const badDir = await cli(['operator', 'snapshot', 'save', path.join(dir.path, 'no', 'such', 'dir.snap')]);
    expect(badDir.code).to.equal(1);
    expect(badDir.stderr).to.match(/^Error opening output file: /);
  });

  it('exits 2 when the token may not take snapshots, leaving no file behind', async () => {
    const file = path.join(dir.path, 'denied.snap');
    const denied = await runCli(['operator', 'raft', 'snapshot', 'save', file], { ...env, KEYWARDEN_TOKEN: 'not-a-token' });
    expect(denied.code).to.equal(2);
    expect(denied.stderr).to.match(/^Error taking the snapshot: Error making API request\.[\s\S]*Code: 403/);
    expect((await readdir(dir.path)).filter((name) => name.startsWith('.denied.snap') || name === 'denied.snap')).to.deep.equal([]);
  });
});

describe('the CLI progress bar', () => {
  const io = (terminal: boolean): Io & { written: string[] } => {
    const written: string[] = [];
    return { written, out: () => undefined, err: (text) => written.push(text), stdin: async () => '', secret: async () => undefined, errIsTerminal: terminal };
  };

  it('draws a bar with the share done on a terminal, and clears it when finished', () => {
    const terminal = io(true);
    const progress = new Progress(terminal, 'Restoring snapshot', 2048);
    progress.add(1024);
    progress.finish();
    expect(terminal.written[0]).to.match(/^\r\u001b\[2KRestoring snapshot \[={15} {15}\] 50% 1\.0 KiB\/2\.0 KiB /);
    expect(terminal.written.at(-1)).to.equal('\r\u001b[2K');
  });

  it('writes nothing when standard error is not a terminal', () => {
    const pipe = io(false);
    const progress = new Progress(pipe, 'Saving snapshot');
    progress.add(5000);
    progress.finish();
    expect(pipe.written).to.deep.equal([]);
  });
});
