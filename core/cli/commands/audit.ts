/**
 * `audit enable|disable|list`, as the vault CLI has them. The server decides what enable and
 * disable may do (devices are declared in its configuration file); its refusal is printed as is.
 */
import type { Command } from 'commander';
import { attempt, clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { CommandError, UsageError } from '../client.js';
import { parseKeyValues } from '../kv-args.js';
import { renderData } from '../output.js';

interface EnableOptions extends GlobalOptions {
  readonly path?: string;
  readonly description?: string;
  readonly local?: boolean;
}

interface ListOptions extends GlobalOptions {
  readonly detailed?: boolean;
}

interface AuditDevice {
  readonly type: string;
  readonly description: string;
  readonly options: Record<string, string> | null;
  readonly local: boolean;
  readonly path: string;
}

export function registerAudit(program: Command, ctx: CliContext): void {
  const group = program.command('audit').description('Manage audit devices');

  withClientOptions(
    group
      .command('enable')
      .description(
        'Enable an audit device (at -path, default: its type), with its options as key=value; the server refuses it unless its ' +
          'configuration sets unsafe_allow_api_audit_creation (devices are declared in the configuration file)',
      )
      .argument('<type>', 'file, socket or syslog')
      .argument('[options...]', 'device options, key=value'),
  )
    .option('--path <path>', 'where to enable it')
    .option('--description <text>', 'a description')
    .option('--local', 'mark the device local (accepted; every device is local to its cluster)')
    .action(async (type: string, args: string[], opts: EnableOptions) => {
      const path = `${(opts.path ?? type).trim().replace(/^\/+|\/+$/g, '')}/`;
      let options: Record<string, unknown>;
      try {
        options = await parseKeyValues(args, ctx.io);
      } catch (err) {
        if (err instanceof UsageError) throw new CommandError(`Failed to parse K=V data: ${err.message}`, 1);
        throw err;
      }
      const client = await clientFor(ctx, opts);
      await attempt('Error enabling audit device', () =>
        client.write(`sys/audit/${path}`, {
          type,
          ...(opts.description !== undefined ? { description: opts.description } : {}),
          options,
          local: opts.local === true,
        }),
      );
      ctx.io.out(`Success! Enabled the ${type} audit device at: ${path}\n`);
    });

  withClientOptions(group.command('disable').description('Disable an audit device created through the API; its salt is deleted').argument('<path>')).action(
    async (raw: string, opts: GlobalOptions) => {
      const path = `${raw.trim().replace(/^\/+|\/+$/g, '')}/`;
      await attempt('Error disabling audit device', async () => (await clientFor(ctx, opts)).delete(`sys/audit/${path}`));
      ctx.io.out(`Success! Disabled audit device (if it was enabled) at: ${path}\n`);
    },
  );

  withClientOptions(group.command('list').description('List the enabled audit devices'))
    .option('--detailed', 'also print each device\'s replication and options')
    .action(async (opts: ListOptions) => {
      const res = await attempt('Error listing audits', async () => (await clientFor(ctx, opts)).read('sys/audit'));
      const devices = (res.body.data ?? {}) as Record<string, AuditDevice>;
      const format = formatOf(opts);
      // Like vault: with nothing enabled the table form says so and exits 2; JSON and YAML print `{}`.
      if (format === 'table' && Object.keys(devices).length === 0) {
        ctx.io.out('No audit devices are enabled.\n');
        throw new CommandError('', 2);
      }
      ctx.io.out(renderData(format, devices, () => auditTable(devices, opts.detailed === true)));
    });
}

/** The columns `vault audit list` prints; with -detailed also Replication and Options (`k=v` pairs). */
function auditTable(devices: Record<string, AuditDevice>, detailed: boolean): string {
  const header = detailed ? ['Path', 'Type', 'Description', 'Replication', 'Options'] : ['Path', 'Type', 'Description'];
  const rows = Object.keys(devices)
    .sort()
    .map((path) => {
      const d = devices[path]!;
      const cells = [path, d.type, d.description || 'n/a'];
      if (detailed) {
        const options = Object.entries(d.options ?? {})
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => `${k}=${v}`)
          .join(' ');
        cells.push(d.local ? 'local' : 'replicated', options || 'n/a');
      }
      return cells;
    });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('    ');
  return `${[line(header), line(header.map((h) => '-'.repeat(h.length))), ...rows.map(line)].join('\n')}\n`;
}
