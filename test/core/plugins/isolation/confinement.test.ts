/**
 * What confines a plugin process, decided on the host: the Node.js it needs, the flags it starts
 * with (the permission model with reads of the server's code only), the environment a catalog
 * entry gives it, and the memory limits the server starts with.
 */
import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { processFlags, pluginEnvironment, unsupportedRuntime } from '../../../../core/plugins/isolation/confinement.js';
import { startServer } from '../../../../core/server.js';
import { ConfigError } from '../../../../core/config/config.js';
import { BadRequestError } from '../../../../core/errors.js';
import { testConfig } from '../../../helpers/server.js';

const PACKAGE_ROOT = fileURLToPath(new URL('../../../../../', import.meta.url));

describe('the confinement of a plugin process', () => {
  it('needs a Node.js with the permission model and in-thread module hooks, and names the one it refuses', () => {
    const why = (version: string) =>
      `external plugins need Node.js 22.15 or later, and this is ${version}: they run confined by its permission model (--permission) with in-thread module hooks (module.registerHooks)`;
    expect(unsupportedRuntime({ version: 'v20.19.0', registerHooks: false, permission: false })).to.equal(why('v20.19.0'));
    expect(unsupportedRuntime({ version: 'v22.13.0', registerHooks: false, permission: true })).to.equal(why('v22.13.0'));
    expect(unsupportedRuntime({ version: 'v24.0.0', registerHooks: true, permission: true })).to.equal(undefined);
  });

  it('starts the process under the permission model, with its heap limit, granting reads of the server\'s code alone and nothing else', () => {
    const flags = processFlags(96);
    expect(flags).to.include.members(['--permission', '--max-old-space-size=96']);
    expect(flags.filter((flag) => /^--(allow-(fs-write|child-process|worker|addons|wasi|inspector)|experimental-permission)/.test(flag))).to.deep.equal([]);
    const readable = flags.filter((flag) => flag.startsWith('--allow-fs-read=')).map((flag) => flag.slice('--allow-fs-read='.length));
    expect(readable).to.include.members([path.join(PACKAGE_ROOT, 'dist'), path.join(PACKAGE_ROOT, 'build', 'wasm', 'keywarden.wasm')]);
    for (const granted of readable) {
      expect(granted, granted).to.satisfy(
        (p: string) => p.startsWith(path.join(PACKAGE_ROOT, 'dist')) || p === path.join(PACKAGE_ROOT, 'package.json') || p.endsWith(`${path.sep}node_modules`) || p.endsWith('keywarden.wasm'),
      );
    }
  });

  it('gives the process exactly the catalog entry\'s environment, values kept whole', () => {
    expect(pluginEnvironment(['ONLY=this', 'URL=https://x/?a=b', 'EMPTY='])).to.deep.equal({ ONLY: 'this', URL: 'https://x/?a=b', EMPTY: '' });
    expect(() => pluginEnvironment(['node_options=--x'])).to.throw(BadRequestError, 'env entry "node_options" is refused');
  });

  it('refuses to start a server whose plugin resident memory limit leaves no room above the heap limit', async () => {
    let error: unknown;
    try {
      const server = await startServer({ config: { ...testConfig(), pluginMemoryLimitMb: 256 } });
      await server.close();
    } catch (err) {
      error = err;
    }
    expect(error).to.equal(undefined);
    try {
      const server = await startServer({ config: { ...testConfig(), pluginMemoryLimitMb: 256, pluginResidentMemoryLimitMb: 200 } });
      await server.close();
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as Error).message).to.equal('plugin_resident_memory_limit_mb (200 MB) must be greater than plugin_memory_limit_mb (256 MB): the resident memory holds the heap');
  });
});
