/**
 * `server`: run the server (dev mode, or from configuration files) until SIGINT or SIGTERM.
 * SIGHUP reloads what can change without a restart; SIGINT and SIGTERM drain requests in flight
 * for up to DRAIN_TIMEOUT_MS, then seal and close storage. A second SIGINT or SIGTERM stops at once.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import type { RunningServer } from '../../server.js';
import type { ServerConfig } from '../../config/config.js';
import { SerialQueue } from '../../seal/serial.js';
import { errorMessage } from '../../errors.js';

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
}

async function runServer(opts: ServerOptions): Promise<number> {
  // Loaded here, not at the top: client commands start faster without the whole server.
  const { loadConfig, ConfigError } = await import('../../config/config.js');
  const { devConfig, serverLogger, startServer } = await import('../../server.js');
  const { StorageLockedError } = await import('../../../storage/leveldb.js');
  const { UnavailableError } = await import('../../errors.js');
  if (!opts.dev && opts.config.length === 0) {
    // A usage error: 1, as vault's "Must specify at least one config path".
    process.stderr.write('Error: keywarden server needs -dev (a development server) or -config PATH (a configuration file or directory)\n');
    return 1;
  }
  // Everything the server creates without an explicit mode (LevelDB's own files, which take none)
  // is then private to its user. Set here, not in startServer: the umask is process-wide, and
  // programs embedding the server keep their own.
  process.umask(0o077);
  let server: RunningServer;
  let pidFile: string | undefined;
  try {
    const dataDir = path.resolve('data');
    const config = opts.dev
      ? { ...devConfig(dataDir, opts.devListenAddress), ...(opts.devPluginDir ? { pluginDirectory: path.resolve(opts.devPluginDir) } : {}) }
      : loadConfig(opts.config);
    pidFile = config.pidFile;
    const logger = serverLogger(config);
    logProcessWarnings(logger);
    // As `auth/token/create` checks a custom id: "." marks Vault's own token formats.
    if (opts.dev && opts.devRootTokenId !== undefined && (opts.devRootTokenId === '' || opts.devRootTokenId.includes('.'))) {
      throw new ConfigError("-dev-root-token-id must not be empty and cannot have a '.' in the value");
    }
    const dev = opts.dev
      ? {
          stateFile: path.join(dataDir, 'dev-unseal.json'),
          ...(opts.devPluginDir ? { pluginDirectory: path.resolve(opts.devPluginDir) } : {}),
          ...(opts.devRootTokenId ? { rootTokenId: opts.devRootTokenId } : {}),
        }
      : undefined;
    server = await startServer({ config, logger, ...(dev ? { dev } : {}) });
  } catch (err) {
    // Known start-up failures (bad config, locked storage, database down, port in use) read as one line, no stack.
    const known =
      err instanceof ConfigError || err instanceof StorageLockedError || err instanceof UnavailableError || (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    process.stderr.write(`Error starting the server: ${errorMessage(err)}\n`);
    if (!known && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return 1;
  }

  // Written once the server listens, so whoever finds the file can stop the server with it.
  if (pidFile) {
    try {
      writeFileSync(pidFile, `${process.pid}\n`);
    } catch (err) {
      process.stderr.write(`Error starting the server: cannot write pid_file ${pidFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}\n`);
      await server.close();
      return 1;
    }
  }

  let storedIn: string | undefined;
  if (server.rootToken && !opts.devNoStoreToken) {
    // As Vault's dev server: the CLI run next is signed in already.
    const { saveToken } = await import('../token-file.js');
    try {
      storedIn = await saveToken(process.env, server.rootToken);
    } catch (err) {
      server.logger.warn({ err: errorMessage(err) }, 'dev mode: the root token could not be stored for the CLI');
    }
  }
  if (server.rootToken) {
    process.stdout.write(
      [
        '',
        'WARNING! dev mode is enabled: the unseal key and root token are kept in ./data/dev-unseal.json.',
        'Never run dev mode in production.',
        '',
        `    export VAULT_ADDR='${server.address}'`,
        `    Root Token: ${server.rootToken}`,
        '',
        ...(storedIn ? [`The root token is stored in ${storedIn} for the CLI (-dev-no-store-token leaves it out).`, ''] : []),
      ].join('\n') + '\n',
    );
  }

  const running = server;
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
  });
  process.off('SIGHUP', onHangup);
  if (pidFile) rmSync(pidFile, { force: true });
  running.logger.info('stopped');
  return 0;
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
