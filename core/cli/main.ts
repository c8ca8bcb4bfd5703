/**
 * The `keywarden` command line. Vault's CLI takes Go-style single-dash long flags (`-dev`,
 * `-config=FILE`); they are accepted here too and mean the same as `--dev`, `--config`.
 * Exit codes: 0 ok, 1 error, 2 usage error.
 */
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { loadConfigFile, ConfigError } from '../config/config.js';
import { devConfig, startServer, type RunningServer } from '../server.js';
import { VERSION } from '../host.js';
import { StorageLockedError } from '../../storage/leveldb.js';

/** `-dev` → `--dev`, `-config=x` → `--config=x`; single letters (`-h`) stay as they are. */
export function normalizeFlags(argv: readonly string[]): string[] {
  return argv.map((arg) => (/^-[a-z][a-z0-9-]+(=.*)?$/i.test(arg) ? `-${arg}` : arg));
}

export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command('keywarden')
    .description('Keywarden: a small secrets service speaking the Vault HTTP API')
    .version(VERSION, '-v, --version')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });

  let exitCode = 0;
  program
    .command('server')
    .description('Run the server: -dev for a local development server, -config FILE for production')
    .option('--dev', 'development mode: LevelDB under ./data/dev, initialized and unsealed automatically')
    .option('--dev-listen-address <address>', 'dev mode: the address to listen on', '127.0.0.1:8200')
    .option('--dev-plugin-dir <dir>', 'dev mode: a directory of extra plugin modules to load')
    .option('--config <file>', 'a JSON configuration file')
    .action(async (opts: ServerOptions) => {
      exitCode = await runServer(opts);
    });

  try {
    await program.parseAsync(normalizeFlags(argv), { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help' ? 0 : 2;
    }
    throw err;
  }
  return exitCode;
}

interface ServerOptions {
  readonly dev?: boolean;
  readonly config?: string;
  readonly devListenAddress: string;
  readonly devPluginDir?: string;
}

async function runServer(opts: ServerOptions): Promise<number> {
  if (!opts.dev && !opts.config) {
    process.stderr.write('server: either -dev or -config FILE is required\n');
    return 2;
  }
  let server: RunningServer;
  try {
    if (opts.dev) {
      const dataDir = path.resolve('data');
      server = await startServer({
        config: { ...devConfig(dataDir, opts.devListenAddress), ...(opts.devPluginDir ? { pluginDirectory: path.resolve(opts.devPluginDir) } : {}) },
        dev: { stateFile: path.join(dataDir, 'dev-unseal.json') },
      });
    } else {
      server = await startServer({ config: loadConfigFile(opts.config!) });
    }
  } catch (err) {
    // Known start-up failures (bad config, locked storage, port in use) read as one line, no stack.
    const known = err instanceof ConfigError || err instanceof StorageLockedError || (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
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
