/** What every CLI command works with: environment, I/O and the API client. */
import type { Command } from 'commander';
import { ApiClient, serverAddress, storedToken } from './client.js';
import { parseFormat, type Io, type OutputFormat } from './output.js';

export interface CliContext {
  readonly env: NodeJS.ProcessEnv;
  readonly io: Io;
}

export interface GlobalOptions {
  readonly format?: string;
  readonly address?: string;
}

/** Adds the options every client command takes (`-format`, `-address`). */
export function withClientOptions(command: Command): Command {
  return command.option('--format <format>', 'output format: table or json', 'table').option('--address <url>', 'server address (default $KEYWARDEN_ADDR, $VAULT_ADDR, http://127.0.0.1:8200)');
}

export async function clientFor(ctx: CliContext, opts: GlobalOptions): Promise<ApiClient> {
  const address = (opts.address ?? serverAddress(ctx.env)).replace(/\/+$/, '');
  return new ApiClient(address, await storedToken(ctx.env));
}

export function formatOf(opts: GlobalOptions): OutputFormat {
  return parseFormat(opts.format);
}
