/** `plugin register|list|info|deregister|reload`, as vault's plugin commands. */
import type { Command } from 'commander';
import { CommandError, UsageError } from '../client.js';
import { attempt, clientFor, formatOf, printResponse, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { renderData } from '../output.js';

interface RegisterOptions extends GlobalOptions {
  readonly sha256?: string;
  readonly command?: string;
  readonly args?: string[];
  readonly env?: string[];
  readonly version?: string;
}

interface ListOptions extends GlobalOptions {
  readonly detailed?: boolean;
}

interface ReloadOptions extends GlobalOptions {
  readonly plugin?: string;
  readonly mounts?: string[];
  readonly scope?: string;
}

interface DetailedEntry {
  readonly name: string;
  readonly type: string;
  readonly version: string;
  readonly builtin: boolean;
  readonly deprecation_status?: string;
}

const TYPES = ['auth', 'secret', 'database'];

function checkType(type: string): void {
  if (!TYPES.includes(type)) throw new UsageError(`Invalid plugin type "${type}": must be one of auth, secret or database`);
}

/** Vault's -args and -env may repeat and take commas: `-args=a,b -args=c`. */
function spread(values: readonly string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(',')).filter((v) => v !== '');
}

/** Aligned columns, as vault's tableOutput prints them. */
function columns(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('    ');
  return `${[line(headers), line(headers.map((h) => '-'.repeat(h.length))), ...rows.map(line)].join('\n')}\n`;
}

export function registerPlugin(program: Command, ctx: CliContext): void {
  const group = program.command('plugin').description('Manage the plugin catalog and reload plugins');

  withClientOptions(group.command('register').description('Register an external plugin in the catalog').argument('<type>').argument('<name>'))
    .option('--sha256 <hex>', 'SHA-256 of the plugin module file (required)')
    .option('--command <file>', 'the module file, relative to plugin_directory (default: the name)')
    .option('--args <list...>', 'arguments the plugin receives')
    .option('--env <NAME=value...>', 'the whole environment the plugin\'s process sees (NODE_*, LD_*, OPENSSL_* and the like are refused)')
    .option('--version <semver>', 'the plugin version (v1.2.3)')
    .action(async (type: string, name: string, opts: RegisterOptions) => {
      checkType(type);
      if (!opts.sha256) throw new UsageError('A SHA-256 checksum must be provided (-sha256)');
      const client = await clientFor(ctx, opts);
      await attempt(`Error registering plugin ${name}`, () =>
        client.write(`sys/plugins/catalog/${type}/${name}`, {
          sha256: opts.sha256,
          command: opts.command ?? name,
          args: spread(opts.args),
          env: spread(opts.env),
          ...(opts.version ? { version: opts.version } : {}),
        }),
      );
      ctx.io.out(`Success! Registered plugin: ${name}\n`);
    });

  withClientOptions(group.command('list').description('List the plugins in the catalog').argument('[type]'))
    .option('--detailed', 'also print each plugin\'s deprecation status')
    .action(async (type: string | undefined, opts: ListOptions) => {
      if (type !== undefined) checkType(type);
      const client = await clientFor(ctx, opts);
      const res = await attempt('Error listing available plugins', () => client.read('sys/plugins/catalog'));
      const detailed = ((res.body.data as { detailed?: DetailedEntry[] }).detailed ?? []).filter((p) => type === undefined || p.type === type);
      ctx.io.out(
        renderData(formatOf(opts), detailed, () =>
          opts.detailed
            ? columns(['Name', 'Type', 'Version', 'Deprecation Status'], detailed.map((p) => [p.name, p.type, p.version, p.deprecation_status ?? 'n/a']))
            : columns(['Name', 'Type', 'Version'], detailed.map((p) => [p.name, p.type, p.version])),
        ),
      );
    });

  withClientOptions(group.command('info').description('Read a plugin\'s catalog entry').argument('<type>').argument('<name>'))
    .option('--version <semver>', 'the version to read (default: the built-in, else the unversioned one)')
    .action(async (type: string, name: string, opts: RegisterOptions) => {
      checkType(type);
      const client = await clientFor(ctx, opts);
      const res = await attempt(`Error reading plugin named ${name}`, () =>
        client.readOptional(`sys/plugins/catalog/${type}/${name}`, opts.version ? { version: opts.version } : undefined),
      );
      if (!res) throw new CommandError(`No value found for plugin "${name}"`, 2);
      printResponse(ctx, opts, res.body);
    });

  withClientOptions(group.command('deregister').description('Remove a plugin version from the catalog').argument('<type>').argument('<name>'))
    .option('--version <semver>', 'the version to remove (default: the unversioned entry)')
    .action(async (type: string, name: string, opts: RegisterOptions) => {
      checkType(type);
      const client = await clientFor(ctx, opts);
      const query = opts.version ? `?version=${encodeURIComponent(opts.version)}` : '';
      await attempt(`Error deregistering plugin named ${name}`, () => client.delete(`sys/plugins/catalog/${type}/${name}${query}`));
      ctx.io.out(`Success! Deregistered plugin (if it was registered): ${name}\n`);
    });

  withClientOptions(group.command('reload').description('Reload the backends of a plugin or of mounts'))
    .option('--plugin <name>', 'reload every mount of this plugin')
    .option('--mounts <paths...>', 'reload these mounts')
    .option('--scope <scope>', 'empty or "global"')
    .action(async (opts: ReloadOptions) => {
      const mounts = spread(opts.mounts);
      if ((opts.plugin ? 1 : 0) + (mounts.length > 0 ? 1 : 0) !== 1) throw new UsageError('Must specify exactly one of -plugin or -mounts');
      if (opts.scope !== undefined && opts.scope !== '' && opts.scope !== 'global') throw new UsageError('Invalid reload scope: must be empty or "global"');
      const client = await clientFor(ctx, opts);
      await attempt(`Error reloading ${opts.plugin ? `plugin ${opts.plugin}` : 'mounts'}`, () =>
        client.write('sys/plugins/reload/backend', {
          ...(opts.plugin ? { plugin: opts.plugin } : { mounts }),
          ...(opts.scope ? { scope: opts.scope } : {}),
        }),
      );
      ctx.io.out(opts.plugin ? `Success! Reloaded plugin: ${opts.plugin}\n` : `Success! Reloaded mounts: [${mounts.join(' ')}]\n`);
    });
}
