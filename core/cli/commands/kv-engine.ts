/**
 * `kv get|put|patch|list|delete|undelete|destroy|metadata get|put|patch|delete`: the key/value
 * engine's commands, worded, shaped and coded as `vault kv`'s. Each first asks the server which
 * mount serves the path and whether it is kv version 1 or 2 (`sys/internal/ui/mounts/<path>`, as
 * the vault CLI asks it), then calls version 2's `data/`, `metadata/`, … paths or version 1's plain
 * path.
 */
import path from 'node:path/posix';
import type { Command } from 'commander';
import { CommandError, UsageError, type ApiClient } from '../client.js';
import { attempt, clientFor, commandGroup, formatOf, printResponse, sanitizePath, withClientOptions, withFieldOption, type CliContext, type GlobalOptions } from '../context.js';
import { parseKeyValues } from '../kv-args.js';
import { renderList, table, warningsOf } from '../output.js';

interface KvOptions extends GlobalOptions {
  /** The mount path, when given apart from the secret's path (`-mount=secret foo`). */
  readonly mount?: string;
}

/** Where a kv secret lives: its mount (with a trailing slash), the engine version and the path as given. */
interface KvTarget {
  readonly client: ApiClient;
  readonly mount: string;
  readonly version: 1 | 2;
  /** The path as the user named it (mount included). */
  readonly given: string;
}

async function target(ctx: CliContext, opts: KvOptions, rawPath: string): Promise<KvTarget> {
  const given = opts.mount ? path.join(sanitizePath(opts.mount), sanitizePath(rawPath)) : sanitizePath(rawPath);
  const client = await clientFor(ctx, opts);
  const res = await attempt(`Error determining if path ${given} is a kv mount`, () => client.read(`sys/internal/ui/mounts/${given}`));
  const data = (res.body?.data ?? {}) as { path?: string; options?: Record<string, string> | null };
  const mount = data.path ?? '';
  return { client, mount, version: data.options?.version === '2' ? 2 : 1, given };
}

/** The API path of a version 2 operation (`data`, `metadata`, …) on the target, as vault's addPrefixToKVPath builds it. */
function apiPath(t: KvTarget, prefix: string): string {
  const mount = t.mount.replace(/\/+$/, '');
  const rest = t.given === mount ? '' : t.given.startsWith(`${mount}/`) ? t.given.slice(mount.length + 1) : t.given;
  return path.join(mount, prefix, rest);
}

/** Vault's section header: `title` between runs of "=" as wide as `width` allows (two on each side at least). */
function header(title: string, width: number): string {
  let signs = width - (title.length + 2);
  if (signs <= 0) signs = 4;
  if (signs % 2 !== 0) signs += 1;
  return `${'='.repeat(signs / 2)} ${title} ${'='.repeat(signs / 2)}`;
}

/** A map as a titled key/value table, the header as wide as the widest key's row. */
function section(title: string, data: Record<string, unknown>): string {
  const width = Math.max(0, ...Object.keys(data).map((k) => k.length)) + 4 + 5;
  const rows = Object.keys(data)
    .sort()
    .map((k) => [k, data[k]] as const);
  return `${header(title, width)}\n${table(rows)}`;
}

function pathSection(title: string, apiTarget: string): string {
  return `${header(title, apiTarget.length)}\n${apiTarget}\n\n`;
}

/** Prints a version 2 answer: JSON/YAML whole, -field from the secret's data, or the sections vault prints. */
function printVersioned(ctx: CliContext, opts: GlobalOptions, body: { data?: Record<string, unknown> } | undefined, sections: () => string): void {
  if (opts.field || formatOf(opts) !== 'table') {
    printResponse(ctx, opts, body);
    return;
  }
  const warnings = warningsOf(body);
  if (warnings) ctx.io.err(warnings);
  ctx.io.out(sections());
}

/** `-versions=1,2` (repeatable) as vault reads it. */
function versionList(raw: readonly string[] | undefined): string[] {
  return (raw ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerKvEngine(program: Command, ctx: CliContext): void {
  const kv = commandGroup(program, 'kv', 'Interact with the key/value secrets engine (version 1 or 2)');
  const mountOption = (command: Command) => command.option('--mount <path>', 'the mount path, when the secret path is given without it');

  withFieldOption(mountOption(withClientOptions(kv.command('get').description('Read a secret (its current version, or -version)').argument('<path>'))))
    .option('--version <n>', 'the version to read (version 2)')
    .action(async (rawPath: string, opts: KvOptions & { version?: string }) => {
      const t = await target(ctx, opts, rawPath);
      const read = t.version === 2 ? apiPath(t, 'data') : t.given;
      const query: Record<string, string> = t.version === 2 && opts.version ? { version: opts.version } : {};
      const res = await attempt(`Error reading ${read}`, () => t.client.readOptional(read, query));
      if (!res) throw new CommandError(`No value found at ${read}`, 2);
      if (t.version === 1) {
        printResponse(ctx, opts, res.body);
        return;
      }
      const metadata = res.body?.data?.metadata as Record<string, unknown> | null | undefined;
      const data = res.body?.data?.data as Record<string, unknown> | null | undefined;
      if (opts.field) {
        // -field reads the secret's own data, as vault's kv get does.
        printResponse(ctx, opts, { ...res.body, data: data ?? {} });
        return;
      }
      printVersioned(ctx, opts, res.body, () => {
        let out = pathSection('Secret Path', read);
        if (metadata) out += `${section('Metadata', metadata)}\n`;
        if (data) out += section('Data', data);
        return out;
      });
    });

  withFieldOption(mountOption(withClientOptions(kv.command('put').description('Write a secret (a new version, on version 2)').argument('<path>').argument('[data...]'))))
    .option('--cas <n>', 'check-and-set: write only if the current version is this (0: only if the secret does not exist)')
    .action(async (rawPath: string, args: string[], opts: KvOptions & { cas?: string }) => {
      const data = await parseKeyValues(args, ctx.io);
      if (Object.keys(data).length === 0) throw new UsageError('Must supply data');
      const t = await target(ctx, opts, rawPath);
      if (t.version === 1) {
        await attempt(`Error writing data to ${t.given}`, () => t.client.write(t.given, data));
        if (formatOf(opts) === 'table') ctx.io.out(`Success! Data written to: ${t.given}\n`);
        return;
      }
      const write = apiPath(t, 'data');
      const options = opts.cas !== undefined ? { cas: Number(opts.cas) } : {};
      const res = await attempt(`Error writing data to ${write}`, () => t.client.write(write, { data, options }));
      printVersioned(ctx, opts, res.body, () => `${pathSection('Secret Path', write)}${section('Metadata', res.body?.data ?? {})}`);
    });

  withFieldOption(mountOption(withClientOptions(kv.command('patch').description('Change some keys of a secret (a JSON merge patch, version 2)').argument('<path>').argument('[data...]'))))
    .option('--cas <n>', 'check-and-set: patch only if the current version is this')
    .action(async (rawPath: string, args: string[], opts: KvOptions & { cas?: string }) => {
      const data = await parseKeyValues(args, ctx.io);
      if (Object.keys(data).length === 0) throw new UsageError('Must supply data');
      const t = await target(ctx, opts, rawPath);
      if (t.version !== 2) throw new CommandError('K/V engine mount must be version 2 for patch support', 2);
      const write = apiPath(t, 'data');
      const options = opts.cas !== undefined ? { cas: Number(opts.cas) } : {};
      const res = await attempt(`Error writing data to ${write}`, () => t.client.patch(write, { data, options }));
      printVersioned(ctx, opts, res.body, () => `${pathSection('Secret Path', write)}${section('Metadata', res.body?.data ?? {})}`);
    });

  mountOption(withClientOptions(kv.command('list').description('List the secrets under a folder').argument('<path>'))).action(async (rawPath: string, opts: KvOptions) => {
    const t = await target(ctx, opts, rawPath);
    const list = t.version === 2 ? apiPath(t, 'metadata') : t.given;
    const res = await attempt(`Error listing ${list}`, () => t.client.listOptional(list));
    const keys = res?.body?.data?.keys;
    if (!Array.isArray(keys)) throw new CommandError(`No value found at ${list}`, 2);
    ctx.io.out(renderList(formatOf(opts), res!.body));
  });

  mountOption(withClientOptions(kv.command('delete').description('Delete a secret (on version 2: soft-delete its current version, or -versions)').argument('<path>')))
    .option('--versions <list>', 'versions to delete (version 2), comma-separated; repeatable', collect)
    .action(async (rawPath: string, opts: KvOptions & { versions?: string[] }) => {
      const t = await target(ctx, opts, rawPath);
      const versions = versionList(opts.versions);
      if (t.version === 2 && versions.length > 0) {
        const remove = apiPath(t, 'delete');
        await attempt(`Error deleting ${t.given}`, () => t.client.write(remove, { versions }));
      } else {
        const remove = t.version === 2 ? apiPath(t, 'data') : t.given;
        await attempt(`Error deleting ${t.given}`, () => t.client.delete(remove));
      }
      ctx.io.out(`Success! Data deleted (if it existed) at: ${t.given}\n`);
    });

  for (const [name, verb] of [
    ['undelete', 'Restore soft-deleted versions of a secret'],
    ['destroy', 'Remove versions of a secret for good'],
  ] as const) {
    mountOption(withClientOptions(kv.command(name).description(`${verb} (version 2)`).argument('<path>')))
      .option('--versions <list>', `versions to ${name}, comma-separated; repeatable`, collect)
      .action(async (rawPath: string, opts: KvOptions & { versions?: string[] }) => {
        const versions = versionList(opts.versions);
        if (versions.length === 0) throw new UsageError(`No versions provided, use the "-versions" flag to specify the version to ${name}.`);
        const t = await target(ctx, opts, rawPath);
        if (t.version !== 2) throw new CommandError(`${name === 'undelete' ? 'Undelete' : 'Destroy'} not supported on KV Version 1`, 1);
        const write = apiPath(t, name);
        await attempt(`Error writing data to ${write}`, () => t.client.write(write, { versions }));
        ctx.io.out(`Success! Data written to: ${write}\n`);
      });
  }

  registerMetadata(kv, ctx, mountOption);
}

interface MetadataOptions extends KvOptions {
  readonly maxVersions?: string;
  readonly casRequired?: string | boolean;
  readonly deleteVersionAfter?: string;
  readonly customMetadata?: string[];
}

function registerMetadata(kv: Command, ctx: CliContext, mountOption: (c: Command) => Command): void {
  const metadata = kv.command('metadata').description("Read and change a secret's metadata (version 2)");
  const metadataTarget = async (opts: KvOptions, rawPath: string) => {
    const t = await target(ctx, opts, rawPath);
    if (t.version !== 2) throw new CommandError('Metadata not supported on KV Version 1', 1);
    return { t, api: apiPath(t, 'metadata') };
  };

  mountOption(withClientOptions(metadata.command('get').description("Read a secret's metadata and versions").argument('<path>'))).action(async (rawPath: string, opts: KvOptions) => {
    const { t, api } = await metadataTarget(opts, rawPath);
    const res = await attempt(`Error reading ${api}`, () => t.client.readOptional(api));
    if (!res) throw new CommandError(`No value found at ${api}`, 2);
    const data = { ...(res.body?.data ?? {}) } as Record<string, unknown>;
    printVersioned(ctx, opts, res.body, () => {
      const versions = (data.versions ?? {}) as Record<string, Record<string, unknown>>;
      delete data.versions;
      let out = `${pathSection('Metadata Path', api)}${section('Metadata', data)}`;
      for (const version of Object.keys(versions).sort((a, b) => Number(a) - Number(b))) out += `\n${section(`Version ${version}`, versions[version]!)}`;
      return out;
    });
  });

  const settings = (command: Command) =>
    command
      .option('--max-versions <n>', 'how many versions the key keeps (0: the mount setting)')
      .option('--cas-required [bool]', 'refuse writes to the key without -cas')
      .option('--delete-version-after <duration>', 'delete each new version this long after its write')
      .option('--custom-metadata <k=v>', 'a custom metadata pair; repeatable', collect);

  const body = async (opts: MetadataOptions, isPatch: boolean) => {
    const out: Record<string, unknown> = {};
    if (opts.maxVersions !== undefined) out.max_versions = opts.maxVersions;
    if (opts.casRequired !== undefined) out.cas_required = opts.casRequired === true ? true : opts.casRequired;
    if (opts.deleteVersionAfter !== undefined) out.delete_version_after = opts.deleteVersionAfter;
    if (opts.customMetadata) {
      const pairs = await parseKeyValues(opts.customMetadata, ctx.io);
      // On patch an empty value removes the key (a merge patch's null), as vault's kv metadata patch does.
      out.custom_metadata = isPatch ? Object.fromEntries(Object.entries(pairs).map(([k, v]) => [k, v === '' ? null : v])) : pairs;
    }
    return out;
  };

  settings(mountOption(withClientOptions(metadata.command('put').description("Set a secret's settings and custom metadata").argument('<path>')))).action(
    async (rawPath: string, opts: MetadataOptions) => {
      const { t, api } = await metadataTarget(opts, rawPath);
      const payload = await body(opts, false);
      await attempt(`Error writing data to ${api}`, () => t.client.write(api, payload));
      ctx.io.out(`Success! Data written to: ${api}\n`);
    },
  );

  settings(mountOption(withClientOptions(metadata.command('patch').description("Change some of a secret's settings; custom metadata is merged").argument('<path>')))).action(
    async (rawPath: string, opts: MetadataOptions) => {
      const { t, api } = await metadataTarget(opts, rawPath);
      const payload = await body(opts, true);
      await attempt(`Error patching ${api}`, () => t.client.patch(api, payload));
      ctx.io.out(`Success! Data written to: ${api}\n`);
    },
  );

  mountOption(withClientOptions(metadata.command('delete').description('Delete a secret with every version and its metadata').argument('<path>'))).action(
    async (rawPath: string, opts: KvOptions) => {
      const { t, api } = await metadataTarget(opts, rawPath);
      await attempt(`Error deleting ${api}`, () => t.client.delete(api));
      ctx.io.out(`Success! Data deleted (if it existed) at: ${api}\n`);
    },
  );
}
