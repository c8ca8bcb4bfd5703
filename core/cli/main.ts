/**
 * The `keywarden` command line. Vault's CLI takes Go-style single-dash long flags (`-dev`,
 * `-config=FILE`, `-format=json`); they are accepted here too and mean the same as `--dev`, ….
 * Exit codes: 0 ok, 1 request error (or unreachable server), 2 usage error.
 */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { ConnectionError, RequestError, UsageError } from './client.js';
import type { CliContext } from './context.js';
import type { Io } from './output.js';
import { registerServer } from './commands/server.js';
import { registerOperator } from './commands/operator.js';
import { registerKv } from './commands/kv.js';
import { registerMounts } from './commands/mounts.js';
import { registerPolicy } from './commands/policy.js';
import { registerToken } from './commands/token.js';
import { registerLogin } from './commands/login.js';
import { processIo } from './process-io.js';

/** `-dev` → `--dev`, `-config=x` → `--config=x`; single letters (`-h`) stay as they are. */
export function normalizeFlags(argv: readonly string[]): string[] {
  return argv.map((arg) => (/^-[a-z][a-z0-9-]+(=.*)?$/i.test(arg) ? `-${arg}` : arg));
}

export async function main(argv: readonly string[], io: Io = processIo(), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let exitCode = 0;
  const setExit = (code: number) => {
    exitCode = code;
  };
  const ctx: CliContext = { env, io };
  const program = new Command('keywarden')
    .description('Keywarden: a small secrets service speaking the Vault HTTP API')
    .version(VERSION, '-v, --version')
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) });
  registerServer(program, setExit);
  registerOperator(program, ctx, setExit);
  registerKv(program, ctx);
  registerMounts(program, ctx);
  registerPolicy(program, ctx);
  registerToken(program, ctx);
  registerLogin(program, ctx);
  for (const command of program.commands) command.exitOverride().showHelpAfterError();

  try {
    await program.parseAsync(normalizeFlags(argv), { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      return ['commander.helpDisplayed', 'commander.version', 'commander.help', 'commander.executeSubCommandAsync'].includes(err.code) ? 0 : 2;
    }
    if (err instanceof UsageError) {
      io.err(`Error: ${err.message}\n`);
      return 2;
    }
    if (err instanceof ConnectionError) {
      io.err(`Error: ${err.message}\n`);
      return 1;
    }
    if (err instanceof RequestError) {
      io.err(`Error making API request.\n\nURL: ${err.path}\nCode: ${err.status}. Errors:\n\n${err.errors.map((e) => `* ${e}`).join('\n') || '* (none)'}\n`);
      return 1;
    }
    throw err;
  }
  return exitCode;
}
