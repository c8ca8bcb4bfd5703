/**
 * `server`: run the server (dev mode, or from configuration files) until SIGINT or SIGTERM.
 * SIGHUP reloads what can change without a restart; SIGINT and SIGTERM drain requests in flight
 * for up to DRAIN_TIMEOUT_MS, then seal and close storage. A second SIGINT or SIGTERM stops at once.
 * With `workers` > 1 this process is the primary (core/cluster/primary.ts) and each worker runs
 * this command again as a worker; the signals reach the workers through the primary.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import type { RunningServer } from '../../server.js';
import type { ServerConfig } from '../../config/config.js';
import { SerialQueue } from '../../seal/serial.js';
import { errorMessage } from '../../errors.js';
import type { WorkerLink } from '../../cluster/worker-link.js';
import { randomUUID } from 'node:crypto';
import { MemoryReclaim, MEMORY_RECLAIM_DEFAULTS } from '../../memory-reclaim.js';
import { YoungGenerationCap, YOUNG_GENERATION_CAP_BYTES } from '../../young-generation.js';
import { mapLargeAllocations } from '../../native-heap.js';

/** How long SIGINT and SIGTERM let requests in flight finish before their connections are cut. */
export const DRAIN_TIMEOUT_MS = 10_000;

export function registerServer(program: Command, setExit: (code: number) => void): void {
  program
    .command('server')
    .description('Run the server: -dev for a local development server, -config PATH for production')
    .option('--dev', 'development mode: LevelDB under ./data/dev, initialized and unsealed automatically')
    .addOption(new Option('--dev-listen-address <address>', 'dev mode: the address to listen on').default('127.0.0.1:8200').env('KEYWARDEN_DEV_LISTEN_ADDRESS'))
    .option('--dev-plugin-dir <dir>', 'dev mode: a directory of plugin modules to load in-process, unchecked (elsewhere plugins run from the catalog)')
    .addOption(new Option('--dev-root-token-id <id>', 'dev mode: the root token\'s id, as Vault\'s (CI jobs and compose files rely on a known one)').env('VAULT_DEV_ROOT_TOKEN_ID'))
    .option('--dev-no-store-token', 'dev mode: do not write the root token to the token file the CLI reads (~/.keywarden-token)')
    .option('--workers <count>', 'serving processes (default: the workers setting, else the machine\'s available parallelism); 1 runs a single process')
    .option(
      '--config <path>',
      'a configuration file (HCL or JSON) or a directory of them; may be given more than once, later ones override earlier ones',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .action(async (opts: ServerOptions, command: Command) => {
      // Given on the command line, a dev setting without -dev is a mistake; from the environment it is not.
      const devOnly = ['devRootTokenId', 'devNoStoreToken'].filter((name) => command.getOptionValueSource(name) === 'cli');
      if (!opts.dev && devOnly.length > 0) {
        process.stderr.write(`server: ${devOnly.map((name) => `-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(' and ')} ${devOnly.length > 1 ? 'apply' : 'applies'} only with -dev\n`);
        setExit(2);
        return;
      }
      setExit(await runServer(opts));
    });
}

interface ServerOptions {
  readonly dev?: boolean;
  readonly config: readonly string[];
  readonly devListenAddress: string;
  readonly devPluginDir?: string;
  readonly devRootTokenId?: string;
  readonly devNoStoreToken?: boolean;
  readonly workers?: string;
}

async function runServer(opts: ServerOptions): Promise<number> {
  // Loaded here, not at the top: client commands start faster without the whole server.
  const { WorkerLink } = await import('../../cluster/worker-link.js');
  if (!opts.dev && opts.config.length === 0) {
    // A usage error: 1, as vault's "Must specify at least one config path".
    process.stderr.write('Error: keywarden server needs -dev (a development server) or -config PATH (a configuration file or directory)\n');
    return 1;
  }
  // Everything the server creates without an explicit mode (LevelDB's own files, which take none)
  // is then private to its user. Set here, not in startServer: the umask is process-wide, and
  // programs embedding the server keep their own.
  process.umask(0o077);
  // Buffers of megabytes get mappings of their own, so that freeing one on V8's helper threads
  // never holds the event loop's next allocation (core/native-heap.ts); process-wide too.
  mapLargeAllocations();
  const worker = WorkerLink.ofThisProcess();
  if (worker) {
    // The server has stopped (or never started): the worker ends here with its code, since
    // node:cluster ends a worker whose channel closes with 0 and the channel keeps it alive.
    let code = 1;
    try {
      code = await serve(opts, worker);
    } finally {
      process.exit(code);
    }
  }
  return serve(opts, undefined);
}

async function serve(opts: ServerOptions, worker: WorkerLink | undefined): Promise<number> {
  const { loadConfig, ConfigError } = await import('../../config/config.js');
  const { devConfig, serverLogger, startServer } = await import('../../server.js');
  const { resolveWorkers } = await import('../../cluster/workers.js');
  const { StorageLockedError } = await import('../../../storage/leveldb.js');
  const { UnavailableError } = await import('../../errors.js');
  let server: RunningServer;
  let pidFile: string | undefined;
  // A SIGINT or SIGTERM that comes while the server starts (it logs "listening" before it can
  // drain) is kept and acted on as soon as it serves, rather than ending the process unhandled.
  let early: NodeJS.Signals | undefined;
  const keep = (signal: NodeJS.Signals) => void (early ??= signal);
  const dropKeep = () => {
    process.off('SIGINT', keep);
    process.off('SIGTERM', keep);
  };
  try {
    const dataDir = path.resolve('data');
    const config = opts.dev
      ? { ...devConfig(dataDir, opts.devListenAddress), ...(opts.devPluginDir ? { pluginDirectory: path.resolve(opts.devPluginDir) } : {}) }
      : loadConfig(opts.config);
    // As `auth/token/create` checks a custom id: "." marks Vault's own token formats.
    if (opts.dev && opts.devRootTokenId !== undefined && (opts.devRootTokenId === '' || opts.devRootTokenId.includes('.'))) {
      throw new ConfigError("-dev-root-token-id must not be empty and cannot have a '.' in the value");
    }
    // Workers leave the pid file to the primary.
    pidFile = worker ? undefined : config.pidFile;
    const workers = worker ? 1 : resolveWorkers(opts.workers, config);
    if (workers > 1) return await runPrimaryServer(opts, config, workers, dataDir);
    process.on('SIGINT', keep);
    process.on('SIGTERM', keep);
    const { LogTap } = await import('../../log-tap.js');
    const logTap = new LogTap();
    const logger = serverLogger(config, worker?.index, logTap);
    logProcessWarnings(logger);
    const dev = opts.dev
      ? {
          stateFile: path.join(dataDir, 'dev-unseal.json'),
          ...(opts.devPluginDir ? { pluginDirectory: path.resolve(opts.devPluginDir) } : {}),
          ...(opts.devRootTokenId ? { rootTokenId: opts.devRootTokenId } : {}),
        }
      : undefined;
    server = await startServer({ config, logger, logTap, ...(dev ? { dev } : {}), ...(worker ? { worker } : {}) });
  } catch (err) {
    dropKeep();
    // Known start-up failures (bad config, locked storage, database down, port in use) read as one line, no stack.
    const known =
      err instanceof ConfigError || err instanceof StorageLockedError || err instanceof UnavailableError || (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    process.stderr.write(`Error starting the server: ${startError(err)}\n`);
    if (!known && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return 1;
  }

  if (worker) {
    // The primary writes the pid file and prints dev mode's banner, once for every worker.
    await worker.ready({ addresses: server.addresses, ...(server.rootToken ? { rootToken: server.rootToken } : {}) });
  } else if (!(await announce(opts, pidFile, server.address, server.rootToken, server.logger))) {
    dropKeep();
    await server.close();
    return 1;
  }

  // Nothing is awaited from the announcement to the signal handlers below: a SIGTERM sent as soon
  // as the banner shows must drain the server, not end the process unhandled.
  const running = server;
  const reclaim = new MemoryReclaim({ ...MEMORY_RECLAIM_DEFAULTS, logger: running.logger, requests: () => running.host.inFlight.total }).start();
  const youngGeneration = new YoungGenerationCap(YOUNG_GENERATION_CAP_BYTES).start();
  let stopping = false;
  // One reload at a time, in the order the signals came.
  const reloads = new SerialQueue();
  const onHangup = () => {
    void reloads.run(async () => {
      if (stopping) return;
      running.logger.info({ signal: 'SIGHUP' }, 'reload: reading the configuration again');
      let next: ServerConfig | undefined;
      if (!opts.dev) {
        try {
          next = loadConfig(opts.config);
        } catch (err) {
          // The server keeps running on what it has, as Vault does; the file is for the operator to fix.
          running.logger.error({ err: errorMessage(err) }, 'reload: the configuration was not reloaded; the previous settings stay');
        }
      }
      await running.reload(next);
    });
  };
  process.on('SIGHUP', onHangup);

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      // Handlers off: a second signal ends the process at once, for an operator who will not wait.
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      stopping = true;
      running.logger.info({ signal }, 'shutting down');
      running.close(DRAIN_TIMEOUT_MS).then(resolve, (err: unknown) => {
        running.logger.error({ err: errorMessage(err) }, 'shutdown failed');
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // The primary's signals; a worker that got the signal itself (a terminal's Ctrl-C) is stopping already.
    worker?.onPrimarySignal((signal) => {
      if (signal === 'SIGHUP') onHangup();
      else if (!stopping) stop(signal);
    });
    dropKeep();
    if (early) stop(early);
  });
  process.off('SIGHUP', onHangup);
  reclaim.stop();
  youngGeneration.stop();
  if (pidFile) rmSync(pidFile, { force: true });
  running.logger.info('stopped');
  return 0;
}

/**
 * The reason a start failed, in one line. A port taken reads the same from a worker, whose
 * listener the primary binds ("bind EADDRINUSE"), as from a single process.
 */
function startError(err: unknown): string {
  const { code, address, port } = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (code === 'EADDRINUSE' && address !== undefined && port !== undefined) return `listen EADDRINUSE: address already in use ${address}:${port}`;
  return errorMessage(err);
}

/**
 * Once the server serves: the pid file written, and in dev mode the root token stored for the CLI
 * and the banner printed. False when the pid file cannot be written (the server is then stopped).
 */
async function announce(opts: ServerOptions, pidFile: string | undefined, address: string, rootToken: string | undefined, logger: Logger): Promise<boolean> {
  // Written once the server listens, so whoever finds the file can stop the server with it.
  if (pidFile) {
    try {
      writeFileSync(pidFile, `${process.pid}\n`);
    } catch (err) {
      process.stderr.write(`Error starting the server: cannot write pid_file ${pidFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}\n`);
      return false;
    }
  }
  let storedIn: string | undefined;
  if (rootToken && !opts.devNoStoreToken) {
    // As Vault's dev server: the CLI run next is signed in already.
    const { saveToken } = await import('../token-file.js');
    try {
      storedIn = await saveToken(process.env, rootToken);
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'dev mode: the root token could not be stored for the CLI');
    }
  }
  if (rootToken) {
    process.stdout.write(
      [
        '',
        'WARNING! dev mode is enabled: the unseal key and root token are kept in ./data/dev-unseal.json.',
        'Never run dev mode in production.',
        '',
        `    export VAULT_ADDR='${address}'`,
        `    Root Token: ${rootToken}`,
        '',
        ...(storedIn ? [`The root token is stored in ${storedIn} for the CLI (-dev-no-store-token leaves it out).`, ''] : []),
      ].join('\n') + '\n',
    );
  }
  return true;
}

/**
 * `workers` > 1: this process owns the store and runs the workers (core/cluster/primary.ts) until
 * SIGINT or SIGTERM has stopped them.
 */
async function runPrimaryServer(opts: ServerOptions, config: ServerConfig, workers: number, dataDir: string): Promise<number> {
  const { serverLogger, openStorage } = await import('../../server.js');
  const { runPrimary } = await import('../../cluster/primary.js');
  const { ensurePrivateDirectory } = await import('../../private-files.js');
  const logger = serverLogger(config, 'primary');
  logProcessWarnings(logger);
  if (opts.dev) await ensurePrivateDirectory(dataDir, 'dev data directory', (message) => logger.warn(message));
  const nodeId = randomUUID();
  const store = await openStorage(config, nodeId, logger);
  const pidFile = config.pidFile;
  const ha = config.storage.kind === 'postgresql' && config.storage.haEnabled;
  if (ha) logger.info({ ha: 'enabled', node_id: nodeId, api_addr: config.apiAddr, workers }, 'this node joins its HA cluster');
  const code = await runPrimary({
    workers,
    store,
    ...(ha ? { node: { nodeId, apiAddr: config.apiAddr! } } : {}),
    logger,
    serving: async (first) => {
      if (!(await announce(opts, pidFile, first.addresses[0]!, first.rootToken, logger))) process.kill(process.pid, 'SIGTERM');
    },
  });
  if (pidFile) rmSync(pidFile, { force: true });
  logger.info('stopped');
  return code;
}

/**
 * Node prints process warnings (a dependency's deprecation, the AWS SDK's notice that it will
 * need a newer Node) as plain multi-line text on stderr; the server's log is JSON lines, so they
 * go through the logger instead, one line each. Process-wide, so here and not in startServer.
 * With --no-warnings or NODE_NO_WARNINGS=1 Node installs no printer, and the operator's choice stands.
 */
function logProcessWarnings(logger: Logger): void {
  const printers = process.listeners('warning');
  if (printers.length === 0) return;
  for (const printer of printers) process.off('warning', printer);
  process.on('warning', (warning: Error & { code?: string }) => {
    logger.warn({ warning: warning.name, ...(warning.code ? { code: warning.code } : {}) }, warning.message.replace(/\s+/g, ' ').trim());
  });
}
