/** `read`, `write`, `list`, `delete`: generic requests to any path, worded and coded as vault's. */
import type { Command } from 'commander';
import { CommandError, RequestError, UsageError, type ApiClient } from '../client.js';
import { attempt, clientFor, formatOf, isWrapped, printResponse, sanitizePath, withClientOptions, withFieldOption, type CliContext, type GlobalOptions } from '../context.js';
import { parseKeyValues } from '../kv-args.js';
import { renderData, renderList } from '../output.js';

export function registerKv(program: Command, ctx: CliContext): void {
  withFieldOption(withClientOptions(program.command('read').description('Read data at a path (k=v pairs become query parameters)').argument('<path>').argument('[data...]'))).action(
    async (rawPath: string, data: string[], opts: GlobalOptions) => {
      const path = sanitizePath(rawPath);
      const query = Object.fromEntries(Object.entries(await parseKeyValues(data, ctx.io)).map(([k, v]) => [k, String(v)]));
      const res = await attempt(`Error reading ${path}`, async () => (await clientFor(ctx, opts)).readOptional(path, query));
      if (!res) throw new CommandError(`No value found at ${path}`, 2);
      printResponse(ctx, opts, res.body);
    },
  );

  withFieldOption(
    withClientOptions(
      program
        .command('write')
        .description('Write data to a path: k=v pairs (k=@file reads a file, k=- standard input), or a JSON object from @file.json or - (standard input)')
        .argument('<path>')
        .argument('[data...]'),
    ),
  )
    .option('-f, --force', 'write with no data (vault refuses an empty write without it, so that a mistyped command cannot blank a secret)')
    .action(async (rawPath: string, data: string[], opts: GlobalOptions & { force?: boolean }) => {
      if (data.length === 0 && !opts.force) throw new UsageError('Must supply data or use -force');
      const path = sanitizePath(rawPath);
      const body = await parseKeyValues(data, ctx.io);
      const client = await clientFor(ctx, opts);
      const res = await attempt(`Error writing data to ${path}`, async () => {
        try {
          return await client.write(path, body);
        } catch (err) {
          throw (await kvVersion2Refusal(client, path, err)) ?? err;
        }
      });
      if (res.body === undefined) {
        // Nothing came back (204): vault says so only in table format, so JSON and YAML stay parseable.
        if (formatOf(opts) === 'table') ctx.io.out(`Success! Data written to: ${path}\n`);
        return;
      }
      printResponse(ctx, opts, res.body);
    });

  withClientOptions(program.command('list').description('List the keys under a path').argument('<path>'))
    .option('--wrap-ttl <duration>', 'wrap the answer in a single-use wrapping token living this long (5m, 300) ($VAULT_WRAP_TTL)')
    .action(async (rawPath: string, opts: GlobalOptions) => {
      const path = sanitizePath(rawPath);
      const format = formatOf(opts);
      const res = await attempt(`Error listing ${path}`, async () => (await clientFor(ctx, opts)).listOptional(path));
      if (res && isWrapped(res.body)) return printResponse(ctx, opts, res.body);
      const keys = res?.body?.data?.keys;
      if (!Array.isArray(keys)) {
        // As vault: JSON and YAML print an empty object so a pipe still gets a document; all exit 2.
        if (format !== 'table') ctx.io.out(renderData(format, {}, () => ''));
        throw new CommandError(format !== 'table' ? '' : res ? `No entries found at ${path}` : `No value found at ${path}`, 2);
      }
      ctx.io.out(renderList(format, res!.body));
    });

  withClientOptions(program.command('delete').description('Delete the data at a path').argument('<path>')).action(async (rawPath: string, opts: GlobalOptions) => {
    const path = sanitizePath(rawPath);
    await attempt(`Error deleting ${path}`, async () => (await clientFor(ctx, opts)).delete(path));
    if (formatOf(opts) === 'table') ctx.io.out(`Success! Data deleted (if it existed) at: ${path}\n`);
  });
}

/**
 * What to say when a plain write to a kv version 2 mount fails (version 2 keeps its secrets under
 * data/ and answers anything else with a 404 and a warning): the command that does it. Undefined
 * when the failure is another (the mount is not kv v2, or cannot be looked up).
 */
async function kvVersion2Refusal(client: ApiClient, path: string, err: unknown): Promise<CommandError | undefined> {
  if (!(err instanceof RequestError) || err.status !== 404) return undefined;
  const mount = await client.read(`sys/internal/ui/mounts/${path}`).then(
    (res) => res.body?.data as { path?: string; type?: string; options?: Record<string, string> | null } | undefined,
    () => undefined,
  );
  if (!mount?.path || mount.options?.version !== '2') return undefined;
  const rest = path.slice(mount.path.length);
  return new CommandError(
    `Error writing data to ${path}: ${mount.path} is a kv version 2 mount, which keeps each secret's versions under ${mount.path}data/. ` +
      `Write the secret with "keywarden kv put ${path} …" (the same key=value data), or write to ${mount.path}data/${rest} with the pairs inside a "data" object.`,
    2,
  );
}
