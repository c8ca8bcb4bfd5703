/**
 * What every client command works with: environment, I/O, the API client with its flags, and the
 * helpers that make a command's output and failures read as the vault CLI's.
 *
 * A command file registers its commands with `withClientOptions` (and `withFieldOption` when it
 * prints a response), gets its client from `clientFor`, wraps each API call in `attempt` with the
 * words vault uses ("Error reading secret/x"), and prints a response with `printResponse`.
 */
import type { Command } from 'commander';
import { ApiClient, ClientSetupError, CommandError, ConnectionError, RequestError, serverAddress } from './client.js';
import { storedToken } from './token-file.js';
import { fieldOf, parseFormat, render, renderField, warningsOf, type Io, type OutputFormat } from './output.js';
import { tlsAgentOptions, type TlsFlags } from './tls.js';

export interface CliContext {
  readonly env: NodeJS.ProcessEnv;
  readonly io: Io;
}

export interface GlobalOptions extends TlsFlags {
  readonly format?: string;
  readonly address?: string;
  /** Only on commands registered with withFieldOption. */
  readonly field?: string;
  /** Only on commands registered with withFieldOption ($VAULT_WRAP_TTL, applied by main). */
  readonly wrapTtl?: string;
}

/**
 * Adds the options every client command takes: -address and the TLS flags (each overriding its
 * VAULT_* variable) and -format (VAULT_FORMAT, applied by main before the command runs).
 */
export function withClientOptions(command: Command): Command {
  return command
    .option('--address <url>', 'server address (default $KEYWARDEN_ADDR, $VAULT_ADDR, http://127.0.0.1:8200)')
    .option('--ca-cert <file>', 'PEM CA certificate to verify the server with; wins over -ca-path ($VAULT_CACERT)')
    .option('--ca-path <dir>', 'directory of PEM CA certificates to verify the server with ($VAULT_CAPATH)')
    .option('--client-cert <file>', 'PEM client certificate for TLS authentication; needs -client-key ($VAULT_CLIENT_CERT)')
    .option('--client-key <file>', 'PEM private key of -client-cert ($VAULT_CLIENT_KEY)')
    .option('--tls-server-name <name>', 'name to send as SNI and to verify the certificate against ($VAULT_TLS_SERVER_NAME)')
    .option('--tls-skip-verify', 'do not verify the server certificate: for testing only ($VAULT_SKIP_VERIFY)')
    .option('--format <format>', 'output format: table, json or yaml ($VAULT_FORMAT)', 'table');
}

/**
 * The command group `name` (operator, token, …): the one already registered, or a new one. Lets
 * several command files add subcommands to the same group.
 */
export function commandGroup(program: Command, name: string, description: string): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);
}

/**
 * Adds -field and -wrap-ttl, for commands that print a response (read, write, list, token create,
 * login, …): a wrapped answer is printed as its wrap_info, as vault prints it.
 */
export function withFieldOption(command: Command): Command {
  return command
    .option('--field <name>', 'print only this field, raw (from the auth block for a token, else from data; wrapping_token when wrapped)')
    .option('--wrap-ttl <duration>', 'wrap the answer in a single-use wrapping token living this long (5m, 300) ($VAULT_WRAP_TTL)');
}

/**
 * The API client for a command's options: address from -address or the environment, token from the
 * environment or the token helper file, TLS from the flags or VAULT_* variables.
 * @throws ClientSetupError when the address or a TLS setting cannot be used.
 */
export async function clientFor(ctx: CliContext, opts: GlobalOptions): Promise<ApiClient> {
  const address = (opts.address || serverAddress(ctx.env)).replace(/\/+$/, '');
  const found = await storedToken(ctx.env);
  const client = new ApiClient(address, found.token, tlsAgentOptions(opts, ctx.env));
  client.tokenSource = found.source;
  client.wrapTtl = opts.wrapTtl;
  return client;
}

export function formatOf(opts: GlobalOptions): OutputFormat {
  return parseFormat(opts.format);
}

/**
 * Runs a step that talks to the server; if it fails, the command prints "<action>: <reason>" and
 * ends with `exitCode`: 2, vault's code for an error on the server's side, unless the command
 * reserves 2 for something else (status: sealed).
 */
export async function attempt<T>(action: string, step: () => Promise<T>, exitCode = 2): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof RequestError || err instanceof ConnectionError || err instanceof ClientSetupError) {
      throw new CommandError(`${action}: ${err.message}`, exitCode);
    }
    throw err;
  }
}

/**
 * Prints a response as vault's OutputSecret does (warnings on standard error, then the table, JSON
 * or YAML), or only its -field, raw.
 * @throws CommandError (exit 1) when -field names a field the response does not have.
 */
export function printResponse(ctx: CliContext, opts: GlobalOptions, body: unknown): void {
  const format = formatOf(opts);
  if (opts.field) {
    const value = fieldOf(body, opts.field);
    if (value === undefined) throw new CommandError(`Field "${opts.field}" not present in secret`, 1);
    ctx.io.out(renderField(format, value, ctx.io.isTerminal === true));
    return;
  }
  const warnings = format === 'table' ? warningsOf(body) : '';
  if (warnings) ctx.io.err(warnings);
  ctx.io.out(render(format, body));
}

/** Whether a response is a wrapped one (only wrap_info, no secret): print it with printResponse. */
export function isWrapped(body: unknown): boolean {
  return body !== null && typeof body === 'object' && Boolean((body as { wrap_info?: unknown }).wrap_info);
}

/** A path as vault's commands echo it: no leading or trailing slashes. */
export function sanitizePath(p: string): string {
  return p.trim().replace(/^\/+|\/+$/g, '');
}
