/** `secrets enable|disable|list|move` and `auth enable|disable|list|move`. */
import type { Command } from 'commander';
import { CommandError } from '../client.js';
import { attempt, clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { parseKeyValues } from '../kv-args.js';
import { renderData } from '../output.js';

interface EnableOptions extends GlobalOptions {
  readonly path?: string;
  readonly description?: string;
  readonly defaultLeaseTtl?: string;
  readonly maxLeaseTtl?: string;
  readonly options?: string[];
}

function registerTable(program: Command, ctx: CliContext, name: 'secrets' | 'auth'): void {
  const sys = name === 'secrets' ? 'sys/mounts' : 'sys/auth';
  const what = name === 'secrets' ? 'secrets engine' : 'auth method';
  const group = program.command(name).description(`Manage ${what}s`);

  withClientOptions(group.command('enable').description(`Enable a ${what} (at -path, default: its type)`).argument('<type>'))
    .option('--path <path>', 'where to mount it')
    .option('--description <text>', 'a description')
    .option('--default-lease-ttl <duration>', 'default lease TTL of the mount')
    .option('--max-lease-ttl <duration>', 'maximum lease TTL of the mount')
    .option('--options <k=v...>', 'plugin options')
    .action(async (type: string, opts: EnableOptions) => {
      const path = (opts.path ?? type).replace(/^\/+|\/+$/g, '');
      const options = opts.options ? await parseKeyValues(opts.options, ctx.io) : undefined;
      const client = await clientFor(ctx, opts);
      await attempt(`Error enabling ${type}`, () => client.write(`${sys}/${path}`, {
        type,
        ...(opts.description !== undefined ? { description: opts.description } : {}),
        config: {
          ...(opts.defaultLeaseTtl ? { default_lease_ttl: opts.defaultLeaseTtl } : {}),
          ...(opts.maxLeaseTtl ? { max_lease_ttl: opts.maxLeaseTtl } : {}),
        },
        ...(options ? { options } : {}),
      }));
      ctx.io.out(`Success! Enabled the ${type} ${what} at: ${name === 'auth' ? 'auth/' : ''}${path}/\n`);
    });

  withClientOptions(group.command('disable').description(`Disable a ${what} and delete its data`).argument('<path>')).action(async (path: string, opts: GlobalOptions) => {
    const clean = path.replace(/^\/+|\/+$/g, '').replace(/^auth\//, name === 'auth' ? '' : 'auth/');
    await attempt(`Error disabling ${what} at ${clean}`, async () => (await clientFor(ctx, opts)).delete(`${sys}/${clean}`));
    ctx.io.out(`Success! Disabled the ${what} (if it existed) at: ${clean}/\n`);
  });

  withClientOptions(group.command('move').description(`Move a ${what} to another path, keeping its data and configuration`).argument('<source>').argument('<destination>')).action(
    async (source: string, destination: string, opts: GlobalOptions) => {
      // As vault: paths with a trailing slash; an auth method's given with or without auth/.
      const asPath = (p: string) => {
        const clean = p.replace(/^\/+|\/+$/g, '');
        return name === 'auth' ? `auth/${clean.replace(/^auth\//, '')}/` : `${clean}/`;
      };
      const from = asPath(source);
      const to = asPath(destination);
      const client = await clientFor(ctx, opts);
      const started = await attempt(`Error moving ${what} ${from} to ${to}`, () => client.write('sys/remount', { from, to }));
      const id = started.body.data.migration_id as string;
      ctx.io.out(`Started moving ${what} ${from} to ${to}, with migration ID ${id}\n`);
      const status = await attempt(`Error checking migration status of ${what} ${from} to ${to}`, () => client.read(`sys/remount/status/${id}`));
      // A move is finished when sys/remount answers; any other status means it did not happen.
      if (status.body.data.migration_info.status !== 'success') {
        throw new CommandError(`Failure! Error encountered moving ${what} ${from} to ${to}, with migration ID ${id}`, 2);
      }
      ctx.io.out(`Success! Finished moving ${what} ${from} to ${to}, with migration ID ${id}\n`);
    },
  );

  withClientOptions(group.command('list').description(`List the enabled ${what}s`)).action(async (opts: GlobalOptions) => {
    const res = await attempt(`Error listing ${what}s`, async () => (await clientFor(ctx, opts)).read(sys));
    const data = res.body.data as Record<string, { type: string; accessor: string; description: string }>;
    ctx.io.out(renderData(formatOf(opts), data, () => mountTable(data)));
  });
}

/** The columns `vault secrets list` prints. */
function mountTable(data: Record<string, { type: string; accessor: string; description: string }>): string {
  const rows = Object.entries(data).sort(([a], [b]) => a.localeCompare(b));
  const w = Math.max(4, ...rows.map(([p]) => p.length));
  const tw = Math.max(4, ...rows.map(([, e]) => e.type.length));
  const aw = Math.max(8, ...rows.map(([, e]) => e.accessor.length));
  const lines = [`${'Path'.padEnd(w)}    ${'Type'.padEnd(tw)}    ${'Accessor'.padEnd(aw)}    Description`, `${'----'.padEnd(w)}    ${'----'.padEnd(tw)}    ${'--------'.padEnd(aw)}    -----------`];
  for (const [p, e] of rows) lines.push(`${p.padEnd(w)}    ${e.type.padEnd(tw)}    ${e.accessor.padEnd(aw)}    ${e.description || 'n/a'}`);
  return `${lines.join('\n')}\n`;
}

export function registerMounts(program: Command, ctx: CliContext): void {
  registerTable(program, ctx, 'secrets');
  registerTable(program, ctx, 'auth');
}
