/**
 * The example external plugin (examples/memo-plugin) as an operator handles it: packed with npm,
 * unpacked into the plugin directory, registered with its checksum through the CLI, mounted and
 * used; then a new release is packed, registered, tuned in and reloaded; then its process is
 * killed and the host keeps serving while the plugin comes back.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUnsealedServer, tempDir } from '../helpers/server.js';
import { runProcess } from '../helpers/process.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { IsolatedBackend } from '../../core/plugins/isolation/isolated-backend.js';

const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples/memo-plugin');

type Server = Awaited<ReturnType<typeof startUnsealedServer>>;

/** `npm pack`s a package directory and unpacks the tarball into `into`; returns the module's path relative to the plugin directory. */
async function packInto(packageDir: string, pluginDir: string, into: string, scratch: string): Promise<string> {
  const pack = await runProcess('npm', ['pack', '--json', '--pack-destination', scratch], { env: { PATH: process.env.PATH, HOME: scratch }, cwd: packageDir });
  expect(pack.code, pack.stderr).to.equal(0);
  const tarball = path.join(scratch, (JSON.parse(pack.stdout) as { filename: string }[])[0]!.filename);
  await mkdir(path.join(pluginDir, into));
  const untar = await runProcess('tar', ['-xzf', tarball, '-C', path.join(pluginDir, into)], { env: { PATH: process.env.PATH } });
  expect(untar.code, untar.stderr).to.equal(0);
  return `${into}/package/index.js`;
}

describe('the example plugin (examples/memo-plugin)', function () {
  this.timeout(120_000);
  let pluginDir: { path: string; remove: () => Promise<void> };
  let scratch: { path: string; remove: () => Promise<void> };
  let server: Server;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]): Promise<CliRun> => runCli(args, env);
  const sha256Of = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex');

  before(async () => {
    pluginDir = await tempDir('keywarden-plugins-');
    scratch = await tempDir('keywarden-pack-');
    server = await startUnsealedServer({ pluginDirectory: pluginDir.path });
    env = { PATH: process.env.PATH, HOME: scratch.path, KEYWARDEN_ADDR: server.address, VAULT_TOKEN: server.rootToken };
  });

  after(async () => {
    await server?.close();
    await pluginDir?.remove();
    await scratch?.remove();
  });

  it('packs, registers with its checksum, mounts and serves', async () => {
    const command = await packInto(EXAMPLE, pluginDir.path, 'memo-1.0.0', scratch.path);
    const sha256 = await sha256Of(path.join(pluginDir.path, command));
    const register = await cli('plugin', 'register', `-sha256=${sha256}`, `-command=${command}`, '-version=v1.0.0', 'secret', 'memo');
    expect(register.stdout, register.stderr).to.equal('Success! Registered plugin: memo\n');
    const list = await cli('plugin', 'list', 'secret');
    expect(list.stdout).to.match(/^Name\s+Type\s+Version\n/).and.match(/\nmemo\s+secret\s+v1\.0\.0\n/).and.match(/\ntransit\s+secret\s+v0\.1\.0\+builtin\n/);
    const info = await cli('plugin', 'info', '-format=json', '-version=v1.0.0', 'secret', 'memo');
    expect(JSON.parse(info.stdout).data).to.include({ name: 'memo', version: 'v1.0.0', builtin: false, sha256, command });

    const enable = await cli('secrets', 'enable', '-plugin-version=v1.0.0', 'memo');
    expect(enable.stdout, enable.stderr).to.equal('Success! Enabled the memo secrets engine at: memo/\n');
    expect((await cli('write', 'memo/memos/standup', 'text=ship the catalog', 'ttl=8h')).code).to.equal(0);
    expect((await cli('read', '-field=text', 'memo/memos/standup')).stdout).to.equal('ship the catalog');
    expect((await cli('read', '-field=version', 'memo/info')).stdout).to.equal('1.0.0');
    const mount = (await server.client.get('sys/mounts/memo')).body.data;
    expect(mount).to.include({ running_plugin_version: 'v1.0.0', running_sha256: sha256 });
  });

  it('upgrades to a new release: register, tune, reload; the data stays', async () => {
    const next = path.join(scratch.path, 'memo-plugin-next');
    await cp(EXAMPLE, next, { recursive: true });
    for (const file of ['package.json', 'index.js']) {
      const text = await readFile(path.join(next, file), 'utf8');
      await writeFile(path.join(next, file), text.replace(/"version": "1\.0\.0"/, '"version": "1.1.0"').replace("const VERSION = '1.0.0';", "const VERSION = '1.1.0';"));
    }
    const command = await packInto(next, pluginDir.path, 'memo-1.1.0', scratch.path);
    const sha256 = await sha256Of(path.join(pluginDir.path, command));
    expect((await cli('plugin', 'register', `-sha256=${sha256}`, `-command=${command}`, '-version=v1.1.0', 'secret', 'memo')).code).to.equal(0);
    expect((await cli('write', 'sys/mounts/memo/tune', 'plugin_version=v1.1.0')).code).to.equal(0);
    const reload = await cli('plugin', 'reload', '-plugin=memo');
    expect(reload.stdout, reload.stderr).to.equal('Success! Reloaded plugin: memo\n');
    expect((await cli('read', '-field=version', 'memo/info')).stdout).to.equal('1.1.0');
    expect((await cli('read', '-field=text', 'memo/memos/standup')).stdout).to.equal('ship the catalog');
    // The old release is no longer in use, so it can go.
    const deregister = await cli('plugin', 'deregister', '-version=v1.0.0', 'secret', 'memo');
    expect(deregister.stdout).to.equal('Success! Deregistered plugin (if it was registered): memo\n');
    expect((await cli('plugin', 'info', '-version=v1.0.0', 'secret', 'memo')).code).to.equal(2);
  });

  it('survives its process being killed: the host serves on, and the plugin comes back', async () => {
    const backend = server.host.mounts!.live('secret', 'memo/').backend as IsolatedBackend;
    backend.terminateProcess();
    expect((await server.client.get('sys/health')).status).to.equal(200);
    expect((await server.client.get('sys/mounts')).status).to.equal(200);
    const read = await cli('read', '-field=text', 'memo/memos/standup');
    expect(read.stdout, read.stderr).to.equal('ship the catalog');
  });

  it('refuses bad CLI use with exit code 1', async () => {
    expect((await cli('plugin', 'register', 'secret', 'memo')).code).to.equal(1);
    expect((await cli('plugin', 'reload')).code).to.equal(1);
    expect((await cli('plugin', 'list', 'nonsense')).code).to.equal(1);
  });
});
