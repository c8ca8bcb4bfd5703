/**
 * Starting and stopping a whole server: storage, host, HTTP listener, plugins, dev mode.
 * The CLI's `server` command and the tests use the same entry point.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { Host } from './host.js';
import { DEFAULT_MAX_REQUEST_SIZE } from './http/body.js';
import { createApp } from './http/app.js';
import { UiFiles } from './http/ui.js';
import { CLOSE_GRACE_MS, listen, type Listener } from './http/listener.js';
import { reload, tlsFiles } from './server-reload.js';
import { ConfigError, splitAddress, type ListenerConfig, type ServerConfig } from './config/config.js';
import { PluginRegistry } from './plugins/registry.js';
import { BUILTIN_PLUGINS } from './plugins/builtin.js';
import { DEFAULT_ISOLATION_LIMITS, RESIDENT_HEADROOM_MB, type IsolationLimits } from './plugins/isolation/isolated-backend.js';
import { loadPluginDirectory } from './plugins/dev-plugins.js';
import { checkPluginDirectory } from './plugins/plugin-file.js';
import type { PhysicalStorage } from '../storage/storage.js';
import { LevelDbStorage } from '../storage/leveldb.js';
import { MemoryStorage } from '../storage/memory.js';
import type { PostgresStorage } from '../storage/postgresql.js';
import { IpcStorage } from '../storage/ipc.js';
import { HaManager } from './ha/ha-manager.js';
import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';
import { WasmCrypto } from '../wasm/index.js';
import { ensurePrivateDirectory, writePrivateFile } from './private-files.js';
import { logFirstSteps } from './first-contact.js';
import { errorMessage } from './errors.js';
import { createAutoSeal } from './seal/auto-seals.js';
import type { Backoff } from './seal/auto-unseal.js';
import type { HealthIntervals } from './seal/seal-health.js';
import { selfInitialize, type SelfInitOutcome } from './seal/self-init.js';
import type { WorkerLink } from './cluster/worker-link.js';
import { LogTap } from './log-tap.js';

export interface StartOptions {
  readonly config: ServerConfig;
  /** Dev mode: initialize on first start, keep the unseal key beside the data, auto-unseal. */
  readonly dev?: {
    readonly stateFile: string;
    /** `-dev-plugin-dir`: modules loaded in-process as built-ins (see plugins/dev-plugins.ts). */
    readonly pluginDirectory?: string;
    /** `-dev-root-token-id`: the root token's id instead of a random one. */
    readonly rootTokenId?: string;
  };
  /** Extra plugins (tests), run in-process as built-ins; the compiled-in ones are always registered. */
  readonly plugins?: readonly unknown[];
  /** How external plugins' processes are bounded (memory, watchdog); the configuration's when omitted. */
  readonly isolation?: IsolationLimits;
  readonly logger?: Logger;
  /** The tap `logger` writes its lines through (serverLogger's), for sys/monitor; none: sys/monitor has no log to stream. */
  readonly logTap?: LogTap;
  readonly clock?: Clock;
  /**
   * An open physical store to use instead of the configured one (tests wrap stores to inject
   * faults); the server closes it like its own.
   */
  readonly physical?: PhysicalStorage;
  /** Between auto-unseal attempts, and between the seals' health checks (tests shorten them). */
  readonly autoUnsealBackoff?: Backoff;
  readonly sealHealthIntervals?: HealthIntervals;
  /**
   * This process is one of several workers (core/cluster/): its store is the primary's, and it
   * is an HA node of the workers' local cluster.
   */
  readonly worker?: WorkerLink;
}

export interface RunningServer {
  /** The first listener's address. */
  readonly address: string;
  /** Every listener's address, in configuration order. */
  readonly addresses: readonly string[];
  readonly host: Host;
  readonly logger: Logger;
  /** Dev mode only: the root token. */
  readonly rootToken?: string;
  /** With `initialize` stanzas: the self-initialization run at start (core/seal/self-init.ts); never rejects. */
  readonly selfInit?: Promise<SelfInitOutcome | 'failed'>;
  /**
   * What SIGHUP does: takes from `config` (the files read again) what applies without a restart,
   * the log level, the listeners' certificate, key and client CA files and the audit settings
   * (declared devices enabled or disabled as their stanzas came or went), and reopens audit files
   * (for logrotate) and audit sockets (a collector that moved is found again). Without `config` (dev mode, or files that no longer parse) the certificate
   * files in use are read again. Never throws: a failure is logged and the previous setting stays.
   */
  reload(config?: ServerConfig): Promise<void>;
  /**
   * Stops accepting connections, lets requests in flight finish for up to `drainTimeoutMs`
   * (then cuts them), seals, and closes storage, logging each step.
   */
  close(drainTimeoutMs?: number): Promise<void>;
}

/** Dev mode mounts, when their plugins are registered. */
const DEV_MOUNTS = [
  // Vault's dev server mounts a version 2 key/value store at secret/.
  { table: 'secret', path: 'secret/', type: 'kv', options: { version: '2' } },
  { table: 'secret', path: 'transit/', type: 'transit' },
  { table: 'auth', path: 'cloud/', type: 'cloud' },
] as const;

/**
 * The server's log: JSON lines on stdout at the configured level; a worker's lines carry its number.
 * With `tap`, each line also goes to the open sys/monitor streams.
 */
export function serverLogger(config: ServerConfig, worker?: number | 'primary', tap?: LogTap): Logger {
  return pino({ level: config.logLevel, base: { service: 'keywarden', ...(worker !== undefined ? { worker } : {}) }, ...(tap ? { hooks: { streamWrite: tap.hook } } : {}) });
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const logTap = options.logger ? options.logTap : new LogTap();
  const logger = options.logger ?? serverLogger(config, undefined, logTap);
  // Before storage is opened, so a server asked for a UI it does not have fails at once.
  const ui = config.ui ? UiFiles.load() : undefined;
  const isolation = options.isolation ?? isolationLimits(config);
  if (config.pluginDirectory) await checkPluginDirectory(config.pluginDirectory);
  const registry = new PluginRegistry();
  for (const plugin of BUILTIN_PLUGINS) registry.register(plugin);
  for (const plugin of options.plugins ?? []) registry.register(plugin, 'the embedding program');
  if (options.dev?.pluginDirectory) {
    const report = await loadPluginDirectory(registry, options.dev.pluginDirectory);
    for (const failure of report.failed) logger.error({ file: failure.file }, failure.error);
    for (const loaded of report.loaded) logger.warn({ plugin: loaded.name, version: loaded.version }, 'dev mode: plugin loaded in-process, unchecked');
  }

  // Loaded (and warmed up) once per server: every transit mount shares it.
  const wasm = await WasmCrypto.load();
  const nodeId = randomUUID();
  // Before storage is opened: a key file or token that is missing stops the start with a ConfigError.
  // Dev mode keeps its own unseal key and takes no seal stanza.
  const seals = config.seal && !options.dev ? createAutoSeal(config.seal, logger) : undefined;
  // Every stanza disabled: the seals only open the root key while the store moves back to Shamir shares.
  const autoSeal = seals?.enabled ? seals : undefined;
  const { worker } = options;
  let physical: PhysicalStorage;
  try {
    physical = options.physical ?? (worker ? worker.storage(config.storage.kind) : await openStorage(config, nodeId, logger));
  } catch (err) {
    seals?.close();
    throw err;
  }
  // A worker's forwarding address: its own socket, which the active worker is reached on.
  const forwardingSocket = worker?.forwardingSocket;
  // A worker's store is the primary's (IpcStorage): only the process that opened PostgreSQL loads its driver.
  const postgres = config.storage.kind === 'postgresql' && !(physical instanceof IpcStorage) ? (await loadPostgres()).PostgresStorage : undefined;
  const ha =
    physical instanceof IpcStorage && forwardingSocket
      ? new HaManager({ storage: physical, lock: physical.ha, apiAddr: `unix:${forwardingSocket}`, logger, nodeId })
      : postgres && physical instanceof postgres && physical.ha
        ? new HaManager({ storage: physical, lock: physical.ha, apiAddr: config.apiAddr!, logger, nodeId })
        : undefined;
  const host = new Host({
    physical,
    registry,
    ...(config.pluginDirectory ? { pluginDirectory: config.pluginDirectory } : {}),
    isolation,
    logger,
    ...(logTap ? { logTap } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    defaultLeaseTtl: config.defaultLeaseTtl,
    maxLeaseTtl: config.maxLeaseTtl,
    periodicIntervalMs: config.periodicIntervalMs,
    wasm,
    ...(ha ? { ha } : {}),
    disableUnauthedGenerateRoot: config.disableUnauthedGenerateRoot ?? false,
    ...(config.clusterName ? { clusterName: config.clusterName } : {}),
    config,
    ...(autoSeal ? { autoSeal } : {}),
    ...(seals && !seals.enabled ? { shamirFrom: seals } : {}),
    ...(options.autoUnsealBackoff ? { autoUnsealBackoff: options.autoUnsealBackoff } : {}),
    ...(options.sealHealthIntervals ? { sealHealthIntervals: options.sealHealthIntervals } : {}),
    ...(worker ? { siblings: worker.siblings, wholeServer: worker.wholeServer } : {}),
  });
  // Still read, as the cloud auth method's plugin block (config.ts, pluginConfigOf).
  if (config.cloudAuth) logger.warn('cloud_auth is deprecated: write it as plugin "cloud" { allow_sha1_signatures = … }');

  const listeners: Listener[] = [];
  try {
    let rootToken: string | undefined;
    // Unsealed at once when another worker is.
    await worker?.attach(host);
    if (options.dev) rootToken = await bootDev(host, registry, options.dev, logger);
    for (const listenerConfig of config.listeners) {
      const listener = await listenOn(host, listenerConfig, logger, ui);
      listeners.push(listener);
      logger.info({ address: listener.address, storage: physical.kind, ...(ha && !worker ? { ha: 'enabled', node_id: nodeId, api_addr: config.apiAddr } : {}) }, 'listening');
    }
    const publicAddress = listeners[0]!.address;
    if (forwardingSocket) {
      // The largest body any listener takes, since any may be forwarded here.
      const maxRequestSize = Math.max(...config.listeners.map((l) => l.maxRequestSize));
      listeners.push(await listenOn(host, { address: '', maxRequestSize }, logger, undefined, forwardingSocket));
    }
    if (!worker || worker.index === 1) await logFirstSteps(host.seal, publicAddress, ui !== undefined, logger);
    // In the background, as Vault does: sys/seal-status answers while the seal is unreachable.
    if (autoSeal) host.seal.startAutoUnseal();
    const selfInit = autoSeal && config.initialize ? startSelfInit(host, config.initialize, config.apiAddr, logger) : undefined;
    let closing: Promise<void> | undefined;
    return {
      address: publicAddress,
      addresses: listeners.slice(0, config.listeners.length).map((l) => l.address),
      host,
      logger,
      ...(rootToken ? { rootToken } : {}),
      ...(selfInit ? { selfInit } : {}),
      // The configured listeners, in configuration order; not a worker's forwarding socket, which comes last.
      reload: (next) => reload(next, { config, listeners: listeners.slice(0, config.listeners.length), host, logger }),
      close: (drainTimeoutMs = CLOSE_GRACE_MS) =>
        (closing ??= (async () => {
          logger.info({ drain_timeout_ms: drainTimeoutMs }, 'shutdown: no longer accepting connections; waiting for requests in flight');
          // A monitor streams until its client leaves: it ends here rather than hold the drain.
          logTap?.endAll();
          // Its requests and the revocation of its root token finish first.
          await selfInit;
          const cut = (await Promise.all(listeners.map((l) => l.drain(drainTimeoutMs)))).reduce((a, b) => a + b, 0);
          if (cut > 0) logger.warn({ connections: cut }, 'shutdown: cut the connections still busy at the drain timeout');
          else logger.info('shutdown: requests in flight finished');
          await host.shutdown();
          seals?.close();
          await physical.close();
          logger.info('shutdown: storage closed');
        })()),
    };
  } catch (err) {
    await Promise.all(listeners.map((l) => l.close()));
    await host.shutdown().catch(() => undefined);
    seals?.close();
    await physical.close();
    throw err;
  }
}

/** Self-initialization in the background: sys/seal-status answers meanwhile. Its failure is logged. */
function startSelfInit(host: Host, blocks: NonNullable<ServerConfig['initialize']>, apiAddr: string | undefined, logger: Logger): Promise<SelfInitOutcome | 'failed'> {
  const { ha } = host;
  // Active here, or elsewhere: a leader record naming this node while it is still promoting itself does not count.
  const activeNodeKnown = ha
    ? async () => ha.state === 'active' || ![undefined, '', apiAddr].includes((await ha.leaderStatus()).leaderAddress)
    : undefined;
  return selfInitialize(blocks, { seal: host.seal, handle: (request) => host.handle(request), log: logger, ...(activeNodeKnown ? { activeNodeKnown } : {}) }).catch((err: unknown) => {
    logger.error({ err: errorMessage(err) }, 'self-init: the store could not be initialized; it stays uninitialized, and the next start tries again');
    return 'failed' as const;
  });
}

/**
 * The limits of external plugins' processes from the configuration, defaults filled in.
 * @throws ConfigError when the resident limit leaves no room above the heap limit.
 */
function isolationLimits(config: ServerConfig): IsolationLimits {
  const memoryLimitMb = config.pluginMemoryLimitMb ?? DEFAULT_ISOLATION_LIMITS.memoryLimitMb;
  const residentLimitMb = config.pluginResidentMemoryLimitMb ?? memoryLimitMb + RESIDENT_HEADROOM_MB;
  if (residentLimitMb <= memoryLimitMb) {
    throw new ConfigError(`plugin_resident_memory_limit_mb (${residentLimitMb} MB) must be greater than plugin_memory_limit_mb (${memoryLimitMb} MB): the resident memory holds the heap`);
  }
  return { memoryLimitMb, residentLimitMb, watchdogMs: config.pluginWatchdogMs ?? DEFAULT_ISOLATION_LIMITS.watchdogMs };
}

async function listenOn(host: Host, config: ListenerConfig, logger: Logger, ui: UiFiles | undefined, socketPath?: string): Promise<Listener> {
  const app = createApp(host, {
    maxRequestSize: config.maxRequestSize,
    ...(config.maxUnauthenticatedRequestSize !== undefined ? { maxUnauthenticatedRequestSize: config.maxUnauthenticatedRequestSize } : {}),
    ...(config.jsonLimits ? { jsonLimits: config.jsonLimits } : {}),
    ...(config.maxRequestDurationMs !== undefined ? { maxRequestDurationMs: config.maxRequestDurationMs } : {}),
    logger,
    ...(ui ? { ui } : {}),
    ...(config.unauthenticatedMetricsAccess ? { unauthenticatedMetrics: true } : {}),
    ...(socketPath ? { siblingSocket: true } : {}),
  });
  const { host: bindHost, port } = socketPath ? { host: '', port: 0 } : splitAddress(config.address);
  return listen(app, {
    host: bindHost,
    port,
    ...(socketPath ? { socketPath } : {}),
    ...(config.tls
      ? {
          ...tlsFiles(config.tls),
          tlsMinVersion: config.tls.minVersion,
          tlsClientCertificates: config.tls.clientCertificates,
        }
      : {}),
    ...(config.readHeaderTimeoutMs !== undefined ? { readHeaderTimeoutMs: config.readHeaderTimeoutMs } : {}),
    ...(config.readTimeoutMs !== undefined ? { readTimeoutMs: config.readTimeoutMs } : {}),
    ...(config.idleTimeoutMs !== undefined ? { idleTimeoutMs: config.idleTimeoutMs } : {}),
    ...(config.writeTimeoutMs !== undefined ? { writeTimeoutMs: config.writeTimeoutMs } : {}),
  });
}

/** The PostgreSQL store and its driver, loaded only by a server configured with it: a server on LevelDB never loads pg. */
const loadPostgres = (): Promise<{ PostgresStorage: typeof PostgresStorage }> => import('../storage/postgresql.js');

/** The configured physical store, opened (by the primary process when there are several workers). */
export async function openStorage(config: ServerConfig, nodeId: string, logger: Logger): Promise<PhysicalStorage> {
  const storage = config.storage;
  if (storage.kind === 'inmem') return new MemoryStorage();
  if (storage.kind === 'postgresql') {
    const { PostgresStorage } = await loadPostgres();
    return PostgresStorage.openWhenReachable(
      {
        connectionUrl: storage.connectionUrl,
        table: storage.table,
        haEnabled: storage.haEnabled,
        nodeId,
        poolSize: storage.maxParallel,
        onWarning: (message) => logger.warn(message),
      },
      (reason, retryInMs) => logger.warn({ retry_in_ms: retryInMs }, `waiting for PostgreSQL: ${reason}`),
    );
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
async function bootDev(host: Host, registry: PluginRegistry, dev: NonNullable<StartOptions['dev']>, logger: Logger): Promise<string> {
  const { stateFile } = dev;
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
    // A worker that another worker unsealed already has nothing to do.
    if (host.barrier.sealed) await host.seal.unsealWithKey(Buffer.from(state.unseal_key, 'hex'));
  } else {
    const result = await host.seal.initialize(1, 1);
    state = { unseal_key: result.keys[0]!.toString('hex'), root_token: result.rootToken };
    await writePrivateFile(stateFile, JSON.stringify(state));
    await host.seal.unsealWithKey(result.keys[0]!);
    // The first worker of several is an HA node: it mounts once it has won the (uncontested) election.
    await host.ha?.roundDone();
    for (const mount of DEV_MOUNTS) {
      if (!registry.has(mount.type)) continue;
      await host.mounts!.enable(mount.table, mount.path, { type: mount.type, ...('options' in mount ? { options: mount.options } : {}) });
    }
  }
  await host.ha?.roundDone();
  if (dev.rootTokenId !== undefined && dev.rootTokenId !== state.root_token) {
    // As Vault's dev server: the requested id replaces the generated root token, which is revoked.
    if (!(await host.tokens.lookup(dev.rootTokenId))) await host.tokens.createRootToken(dev.rootTokenId);
    await host.tokens.revokeTree(await host.tokens.hashToken(state.root_token));
    state = { ...state, root_token: dev.rootTokenId };
    await writePrivateFile(stateFile, JSON.stringify(state));
  }
  logger.warn({ state_file: stateFile }, 'DEV MODE: the unseal key and root token are stored unencrypted beside the data; never use dev mode in production');
  return state.root_token;
}

/** The dev-mode configuration: LevelDB under ./data/dev, plain HTTP on 127.0.0.1:8200. */
export function devConfig(dataDir: string, address = '127.0.0.1:8200'): ServerConfig {
  return {
    listeners: [{ address, maxRequestSize: DEFAULT_MAX_REQUEST_SIZE }],
    storage: { kind: 'leveldb', path: path.join(dataDir, 'dev') },
    defaultLeaseTtl: 768 * 3600,
    maxLeaseTtl: 768 * 3600,
    logLevel: 'info',
    periodicIntervalMs: 60_000,
    ui: true,
  };
}

