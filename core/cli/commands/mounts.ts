/** `secrets enable|disable|list|move` and `auth enable|disable|list|move`. */
import type { Command } from 'commander';
import { CommandError, UsageError } from '../client.js';
import { attempt, clientFor, formatOf, withClientOptions, type CliContext, type GlobalOptions } from '../context.js';
import { parseKeyValues } from '../kv-args.js';
import { renderData } from '../output.js';

interface EnableOptions extends GlobalOptions {
  readonly path?: string;
  readonly description?: string;
  readonly defaultLeaseTtl?: string;
  readonly maxLeaseTtl?: string;
  readonly options?: string[];
  /** Shorthand for options version=N (kv: 1 or 2), as vault's -version. */
  readonly version?: string;
  readonly pluginVersion?: string;
}

interface TuneOptions extends GlobalOptions {
  readonly defaultLeaseTtl?: string;
  readonly maxLeaseTtl?: string;
  readonly description?: string;
  readonly auditNonHmacRequestKeys: string[];
  readonly auditNonHmacResponseKeys: string[];
  readonly listingVisibility?: string;
  readonly passthroughRequestHeaders: string[];
  readonly options: string[];
  readonly version?: string;
  readonly pluginVersion?: string;
  readonly tokenType?: string;
}

/** A repeatable flag, each value also split on commas, as vault's list flags take them. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(',').map((v) => v.trim()).filter((v) => v !== '')];
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
    .option('--version <n>', 'the engine version to run, where an engine has several (kv: 1 or 2); sets options version=N')
    .option('--plugin-version <version>', 'the catalog version of the plugin to run')
    .action(async (type: string, opts: EnableOptions) => {
      const path = (opts.path ?? type).replace(/^\/+|\/+$/g, '');
      const given = opts.options ? await parseKeyValues(opts.options, ctx.io) : undefined;
      const options = opts.version !== undefined ? { ...given, version: opts.version } : given;
      const client = await clientFor(ctx, opts);
      await attempt(`Error enabling ${type}`, () => client.write(`${sys}/${path}`, {
        type,
        ...(opts.description !== undefined ? { description: opts.description } : {}),
        config: {
          ...(opts.defaultLeaseTtl ? { default_lease_ttl: opts.defaultLeaseTtl } : {}),
          ...(opts.maxLeaseTtl ? { max_lease_ttl: opts.maxLeaseTtl } : {}),
        },
        ...(options ? { options } : {}),
        ...(opts.pluginVersion ? { plugin_version: opts.pluginVersion } : {}),
      }));
      ctx.io.out(`Success! Enabled the ${type} ${what} at: ${name === 'auth' ? 'auth/' : ''}${path}/\n`);
    });

  const tune = withClientOptions(group.command('tune').description(`Tune a ${what}: change only the settings given`).argument('<path>'))
    .option('--default-lease-ttl <duration>', 'default lease TTL of the mount ("system" or 0: the server\'s)')
    .option('--max-lease-ttl <duration>', 'maximum lease TTL of the mount ("system" or 0: the server\'s)')
    .option('--description <text>', 'a new description')
    .option('--audit-non-hmac-request-keys <keys>', 'request keys the audit log records without HMAC (comma-separated or repeated)', collect, [] as string[])
    .option('--audit-non-hmac-response-keys <keys>', 'response keys the audit log records without HMAC (comma-separated or repeated)', collect, [] as string[])
    .option('--listing-visibility <value>', 'visibility in the unauthenticated mount listing (sys/internal/ui/mounts): unauth lists the mount for the UI\'s sign-in page; "" or hidden does not')
    .option('--passthrough-request-headers <headers>', 'request headers passed to the backend (comma-separated or repeated)', collect, [] as string[])
    .option('--options <k=v>', 'plugin option to set, merged into the existing ones (repeatable)', (value: string, previous: string[]) => [...previous, value], [] as string[])
    .option('--version <n>', 'the engine version to run, where an engine has several (kv: 1 to 2); sets options version=N')
    .option('--plugin-version <version>', 'the catalog version of the plugin to run, from its next reload');
  if (name === 'auth') tune.option('--token-type <type>', 'the type of token logins issue: default-service, default-batch, service or batch');
  tune.action(async (path: string, opts: TuneOptions) => {
      const clean = path.replace(/^\/+|\/+$/g, '').replace(/^auth\//, name === 'auth' ? '' : 'auth/');
      const given = opts.options.length > 0 ? await parseKeyValues(opts.options, ctx.io) : undefined;
      const options = opts.version !== undefined ? { ...given, version: opts.version } : given;
      const body: Record<string, unknown> = {
        ...(opts.defaultLeaseTtl !== undefined ? { default_lease_ttl: opts.defaultLeaseTtl } : {}),
        ...(opts.maxLeaseTtl !== undefined ? { max_lease_ttl: opts.maxLeaseTtl } : {}),
        ...(opts.description !== undefined ? { description: opts.description } : {}),
        ...(opts.auditNonHmacRequestKeys.length > 0 ? { audit_non_hmac_request_keys: opts.auditNonHmacRequestKeys } : {}),
        ...(opts.auditNonHmacResponseKeys.length > 0 ? { audit_non_hmac_response_keys: opts.auditNonHmacResponseKeys } : {}),
        ...(opts.listingVisibility !== undefined ? { listing_visibility: opts.listingVisibility } : {}),
        ...(opts.passthroughRequestHeaders.length > 0 ? { passthrough_request_headers: opts.passthroughRequestHeaders } : {}),
        ...(options ? { options } : {}),
        ...(opts.pluginVersion !== undefined ? { plugin_version: opts.pluginVersion } : {}),
        ...(opts.tokenType !== undefined ? { token_type: opts.tokenType } : {}),
      };
      if (Object.keys(body).length === 0) throw new UsageError(`nothing to tune: give at least one setting (keywarden ${name} tune -help lists them)`);
      await attempt(`Error tuning ${what} ${clean}`, async () => (await clientFor(ctx, opts)).write(`${sys}/${clean}/tune`, body));
      ctx.io.out(`Success! Tuned the ${what} at: ${name === 'auth' ? 'auth/' : ''}${clean}/\n`);
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
