/**
 * Starting and stopping a whole server: storage, host, HTTP listener, plugins, dev mode.
 * The CLI's `server` command and the tests use the same entry point.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { Host } from './host.js';
import { createApp } from './http/app.js';
import { listen, type Listener } from './http/listener.js';
import { splitAddress, type ServerConfig } from './config/config.js';
import { PluginRegistry } from './plugins/registry.js';
import { BUILTIN_PLUGINS } from './plugins/builtin.js';
import { loadPluginDirectory } from './plugins/loader.js';
import type { PhysicalStorage } from '../storage/storage.js';
import { LevelDbStorage } from '../storage/leveldb.js';
import { MemoryStorage } from '../storage/memory.js';
import { PostgresStorage } from '../storage/postgresql.js';
import { HaManager } from './ha/ha-manager.js';
import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';
import { WasmCrypto } from '../wasm/index.js';
import { TOKENS } from './di/tokens.js';
import { registerValue } from './di/container.js';
import { ensurePrivateDirectory, writePrivateFile } from './private-files.js';

export interface StartOptions {
  readonly config: ServerConfig;
  /** Dev mode: initialize on first start, keep the unseal key beside the data, auto-unseal. */
  readonly dev?: { readonly stateFile: string };
  /** Extra plugins (tests); built-ins are always registered. */
  readonly plugins?: readonly unknown[];
  readonly logger?: Logger;
  readonly clock?: Clock;
  /**
   * An open physical store to use instead of the configured one (tests wrap stores to inject
   * faults); the server closes it like its own.
   */
  readonly physical?: PhysicalStorage;
}

export interface RunningServer {
  readonly address: string;
  readonly host: Host;
  readonly logger: Logger;
  /** Dev mode only: the root token. */
  readonly rootToken?: string;
  /** Stops listening, seals, and closes storage. */
  close(): Promise<void>;
}

/** Dev mode mounts, when their plugins are registered. */
const DEV_MOUNTS = [
  { table: 'secret', path: 'transit/', type: 'transit' },
  { table: 'auth', path: 'cloud/', type: 'cloud' },
] as const;

/** The server's log: JSON lines on stdout at the configured level. */
export function serverLogger(config: ServerConfig): Logger {
  return pino({ level: config.logLevel, base: { service: 'keywarden' } });
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const logger = options.logger ?? serverLogger(config);
  const registry = new PluginRegistry();
  for (const plugin of BUILTIN_PLUGINS) registry.register(plugin);
  for (const plugin of options.plugins ?? []) registry.register(plugin, 'the embedding program');
  if (config.pluginDirectory) {
    const report = await loadPluginDirectory(registry, config.pluginDirectory);
    for (const failure of report.failed) logger.error({ file: failure.file }, failure.error);
    for (const loaded of report.loaded) logger.info({ plugin: loaded.name, version: loaded.version }, 'plugin loaded');
  }

  // Loaded (and warmed up) once per server: every transit mount shares it.
  const wasm = await WasmCrypto.load();
  const nodeId = randomUUID();
  const physical = options.physical ?? (await openStorage(config, nodeId, logger));
  const ha =
    physical instanceof PostgresStorage && physical.ha
      ? new HaManager({ storage: physical, lock: physical.ha, apiAddr: config.apiAddr!, logger, nodeId })
      : undefined;
  const host = new Host({
    physical,
    registry,
    logger,
    ...(options.clock ? { clock: options.clock } : {}),
    defaultLeaseTtl: config.defaultLeaseTtl,
    maxLeaseTtl: config.maxLeaseTtl,
    periodicIntervalMs: config.periodicIntervalMs,
    wasm,
    ...(ha ? { ha } : {}),
  });
  // Plugins read their server-wide settings from it (the cloud auth method: cloud_auth).
  registerValue(host.container, TOKENS.ServerConfig, config);

  let listener: Listener | undefined;
  try {
    let rootToken: string | undefined;
    if (options.dev) rootToken = await bootDev(host, registry, options.dev.stateFile, logger);
    const app = createApp(host, { maxRequestSize: config.listener.maxRequestSize, logger });
    const { host: bindHost, port } = splitAddress(config.listener.address);
    listener = await listen(app, {
      host: bindHost,
      port,
      ...(config.listener.tlsCertFile ? { tlsCertFile: config.listener.tlsCertFile, tlsKeyFile: config.listener.tlsKeyFile! } : {}),
      ...(config.listener.readHeaderTimeoutMs !== undefined ? { readHeaderTimeoutMs: config.listener.readHeaderTimeoutMs } : {}),
      ...(config.listener.readTimeoutMs !== undefined ? { readTimeoutMs: config.listener.readTimeoutMs } : {}),
    });
    logger.info({ address: listener.address, storage: physical.kind, ...(ha ? { ha: 'enabled', node_id: nodeId, api_addr: config.apiAddr } : {}) }, 'listening');
    const bound = listener;
    let closing: Promise<void> | undefined;
    return {
      address: bound.address,
      host,
      logger,
      ...(rootToken ? { rootToken } : {}),
      close: () =>
        (closing ??= (async () => {
          await bound.close();
          await host.shutdown();
          await physical.close();
        })()),
    };
  } catch (err) {
    await listener?.close();
    await host.shutdown().catch(() => undefined);
    await physical.close();
    throw err;
  }
}

async function openStorage(config: ServerConfig, nodeId: string, logger: Logger): Promise<PhysicalStorage> {
  const storage = config.storage;
  if (storage.kind === 'inmem') return new MemoryStorage();
  if (storage.kind === 'postgresql') {
    return PostgresStorage.open({
      connectionUrl: storage.connectionUrl,
      table: storage.table,
      haEnabled: storage.haEnabled,
      nodeId,
      poolSize: storage.maxParallel,
      onWarning: (message) => logger.warn(message),
    });
  }
  return LevelDbStorage.open(storage.path, { onWarning: (message) => logger.warn(message) });
}

interface DevState {
  readonly unseal_key: string;
  readonly root_token: string;
}

/**
 * First start: initialize with one share, keep the unseal key and root token in the state file
 * (dev only: anyone who can read that file owns the server), mount the dev engines. Later starts:
 * unseal with the kept key.
 */
async function bootDev(host: Host, registry: PluginRegistry, stateFile: string, logger: Logger): Promise<string> {
  await ensurePrivateDirectory(path.dirname(stateFile), 'dev data directory', (message) => logger.warn(message));
  let state: DevState;
  if (await host.seal.isInitialized()) {
    let text: string;
    try {
      text = await readFile(stateFile, 'utf8');
    } catch {
      throw new Error(`dev mode: the data is initialized but ${stateFile} (the dev unseal key) is missing; delete the dev data directory to start afresh`);
    }
    state = JSON.parse(text) as DevState;
    await host.seal.unsealWithKey(Buffer.from(state.unseal_key, 'hex'));
  } else {
    const result = await host.seal.initialize(1, 1);
    state = { unseal_key: result.keys[0]!.toString('hex'), root_token: result.rootToken };
    await writePrivateFile(stateFile, JSON.stringify(state));
    await host.seal.unsealWithKey(result.keys[0]!);
    for (const mount of DEV_MOUNTS) {
      if (!registry.has(mount.type)) continue;
      await host.mounts!.enable(mount.table, mount.path, { type: mount.type });
    }
  }
  logger.warn({ state_file: stateFile }, 'DEV MODE: the unseal key and root token are stored unencrypted beside the data; never use dev mode in production');
  return state.root_token;
}

/** The dev-mode configuration: LevelDB under ./data/dev, plain HTTP on 127.0.0.1:8200. */
export function devConfig(dataDir: string, address = '127.0.0.1:8200'): ServerConfig {
  return {
    listener: { address, tlsDisable: true, maxRequestSize: 32 * 1024 * 1024 },
    storage: { kind: 'leveldb', path: path.join(dataDir, 'dev') },
    defaultLeaseTtl: 768 * 3600,
    maxLeaseTtl: 768 * 3600,
    logLevel: 'info',
    periodicIntervalMs: 60_000,
  };
}

