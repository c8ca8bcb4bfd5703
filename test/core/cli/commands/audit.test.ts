/** `keywarden audit enable|disable|list` as a user runs them: a subprocess against a real server. */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer, tempDir } from '../../../helpers/server.js';
import type { TestClient } from '../../../helpers/http.js';
import type { RunningServer } from '../../../../core/server.js';
import { runCli, type CliRun } from '../../../helpers/cli.js';
import { streamCollector, type Collector } from '../../audit/listeners.js';

describe('keywarden audit', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let home: { path: string; remove: () => Promise<void> };
  let collector: Collector;
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[]): Promise<CliRun> => runCli(args, env);

  before(async () => {
    collector = await streamCollector({ tcp: true });
    server = await startUnsealedServer({ audit: { ...API_AUDIT, apiAuditSocketAllowlist: [collector.address] } });
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: server.address, KEYWARDEN_TOKEN: server.rootToken };
  });
  after(async () => {
    await server.close();
    await collector.close();
    await home.remove();
  });

  it('list says that nothing is enabled and exits 2; -format=json prints {}', async () => {
    const none = await cli(['audit', 'list']);
    expect(none.code).to.equal(2);
    expect(none.stdout).to.equal('No audit devices are enabled.\n');
    const json = await cli(['audit', 'list', '-format=json']);
    expect(json.code, json.stderr).to.equal(0);
    expect(JSON.parse(json.stdout)).to.deep.equal({});
  });

  it('enable takes the type, -path, -description and the options as key=value', async () => {
    const file = path.join(home.path, 'audit.log');
    const enabled = await cli(['audit', 'enable', 'file', `file_path=${file}`]);
    expect(enabled.code, enabled.stderr).to.equal(0);
    expect(enabled.stdout).to.equal('Success! Enabled the file audit device at: file/\n');

    const socket = await cli(['audit', 'enable', '-path=net/collector', '-description=the collector', 'socket', `address=${collector.address}`, 'socket_type=tcp']);
    expect(socket.code, socket.stderr).to.equal(0);
    expect(socket.stdout).to.equal('Success! Enabled the socket audit device at: net/collector/\n');
    // Auditing is on: the CLI's own requests are in the file and at the collector.
    expect((await server.client.get('sys/audit')).status).to.equal(200);
    await collector.waitFor((lines) => lines.some((l) => l.includes('"path":"sys/audit"')));
    expect(await readFile(file, 'utf8')).to.contain('"path":"sys/audit/net/collector/"');
  });

  it('list prints Path, Type and Description; -detailed adds Replication and the options', async () => {
    const list = await cli(['audit', 'list']);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout.split('\n')).to.deep.equal([
      'Path              Type      Description',
      '----              ----      -----------',
      'file/             file      n/a',
      'net/collector/    socket    the collector',
      '',
    ]);
    const detailed = await cli(['audit', 'list', '-detailed']);
    expect(detailed.code, detailed.stderr).to.equal(0);
    const rows = detailed.stdout.split('\n');
    expect(rows[0]).to.match(/^Path\s+Type\s+Description\s+Replication\s+Options$/);
    expect(rows[2]).to.match(new RegExp(`^file/\\s+file\\s+n/a\\s+replicated\\s+file_path=${home.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/audit\\.log$`));
    expect(rows[3]).to.match(new RegExp(`^net/collector/\\s+socket\\s+the collector\\s+replicated\\s+address=${collector.address} socket_type=tcp$`));
  });

  it('enable reports the server\'s refusal and exits 2; a bad key=value exits 1', async () => {
    const refused = await cli(['audit', 'enable', 'socket', 'address=nowhere']);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(/^Error enabling audit device: .*option "address": "nowhere" is not host:port/s);
    const bad = await cli(['audit', 'enable', 'file', 'file_path']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^Failed to parse K=V data: expected key=value, got "file_path"/);
  });

  it('against a server that keeps devices in its configuration: lists them, and prints the refusal of enable and of disabling a declared device (exit 2)', async () => {
    const managed = await startUnsealedServer({
      audit: { devices: [{ path: 'declared/', type: 'file', description: 'from the file', local: false, options: { file_path: 'discard' }, declaredAt: 'server.hcl:1' }] },
    });
    try {
      const run = (args: string[]) => runCli(args, { ...env, KEYWARDEN_ADDR: managed.address, KEYWARDEN_TOKEN: managed.rootToken });
      const enabled = await run(['audit', 'enable', 'file', 'file_path=discard']);
      expect(enabled.code).to.equal(2);
      expect(enabled.stderr).to.contain(
        'Error enabling audit device: Error making API request.\n\nURL: PUT ' +
          `${managed.address}/v1/sys/audit/file/\nCode: 400. Errors:\n\n* cannot enable audit device via API; use declarative, config-based audit device management instead`,
      );
      const disabled = await run(['audit', 'disable', 'declared']);
      expect(disabled.code).to.equal(2);
      expect(disabled.stderr).to.contain('* cannot disable configuration-managed audit device');
      const list = await run(['audit', 'list']);
      expect(list.stdout.split('\n')[2]).to.match(/^declared\/\s+file\s+from the file$/);
    } finally {
      await managed.close();
    }
  });

  it('disable removes a device, and says so for a path with none', async () => {
    const disabled = await cli(['audit', 'disable', 'net/collector']);
    expect(disabled.code, disabled.stderr).to.equal(0);
    expect(disabled.stdout).to.equal('Success! Disabled audit device (if it was enabled) at: net/collector/\n');
    expect((await cli(['audit', 'disable', 'never-there/'])).code).to.equal(0);
    expect(Object.keys(JSON.parse((await cli(['audit', 'list', '-format=json'])).stdout))).to.deep.equal(['file/']);
  });
});
