/**
 * The audit stage's blocking rule and its one way out: with a socket device whose collector is
 * gone, every request is refused (503), except the DELETE that disables an API-created device,
 * by a token with sudo on that path; the server log names the device and the caller's accessor.
 */
import { expect } from 'chai';
import path from 'node:path';
import { capturingLogger } from '../audit/helpers.js';
import { streamCollector, type Collector } from '../audit/listeners.js';
import { createToken, TestClient } from '../../helpers/http.js';
import { API_AUDIT, initAndUnseal, startTestServer, tempDir } from '../../helpers/server.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

describe('audit stage', function () {
  this.timeout(30_000);
  let dir: { path: string; remove: () => Promise<void> };
  let collector: Collector;
  let log: ReturnType<typeof capturingLogger>;
  let server: Server | undefined;
  let root: TestClient;
  let keys: { unseal: string; root: string };

  /** Starts (or restarts) a server on LevelDB that may reach the collector, unsealed, `root` its root client. */
  async function boot(): Promise<void> {
    await server?.close();
    server = await startTestServer({
      leveldbPath: path.join(dir.path, 'data'),
      audit: { ...API_AUDIT, apiAuditSocketAllowlist: [collector.address] },
      logger: log.logger,
      plugins: [],
    });
    if (keys) {
      server.client.token = keys.root;
      expect((await server.client.put('sys/unseal', { key: keys.unseal })).status).to.equal(200);
    } else {
      const init = await initAndUnseal(server, 1, 1);
      keys = { unseal: init.keys[0]!, root: init.rootToken };
    }
    root = server.client;
  }

  beforeEach(async () => {
    dir = await tempDir();
    log = capturingLogger();
    collector = await streamCollector({ tcp: true });
    keys = undefined!;
    await boot();
    const policy = 'path "sys/audit/*" { capabilities = ["delete", "sudo"] }\npath "sys/mounts/*" { capabilities = ["delete"] }';
    expect((await root.put('sys/policy/auditor', { policy })).status).to.equal(204);
    expect((await root.put('sys/policy/no-sudo', { policy: 'path "sys/audit/*" { capabilities = ["delete"] }' })).status).to.equal(204);
    expect((await root.post('sys/mounts/kv', { type: 'kv' })).status).to.equal(204);
    const enabled = await root.post('sys/audit/net', { type: 'socket', options: { address: collector.address, write_timeout: '200ms' } });
    expect(enabled.status, enabled.text).to.equal(204);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await collector.close();
    await dir.remove();
  });

  /** The collector goes away for good: from now on no device can record anything. */
  async function loseCollector(): Promise<void> {
    await collector.close();
    const refused = await root.get('sys/mounts');
    expect(refused.status).to.equal(503);
    expect(refused.body.errors).to.deep.equal(['no audit device could record the request']);
  }

  it('lets DELETE sys/audit/:path by a token with sudo there through when no device can record it; the next request is served again', async () => {
    const auditor = await createToken(root, { policies: ['auditor'] });
    const accessor = (await root.post('auth/token/lookup', { token: auditor })).body.data.accessor as string;
    await loseCollector();

    const disabled = await new TestClient(server!.address, auditor).delete('sys/audit/net');
    expect(disabled.status, disabled.text).to.equal(204);
    const warning = log.lines.find((line) => line.msg === 'no audit device could record the request; disabling an audit device anyway');
    expect(warning).to.include({ level: 40, device: 'net', accessor });
    expect(log.text()).to.not.contain(auditor);

    expect((await root.get('sys/mounts')).status).to.equal(200);
    expect((await root.get('sys/audit')).body.data).to.deep.equal({});
  });

  it('keeps everything else refused: other operations and paths, a token without sudo, no token at all', async () => {
    const noSudo = new TestClient(server!.address, await createToken(root, { policies: ['no-sudo'] }));
    const auditor = new TestClient(server!.address, await createToken(root, { policies: ['auditor'] }));
    await loseCollector();

    const attempts = [
      await root.get('sys/audit'),
      await root.post('sys/audit/other', { type: 'file', options: { file_path: 'discard' } }),
      await auditor.delete('sys/mounts/kv'),
      await root.post('sys/audit-hash/net', { input: 'x' }),
      await noSudo.delete('sys/audit/net'),
      await new TestClient(server!.address).delete('sys/audit/net'),
    ];
    expect(attempts.map((res) => res.status)).to.deep.equal([503, 503, 503, 503, 503, 503]);
    expect(server!.host.audit.list().map((device) => device.path)).to.deep.equal(['net/']);
    expect(server!.host.mounts!.entries('secret').map((entry) => entry.path)).to.include('kv/');
  });

  it('still lets that DELETE through after a restart, when the device could not even be opened', async () => {
    await loseCollector();
    await boot();
    expect((await root.get('sys/mounts')).status).to.equal(503);
    expect((await root.delete('sys/audit/net')).status).to.equal(204);
    expect((await root.get('sys/mounts')).status).to.equal(200);
  });
});
