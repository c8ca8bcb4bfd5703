/**
 * Audit devices declared in the configuration file, through real servers on LevelDB: enabled at
 * unseal, kept across restarts, never modified in place, disabled when their stanza goes (on
 * reload, which is what SIGHUP runs, or at a restart), even when the device itself no longer works.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ServerConfig } from '../../../core/config/config.js';
import { DEFAULT_AUDIT_CONFIG, type AuditConfig, type DeclaredAuditDevice } from '../../../core/audit/rules.js';
import { initAndUnseal, startTestServer, tempDir } from '../../helpers/server.js';
import type { TestResponse } from '../../helpers/http.js';
import { capturingLogger } from './helpers.js';
import { streamCollector, type Collector } from './listeners.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

describe('audit devices declared in the configuration file', function () {
  this.timeout(30_000);
  let dir: { path: string; remove: () => Promise<void> };
  let server: Server | undefined;
  let unsealKey: string;
  let rootToken: string;
  let log: ReturnType<typeof capturingLogger>;
  beforeEach(async () => {
    dir = await tempDir();
    log = capturingLogger();
    unsealKey = '';
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await dir.remove();
  });

  const fileDevice = (overrides: Partial<DeclaredAuditDevice> = {}): DeclaredAuditDevice => ({
    path: 'to-file/',
    type: 'file',
    description: 'the main log',
    local: false,
    options: { file_path: path.join(dir.path, 'audit.log') },
    declaredAt: 'server.hcl:7',
    ...overrides,
  });

  /**
   * (Re)starts the server on the test's LevelDB directory with these audit settings and unseals it,
   * initializing it the first time; answers the unseal.
   */
  async function boot(audit: Partial<AuditConfig>): Promise<TestResponse | undefined> {
    await server?.close();
    server = await startTestServer({ leveldbPath: path.join(dir.path, 'data'), audit, logger: log.logger });
    if (unsealKey) {
      server.client.token = rootToken;
      return server.client.put('sys/unseal', { key: unsealKey });
    }
    const init = await initAndUnseal(server, 1, 1);
    [unsealKey, rootToken] = [init.keys[0]!, init.rootToken];
    return undefined;
  }

  /** What SIGHUP runs once it has read the files again: `reload` with the new configuration. */
  function reload(audit: Partial<AuditConfig>): Promise<void> {
    const next: ServerConfig = { ...server!.config, logLevel: 'debug', audit: { ...DEFAULT_AUDIT_CONFIG, ...audit } };
    return server!.reload(next);
  }

  const listed = async () => (await server!.client.get('sys/audit')).body.data as Record<string, Record<string, unknown>>;
  const errors = () => log.lines.filter((line) => (line.level as number) >= 50).map((line) => String(line.err ?? line.msg));

  it('are enabled at unseal and listed as Vault lists them; the API may neither disable them nor add its own', async () => {
    await boot({ devices: [fileDevice()] });
    expect(await listed()).to.deep.equal({
      'to-file/': { type: 'file', description: 'the main log', options: { file_path: path.join(dir.path, 'audit.log') }, local: false, path: 'to-file/' },
    });
    await server!.client.get('sys/mounts');
    expect(await readFile(path.join(dir.path, 'audit.log'), 'utf8')).to.contain('"path":"sys/mounts"');

    const disabled = await server!.client.delete('sys/audit/to-file');
    expect(disabled.status).to.equal(400);
    expect(disabled.body.errors).to.deep.equal(['cannot disable configuration-managed audit device']);
    expect((await server!.client.post('sys/audit/more', { type: 'file', options: { file_path: 'discard' } })).status).to.equal(400);
    expect(Object.keys(await listed())).to.deep.equal(['to-file/']);
  });

  it('are kept across a restart with their salt; a changed stanza fails the unseal loudly, naming the path and what differs, and changes nothing', async () => {
    await boot({ devices: [fileDevice()] });
    const hash = async () => (await server!.client.post('sys/audit-hash/to-file', { input: 'the same secret' })).body.data.hash as string;
    const first = await hash();

    await boot({ devices: [fileDevice()] });
    expect(await hash(), 'the same device, not a new one with a new salt').to.equal(first);

    const refused = (await boot({ devices: [fileDevice({ description: 'renamed', options: { file_path: path.join(dir.path, 'audit.log'), mode: '0640' } })] }))!;
    expect(refused.status).to.equal(503);
    expect(refused.body.errors[0]).to.match(/^modifications to audit devices are not allowed: "to-file\/" declared at server\.hcl:7 differs from the enabled device in description \("the main log" enabled, "renamed" declared\), option "mode" \(unset enabled, "0640" declared\)/);
    expect((await server!.client.get('sys/seal-status')).body.sealed, 'it stays sealed').to.equal(true);
    expect(errors().join('\n')).to.contain('modifications to audit devices are not allowed: "to-file/"');

    await boot({ devices: [fileDevice()] });
    expect(await hash()).to.equal(first);
  });

  it('on reload, a new stanza is enabled, a changed one is refused and logged with nothing changed, and a removed one is disabled', async () => {
    await boot({ devices: [fileDevice()] });
    const second = fileDevice({ path: 'second/', description: '', options: { file_path: 'discard' }, declaredAt: 'server.hcl:12' });

    await reload({ devices: [fileDevice(), second] });
    expect(Object.keys(await listed())).to.deep.equal(['second/', 'to-file/']);

    await reload({ devices: [fileDevice({ type: 'socket', options: { address: '127.0.0.1:9' } })] });
    expect(errors().join('\n')).to.match(/modifications to audit devices are not allowed: "to-file\/" .* type \("file" enabled, "socket" declared\)/);
    expect(Object.keys(await listed()), 'second/ stays too: nothing was applied').to.deep.equal(['second/', 'to-file/']);

    await reload({ devices: [second] });
    expect(Object.keys(await listed())).to.deep.equal(['second/']);
    expect(log.lines.some((line) => line.device === 'to-file/' && line.msg === 'audit device no longer in the configuration: disabled')).to.equal(true);
  });

  it('a stanza at the path of an API-created device is refused naming both, and the API-created device stays the API\'s', async () => {
    await boot({ unsafeAllowApiAuditCreation: true });
    expect((await server!.client.post('sys/audit/shared', { type: 'file', options: { file_path: 'discard' } })).status).to.equal(204);
    await reload({ unsafeAllowApiAuditCreation: true, devices: [fileDevice({ path: 'shared/' })] });
    expect(errors().join('\n')).to.contain('audit device "shared/" declared at server.hcl:7 collides with the API-created device at "shared/"');
    expect((await listed())['shared/']!.options).to.deep.equal({ file_path: 'discard' });
    expect((await server!.client.delete('sys/audit/shared')).status).to.equal(204);
  });

  it('apply again after a snapshot restore: a declared device the snapshot predates is enabled on the restored table', async () => {
    await boot({});
    const saved = (await server!.client.get('sys/storage/snapshot')).bytes;
    await reload({ devices: [fileDevice()] });
    expect(Object.keys(await listed())).to.deep.equal(['to-file/']);
    const restored = await server!.client.post('sys/storage/snapshot', undefined, { rawBody: saved });
    expect(restored.status, restored.text).to.equal(204);
    expect(Object.keys(await listed())).to.deep.equal(['to-file/']);
    await server!.client.get('sys/mounts');
    expect(await readFile(path.join(dir.path, 'audit.log'), 'utf8')).to.contain('"path":"sys/mounts"');
  });

  describe('a declared socket device whose collector is gone', () => {
    let collector: Collector;
    const socketDevice = (): DeclaredAuditDevice => ({ ...fileDevice(), path: 'net/', type: 'socket', options: { address: collector.address, write_timeout: '200ms' } });

    beforeEach(async () => {
      collector = await streamCollector({ tcp: true });
      await boot({ devices: [socketDevice()] });
      expect((await server!.client.post('sys/mounts/kv', { type: 'kv' })).status).to.equal(204);
      await collector.close();
      expect((await server!.client.get('sys/mounts')).status, 'fail-closed: nothing unaudited').to.equal(503);
    });

    it('is disabled by removing its stanza and reloading, with no request and without the device working: requests are served again', async () => {
      await reload({ devices: [] });
      expect((await server!.client.get('sys/mounts')).status).to.equal(200);
      expect(await listed()).to.deep.equal({});
    });

    it('is disabled by removing its stanza and restarting', async () => {
      await boot({ devices: [socketDevice()] });
      expect((await server!.client.get('sys/mounts')).status, 'still fail-closed after a restart with the stanza').to.equal(503);
      await boot({ devices: [] });
      expect((await server!.client.get('sys/mounts')).status).to.equal(200);
      expect(await listed()).to.deep.equal({});
    });
  });
});
