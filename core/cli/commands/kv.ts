/** `read`, `write`, `list`, `delete`: generic requests to any path. */
import type { Command } from 'commander';
import { clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { parseKeyValues } from '../kv-args.js';
import { render, renderList } from '../output.js';

export function registerKv(program: Command, ctx: CliContext): void {
  withClientOptions(program.command('read').description('Read data at a path (k=v pairs become query parameters)').argument('<path>').argument('[data...]')).action(
    async (path: string, data: string[], opts: GlobalOptions) => {
      const client = await clientFor(ctx, opts);
      const query = Object.fromEntries(Object.entries(await parseKeyValues(data, ctx.io)).map(([k, v]) => [k, String(v)]));
      const res = await client.read(path, query);
      ctx.io.out(render(formatOf(opts), res.body));
    },
  );
  withClientOptions(program.command('write').description('Write k=v data to a path (k=@file reads a file, k=- standard input)').argument('<path>').argument('[data...]')).action(
    async (path: string, data: string[], opts: GlobalOptions) => {
      const client = await clientFor(ctx, opts);
      const res = await client.write(path, await parseKeyValues(data, ctx.io));
      ctx.io.out(res.status === 204 ? (formatOf(opts) === 'json' ? '' : `Success! Data written to: ${path}\n`) : render(formatOf(opts), res.body));
    },
  );
  withClientOptions(program.command('list').description('List the keys under a path').argument('<path>')).action(async (path: string, opts: GlobalOptions) => {
    const client = await clientFor(ctx, opts);
    const res = await client.list(path);
    ctx.io.out(renderList(formatOf(opts), res.body));
  });
  withClientOptions(program.command('delete').description('Delete the data at a path').argument('<path>')).action(async (path: string, opts: GlobalOptions) => {
    const client = await clientFor(ctx, opts);
    await client.delete(path);
    ctx.io.out(formatOf(opts) === 'json' ? '' : `Success! Data deleted (if it existed) at: ${path}\n`);
  });
}
