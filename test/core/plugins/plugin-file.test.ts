/**
 * plugin_directory as the server checks it: at start, the directory and everything in it must
 * belong to the server's user or root and be writable by no group and no other user, or the server
 * refuses to start; a module that becomes writable by others afterwards is refused when it is
 * registered or run. Vault checks the same, when asked to (VAULT_ENABLE_FILE_PERMISSIONS_CHECK).
 */
import { expect } from 'chai';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../../../core/config/config.js';
import * as pluginFile from '../../../core/plugins/plugin-file.js';
import { startTestServer, startUnsealedServer, tempDir } from '../../helpers/server.js';
import { echoSource, installModule } from '../../helpers/external-plugins.js';

describe('plugin_directory ownership and permissions', function () {
  this.timeout(60_000);
  let dir: { path: string; remove: () => Promise<void> };

  beforeEach(async () => {
    dir = await tempDir('keywarden-plugins-');
  });

  afterEach(async () => {
    await dir.remove();
  });

  async function startRefused(pluginDirectory: string): Promise<string> {
    let error: unknown;
    try {
      const server = await startTestServer({ pluginDirectory });
      await server.close();
    } catch (err) {
      error = err;
    }
    expect(error, 'the server started').to.be.instanceOf(ConfigError);
    return (error as Error).message;
  }

  for (const mode of [0o775, 0o757, 0o777]) {
    it(`refuses to start with a plugin directory of mode ${mode.toString(8)}, which another user could write into`, async () => {
      await chmod(dir.path, mode);
      expect(await startRefused(dir.path)).to.equal(
        `plugin_directory: ${dir.path} is writable by ${[mode & 0o020 ? 'its group' : '', mode & 0o002 ? 'other users' : ''].filter(Boolean).join(' and ')} ` +
          `(mode 0${mode.toString(8)}): make it the server's own (chown) and writable by it alone (chmod go-w)`,
      );
    });
  }

  it('refuses to start with a group- or world-writable module or folder anywhere in the plugin directory, naming it', async () => {
    await mkdir(path.join(dir.path, 'memo-1.0.0', 'package'), { recursive: true });
    const module = path.join(dir.path, 'memo-1.0.0', 'package', 'index.js');
    await writeFile(module, echoSource({ name: 'memo' }));
    await chmod(module, 0o666);
    expect(await startRefused(dir.path)).to.include(`plugin_directory: ${module} is writable by its group and other users (mode 0666)`);
    await chmod(module, 0o644);
    await chmod(path.join(dir.path, 'memo-1.0.0'), 0o770);
    expect(await startRefused(dir.path)).to.include(`plugin_directory: ${path.join(dir.path, 'memo-1.0.0')} is writable by its group (mode 0770)`);
  });

  it('refuses to start with a plugin directory that does not exist or is a file', async () => {
    expect(await startRefused(path.join(dir.path, 'missing'))).to.equal(`plugin_directory: ${path.join(dir.path, 'missing')} does not exist or cannot be read`);
    await writeFile(path.join(dir.path, 'file'), '');
    expect(await startRefused(path.join(dir.path, 'file'))).to.equal(`plugin_directory: ${path.join(dir.path, 'file')} is not a directory`);
  });

  it('trusts files of the server\'s user and of root, writable by their owner alone, and nobody else\'s', () => {
    const own = process.getuid!();
    const { untrusted } = pluginFile;
    expect(untrusted({ uid: own, mode: 0o100755 }, 'f')).to.equal(undefined);
    expect(untrusted({ uid: 0, mode: 0o40755 }, 'f')).to.equal(undefined);
    expect(untrusted({ uid: own + 4242, mode: 0o100644 }, 'f')).to.equal(`f belongs to user ${own + 4242}, not to the server's user (${own}) or root`);
    expect(untrusted({ uid: 0, mode: 0o40777 }, 'f')).to.equal('f is writable by its group and other users (mode 0777)');
  });

  it('refuses to register or run a module that became writable by others after the server started', async () => {
    await mkdir(path.join(dir.path, 'echo'));
    const sha256 = await installModule(dir.path, 'echo/1.0.0.mjs', echoSource());
    const server = await startUnsealedServer({ pluginDirectory: dir.path });
    try {
      const { client } = server;
      expect((await client.post('sys/plugins/catalog/secret/echo', { sha256, command: 'echo/1.0.0.mjs' })).status).to.equal(204);
      await chmod(path.join(dir.path, 'echo', '1.0.0.mjs'), 0o646);
      const register = await client.post('sys/plugins/catalog/secret/other', { sha256, command: 'echo/1.0.0.mjs' });
      expect(register.status).to.equal(400);
      expect(register.body.errors[0]).to.equal('command "echo/1.0.0.mjs" is writable by other users (mode 0646): it must be writable by the server\'s user alone');
      const mount = await client.post('sys/mounts/echo', { type: 'echo' });
      expect(mount.status).to.equal(400);
      expect(mount.body.errors[0]).to.include('is writable by other users');
      await chmod(path.join(dir.path, 'echo', '1.0.0.mjs'), 0o644);
      await chmod(path.join(dir.path, 'echo'), 0o775);
      const folder = await client.post('sys/mounts/echo', { type: 'echo' });
      expect(folder.status).to.equal(400);
      expect(folder.body.errors[0]).to.equal('the folder "echo" of the plugin directory is writable by its group (mode 0775): it must be writable by the server\'s user alone');
      await chmod(path.join(dir.path, 'echo'), 0o755);
      expect((await client.post('sys/mounts/echo', { type: 'echo' })).status).to.equal(204);
    } finally {
      await server.close();
    }
  });
});
