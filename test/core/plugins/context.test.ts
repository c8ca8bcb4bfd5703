/**
 * The plugin context: one shape wherever a plugin runs — its block of the configuration file, the
 * services of the one registration list, and nothing of the host's own container.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../../core/server.js';
import { TOKENS } from '../../../core/di/tokens.js';
import { createPluginContext } from '../../../core/plugins/context.js';
import { SERVICES, pluginServicesContainer } from '../../../core/plugins/services.js';
import { systemClock } from '../../../core/clock.js';
import { defaultMountConfig, type MountEntry } from '../../../core/mounts/mount-entry.js';
import { MemoryStorage } from '../../../storage/memory.js';
import { tempDir, testConfig } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import { bundleExternal, installModule } from '../../helpers/external-plugins.js';
import { contractPlugin } from '../../fixtures/plugins/contract.js';

const CONTRACT_MODULE = fileURLToPath(new URL('../../fixtures/plugins/contract.js', import.meta.url));

const entry: MountEntry = {
  table: 'secret',
  path: 'p/',
  type: 'contract',
  description: '',
  uuid: 'u',
  accessor: 'contract_u',
  local: false,
  seal_wrap: false,
  external_entropy_access: false,
  options: null,
  config: defaultMountConfig(),
  plugin_version: '',
};

async function unsealed(server: RunningServer): Promise<TestClient> {
  const client = new TestClient(server.address);
  const init = await client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
  await client.put('sys/unseal', { key: init.body.keys[0] });
  client.token = init.body.root_token as string;
  return client;
}

describe('the plugin context', function () {
  this.timeout(60_000);

  it('registers the services offered and no other', () => {
    const services = createPluginContext({
      services: pluginServicesContainer({}),
      mount: entry,
      storage: new MemoryStorage(),
      logger: pino({ level: 'silent' }),
      clock: systemClock,
      system: { defaultLeaseTtl: () => 1, maxLeaseTtl: () => 1 },
      config: {},
    }).context.services;
    expect(services.has(SERVICES.WasmCrypto)).to.equal(false);
    expect(services.has(SERVICES.Metrics)).to.equal(false);
    expect(() => services.get(SERVICES.WasmCrypto)).to.throw();
  });

  it('reaches none of the host\'s own services from a mount\'s container', async () => {
    const server = await startServer({ config: testConfig(), plugins: [], logger: pino({ level: 'silent' }) });
    try {
      expect(server.host.container.isRegistered(TOKENS.Barrier, true)).to.equal(true);
      const { context, dispose } = createPluginContext({
        services: server.host.pluginServices,
        mount: entry,
        storage: new MemoryStorage(),
        logger: pino({ level: 'silent' }),
        clock: systemClock,
        system: { defaultLeaseTtl: () => 1, maxLeaseTtl: () => 1 },
        config: {},
      });
      expect(context.services.has(SERVICES.WasmCrypto)).to.equal(true);
      for (const token of Object.values(TOKENS)) {
        expect(context.services.has(token), token.description).to.equal(false);
        expect(context.services.container.isRegistered(token, true), token.description).to.equal(false);
      }
      await dispose();
    } finally {
      await server.close();
    }
  });

  it('hands a mount its plugin\'s block of the configuration file, in-process and isolated alike', async () => {
    const dir = await tempDir('keywarden-plugin-config-');
    const block = { greeting: 'hello', retries: 3, zones: ['a', 'b'], limits: { burst: 10 } };
    const server = await startServer({
      config: { ...testConfig({ pluginDirectory: dir.path }), plugins: { contract: block, 'contract-isolated': block, other: { no: true } } },
      plugins: [contractPlugin],
      logger: pino({ level: 'silent' }),
    });
    try {
      const client = await unsealed(server);
      const sha256 = await installModule(dir.path, 'contract-isolated.mjs', await bundleExternal(CONTRACT_MODULE, 'contractPlugin', 'contract-isolated'));
      expect((await client.post('sys/plugins/catalog/secret/contract-isolated', { sha256, command: 'contract-isolated.mjs' })).status).to.equal(204);
      expect((await client.post('sys/mounts/in-process', { type: 'contract' })).status).to.equal(204);
      expect((await client.post('sys/mounts/isolated', { type: 'contract-isolated' })).status).to.equal(204);
      for (const mount of ['in-process', 'isolated']) {
        const services = await client.get(`${mount}/services`);
        expect(services.status, services.text).to.equal(200);
        expect(services.body.data.config, mount).to.deep.equal(block);
      }
    } finally {
      await server.close();
      await dir.remove();
    }
  });

  it('logs at start-up that cloud_auth is deprecated', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const server = await startServer({ config: { ...testConfig(), cloudAuth: { allowSha1Signatures: true } }, plugins: [], logger });
    try {
      const warnings = lines.map((line) => JSON.parse(line) as { msg: string }).map((l) => l.msg);
      expect(warnings).to.include('cloud_auth is deprecated: write it as plugin "cloud" { allow_sha1_signatures = … }');
    } finally {
      await server.close();
    }
  });
});
