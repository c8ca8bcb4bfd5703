/** `unwrap`: spend a wrapping token and print the answer it held, as `vault unwrap` does. */
import type { Command } from 'commander';
import { CommandError } from '../client.js';
import { attempt, clientFor, printResponse, withClientOptions, withFieldOption, type CliContext, type GlobalOptions } from '../context.js';

export function registerUnwrap(program: Command, ctx: CliContext): void {
  withFieldOption(
    withClientOptions(
      program
        .command('unwrap')
        .description('Unwrap a wrapped answer: the wrapping token given, or else the current token (which must then be the wrapping token)')
        .argument('[token]'),
    ),
  ).action(async (token: string | undefined, opts: GlobalOptions) => {
    const client = await clientFor(ctx, opts);
    // With no argument the wrapping token is the request's own token, as with vault (VAULT_TOKEN=<wrapping token> vault unwrap).
    const res = await attempt('Error unwrapping', () => client.write('sys/wrapping/unwrap', token ? { token: token.trim() } : {}));
    if (res.body === undefined) throw new CommandError('Could not find wrapped response', 2);
    printResponse(ctx, opts, res.body);
  });
}
