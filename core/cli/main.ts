/**
 * The `keywarden` command line. Vault's CLI takes Go-style single-dash long flags (`-dev`,
 * `-config=FILE`, `-format=json`); they are accepted here too and mean the same as `--dev`, ….
 * Exit codes, as vault's: 0 ok; 1 a local error (wrong usage, a file that cannot be read); 2 an
 * error from or on the way to the server (it answered with an error, it cannot be reached, the
 * TLS handshake failed, nothing at the path) — except `status`, which exits 2 for "sealed" and 1
 * for any error; 127 an unknown command.
 */
import { Command, CommanderError } from 'commander';
import { ClientSetupError, CommandError, ConnectionError, RequestError, UsageError } from './client.js';
import type { CliContext } from './context.js';
import { parseFormat, type Io } from './output.js';
import { registerServer } from './commands/server.js';
import { registerOperator } from './commands/operator.js';
import { registerKv } from './commands/kv.js';
import { registerKvEngine } from './commands/kv-engine.js';
import { registerMounts } from './commands/mounts.js';
import { registerAudit } from './commands/audit.js';
import { registerPolicy } from './commands/policy.js';
import { registerToken } from './commands/token.js';
import { registerLease } from './commands/lease.js';
import { registerLogin } from './commands/login.js';
import { registerUnwrap } from './commands/unwrap.js';
import { registerPathHelp } from './commands/path-help.js';
import { registerMonitor } from './commands/monitor.js';
import { registerPlugin } from './commands/plugin.js';
import { registerCompletion } from './commands/completion.js';
import { registerPrint, VERSION_LINE } from './commands/print.js';
import { processIo } from './process-io.js';

/** `-dev` → `--dev`, `-config=x` → `--config=x`; single letters (`-h`) stay as they are. */
export function normalizeFlags(argv: readonly string[]): string[] {
  return argv.map((arg) => (/^-[a-z][a-z0-9-]+(=.*)?$/i.test(arg) ? `-${arg}` : arg));
}

/** The reverse, for help and error texts: flags as the user types them and the README shows them (`-address`). */
export function singleDashFlags(text: string): string {
  return text.replace(/(^|[\s'"(\[,])--([a-z][a-z0-9-]*)/gi, '$1-$2');
}

/** The exit code for a failure, and what to print on standard error. */
function failure(err: unknown): { code: number; message: string } | undefined {
  if (err instanceof CommandError) return { code: err.exitCode, message: err.message };
  if (err instanceof UsageError) return { code: 1, message: `Error: ${err.message}` };
  if (err instanceof ClientSetupError || err instanceof ConnectionError) return { code: 2, message: `Error: ${err.message}` };
  if (err instanceof RequestError) return { code: 2, message: err.message };
  return undefined;
}

export async function main(argv: readonly string[], io: Io = processIo(), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let exitCode = 0;
  const setExit = (code: number) => {
    exitCode = code;
  };
  const ctx: CliContext = { env, io };
  const program = new Command('keywarden')
    .description('Keywarden: a small secrets service speaking the Vault HTTP API')
    .version(VERSION_LINE, '-v, --version', 'print the version')
    .exitOverride()
    .showHelpAfterError();
  registerServer(program, setExit);
  registerOperator(program, ctx, setExit);
  registerKv(program, ctx);
  registerKvEngine(program, ctx);
  registerMounts(program, ctx);
  registerAudit(program, ctx);
  registerPolicy(program, ctx);
  registerToken(program, ctx);
  registerLease(program, ctx);
  registerLogin(program, ctx);
  registerUnwrap(program, ctx);
  registerPathHelp(program, ctx);
  registerMonitor(program, ctx);
  registerPlugin(program, ctx);
  registerCompletion(program, ctx);
  registerPrint(program, ctx);
  const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
  // Every command, the program's own options among them, writes through io, and its help and
  // errors show flags single-dashed.
  for (const command of everyCommand(program)) {
    command
      .exitOverride()
      .showHelpAfterError()
      .configureHelp({ optionTerm: (option) => singleDashFlags(option.flags) })
      .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text), outputError: (text, write) => write(singleDashFlags(text)) });
  }
  // VAULT_FORMAT stands in for a -format not given, as in vault; checked before anything is sent.
  program.hook('preAction', (_program, action) => {
    if (!action.options.some((o) => o.attributeName() === 'format')) return;
    if (action.getOptionValueSource('format') === 'default' && env.VAULT_FORMAT) action.setOptionValueWithSource('format', env.VAULT_FORMAT, 'env');
    parseFormat(action.getOptionValue('format') as string);
  });
  program.hook('preAction', (_program, action) => {
    if (!action.options.some((o) => o.attributeName() === 'wrapTtl')) return;
    if (action.getOptionValue('wrapTtl') === undefined && env.VAULT_WRAP_TTL) action.setOptionValueWithSource('wrapTtl', env.VAULT_WRAP_TTL, 'env');
  });

  try {
    await program.parseAsync(normalizeFlags(argv), { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0;
      // Like vault: an unknown command, or none at all, prints the usage and exits 127.
      return err.code === 'commander.unknownCommand' || err.code === 'commander.help' ? 127 : 1;
    }
    const known = failure(err);
    if (!known) throw err;
    if (known.message) io.err(`${known.message}\n`);
    return known.code;
  }
  return exitCode;
}
