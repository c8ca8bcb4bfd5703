/** `path-help`: the server's own help for an API path (`?help=1`), as `vault path-help` prints it. */
import type { Command } from 'commander';
import { CommandError, RequestError } from '../client.js';
import { attempt, clientFor, formatOf, sanitizePath, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';

export function registerPathHelp(program: Command, ctx: CliContext): void {
  withClientOptions(program.command('path-help').description("Print the server's help for an API path (-format=json: its OpenAPI document)").argument('<path>')).action(
    async (rawPath: string, opts: GlobalOptions) => {
      const path = sanitizePath(rawPath);
      const client = await clientFor(ctx, opts);
      const body: { help?: string; openapi?: unknown } = await attempt('Error retrieving help', async () => {
        try {
          return (await client.read(path, { help: '1' })).body ?? {};
        } catch (err) {
          // Mounts are only known once the server is unsealed: say so rather than show a bare 503.
          if (err instanceof RequestError && err.status === 503 && err.errors.some((e) => e.startsWith('Vault is sealed'))) {
            throw new CommandError('Error: the server is sealed.\n\nThe "path-help" command needs it unsealed, so that the mount points of the secrets engines are known.', 2);
          }
          throw err;
        }
      });
      // As vault: JSON is the OpenAPI document, on one line; any other format prints the help text.
      ctx.io.out(formatOf(opts) === 'json' ? `${JSON.stringify(body.openapi ?? null)}\n` : `${(body.help ?? '').replace(/\n*$/, '')}\n`);
    },
  );
}
