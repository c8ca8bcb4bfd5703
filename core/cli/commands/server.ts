/** `server`: run the server (dev mode or from a config file) until SIGINT/SIGTERM. */
import path from 'node:path';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { RunningServer } from '../../server.js';

export function registerServer(program: Command, setExit: (code: number) => void): void {
  program
    .command('server')
    .description('Run the server: -dev for a local development server, -config FILE for production')
    .option('--dev', 'development mode: LevelDB under ./data/dev, initialized and unsealed automatically')
    .option('--dev-listen-address <address>', 'dev mode: the address to listen on', '127.0.0.1:8200')
    .option('--dev-plugin-dir <dir>', 'dev mode: a directory of extra plugin modules to load')
    .option('--config <file>', 'a JSON configuration file')
    .action(async (opts: ServerOptions) => {
      setExit(await runServer(opts));
    });
}

interface ServerOptions {
  readonly dev?: boolean;
  readonly config?: string;
  readonly devListenAddress: string;
  readonly devPluginDir?: string;
}

async function runServer(opts: ServerOptions): Promise<number> {
  // Loaded here, not at the top: client commands start faster without the whole server.
  const { loadConfigFile, ConfigError } = await import('../../config/config.js');
  const { devConfig, serverLogger, startServer } = await import('../../server.js');
  const { StorageLockedError } = await import('../../../storage/leveldb.js');
  const { UnavailableError } = await import('../../errors.js');
  if (!opts.dev && !opts.config) {
    process.stderr.write('server: either -dev or -config FILE is required\n');
    return 2;
  }
  // Everything the server creates without an explicit mode (LevelDB's own files, which take none)
  // is then private to its user. Set here, not in startServer: the umask is process-wide, and
  // programs embedding the server keep their own.
  process.umask(0o077);
  let server: RunningServer;
  try {
    const dataDir = path.resolve('data');
    const config = opts.dev
      ? { ...devConfig(dataDir, opts.devListenAddress), ...(opts.devPluginDir ? { pluginDirectory: path.resolve(opts.devPluginDir) } : {}) }
      : loadConfigFile(opts.config!);
    const logger = serverLogger(config);
    logProcessWarnings(logger);
    server = await startServer({ config, logger, ...(opts.dev ? { dev: { stateFile: path.join(dataDir, 'dev-unseal.json') } } : {}) });
  } catch (err) {
    // Known start-up failures (bad config, locked storage, database down, port in use) read as one line, no stack.
    const known =
      err instanceof ConfigError || err instanceof StorageLockedError || err instanceof UnavailableError || (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    process.stderr.write(`Error starting the server: ${err instanceof Error ? err.message : String(err)}\n`);
    if (!known && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return 1;
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
      ].join('\n') + '\n',
    );
  }

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      server.logger.info({ signal }, 'shutting down');
      server.close().then(resolve, (err: unknown) => {
        server.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
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
