/** `keywarden operator rotate` and `operator key-status`, run as a user runs them, against a real server. */
import { expect } from 'chai';
import { runCli } from '../../../helpers/cli.js';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import type { TestClient } from '../../../helpers/http.js';
import type { RunningServer } from '../../../../core/server.js';

describe('keywarden operator rotate and key-status', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let home: { path: string; remove: () => Promise<void> };
  const cli = (args: string[], token = server.rootToken) =>
    runCli(args, { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: server.address, VAULT_TOKEN: token });

  before(async () => {
    server = await startUnsealedServer();
    home = await tempDir();
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('key-status prints the term, install time and encryption count in vault\'s columns', async () => {
    const run = await cli(['operator', 'key-status']);
    expect(run.code, run.stderr).to.equal(0);
    const status = (await server.client.get('sys/key-status')).body.data;
    expect(run.stdout).to.match(/^Key Term            1\nInstall Time        \d\d [A-Z][a-z]{2} \d\d \d\d:\d\d UTC\nEncryption Count    \d+\n$/);
    const when = new Date(status.install_time);
    expect(run.stdout).to.contain(`${String(when.getUTCHours()).padStart(2, '0')}:${String(when.getUTCMinutes()).padStart(2, '0')} UTC`);
  });

  it('key-status -format=json prints sys/key-status\'s fields', async () => {
    const run = await cli(['operator', 'key-status', '-format=json']);
    expect(run.code, run.stderr).to.equal(0);
    const printed = JSON.parse(run.stdout);
    const status = (await server.client.get('sys/key-status')).body.data;
    expect(printed).to.deep.equal({ term: status.term, install_time: status.install_time, encryptions: printed.encryptions });
    expect(printed.encryptions).to.be.a('number');
  });

  it('rotate adds a term and prints the new status; -format=json prints the status only', async () => {
    const run = await cli(['operator', 'rotate']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^Success! Rotated key\n\nKey Term            2\nInstall Time        .+ UTC\nEncryption Count    0\n$/);
    const json = await cli(['operator', 'rotate', '-format=json']);
    expect(json.code, json.stderr).to.equal(0);
    expect(JSON.parse(json.stdout)).to.include({ term: 3, encryptions: 0 });
    expect((await server.client.get('sys/key-status')).body.data.term).to.equal(3);
  });

  it('rotate without sudo fails with the server\'s 403 (exit 2); an argument is a usage error (exit 1)', async () => {
    const created = await server.client.post('auth/token/create', { policies: ['default'] });
    const run = await cli(['operator', 'rotate'], created.body.auth.client_token as string);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/^Error rotating key: /);
    expect(run.stderr).to.contain('permission denied');
    expect((await cli(['operator', 'rotate', 'now'])).code).to.equal(1);
    expect((await cli(['operator', 'key-status', 'now'])).code).to.equal(1);
    expect((await server.client.get('sys/key-status')).body.data.term).to.equal(3);
  });
});
