/**
 * `sys/mounts[/:path[/tune]]` (secrets engines) and `sys/auth[/:path[/tune]]` (auth methods): one
 * definition for both tables, which differ only in their prefix, wording and sudo.
 */
import { BadRequestError } from '../../errors.js';
import { definePath, type AnyPathDefinition, type FieldValues, type LogicalRequest } from '../../framework/index.js';
import { defaultMountConfig, type MountTableName } from '../../mounts/mount-entry.js';
import type { SystemDeps } from '../services.js';
import { checkLeaseTtls, mountInfo, parseMountConfig, parseOptions, tuneInfo, MOUNT_CONFIG_FIELDS, REFUSED_TUNE_FIELDS, USER_LOCKOUT_TUNE_FIELD } from './mount-config.js';
import { parseLockoutTune } from '../../auth/lockout/settings.js';

interface TableWording {
  readonly prefix: 'mounts' | 'auth';
  readonly what: string;
  /** Enabling, disabling and tuning auth methods is root-protected in Vault; secrets engines are not. */
  readonly sudo: boolean;
}

const WORDING: Record<MountTableName, TableWording> = {
  secret: { prefix: 'mounts', what: 'secrets engine', sudo: false },
  auth: { prefix: 'auth', what: 'auth method', sudo: true },
};

/** Mount types Vault takes as another type with an option set. */
const KV_ALIASES: Readonly<Record<string, string>> = { 'kv-v1': '1', 'kv-v2': '2' };

const pathField = (what: string) => ({ type: 'string', description: `The path of the ${what}.`, required: true }) as const;

export function mountTablePaths(services: SystemDeps, table: MountTableName): AnyPathDefinition[] {
  const w = WORDING[table];
  const defaults = { defaultLeaseTtl: services.defaultLeaseTtl, maxLeaseTtl: services.maxLeaseTtl };

  const list = definePath({
    pattern: w.prefix,
    fields: {},
    operations: {
      read: {
        summary: `List the enabled ${w.what}s.`,
        handler: async () => {
          const data: Record<string, unknown> = {};
          const mounts = services.unsealed.mounts;
          for (const entry of mounts.entries(table)) data[entry.path] = mountInfo(entry, mounts.live(table, entry.path).running);
          return { data };
        },
      },
    },
    synopsis: `List the enabled ${w.what}s.`,
    description: `Every ${w.what} keyed by its path (with a trailing slash), with its type, accessor, UUID and config.`,
  });

  const single = definePath({
    pattern: `${w.prefix}/:path+`,
    fields: {
      path: pathField(w.what),
      type: { type: 'string', description: `The type of the ${w.what} (the plugin name).` },
      description: { type: 'string', description: 'A human-friendly description.' },
      config: { type: 'map', description: `Configuration: ${Object.keys(MOUNT_CONFIG_FIELDS).join(', ')}.` },
      options: { type: 'map', description: 'Plugin-specific options (string values).' },
      local: {
        type: 'bool',
        description: 'Whether the mount is left out of replication: there is no replication here, so every mount is local either way.',
        default: false,
      },
      external_entropy_access: { type: 'bool', description: 'Not supported (Vault Enterprise): must be false.', default: false },
      plugin_name: { type: 'string', description: 'Deprecated alias of type.', deprecated: true },
      plugin_version: { type: 'string', description: 'The catalog version of the plugin to run (sys/plugins/catalog); omitted, the unversioned, the only registered or the built-in one.' },
    },
    refusedFields: {
      seal_wrap: 'seal wrapping is a Vault Enterprise feature; values here are encrypted by the barrier only',
    },
    sudo: w.sudo,
    operations: {
      read: {
        summary: `Read one ${w.what}.`,
        handler: async (_req, input) => {
          const live = services.unsealed.mounts.live(table, input.path);
          return { data: mountInfo(live.entry, live.running) };
        },
      },
      update: {
        summary: `Enable a ${w.what} at the path.`,
        handler: async (_req, input) => {
          const given = input.type ?? input.plugin_name;
          if (!given) throw new BadRequestError('missing required field "type"');
          // Vault's aliases: kv-v1 and kv-v2 are the kv engine with options.version set.
          const alias = table === 'secret' && Object.hasOwn(KV_ALIASES, given) ? KV_ALIASES[given] : undefined;
          const type = alias ? 'kv' : given;
          if (input.external_entropy_access) throw new BadRequestError('external_entropy_access is not supported');
          const { config, pluginVersion } = parseMountConfig(input.config, table);
          if (input.plugin_version && pluginVersion && input.plugin_version !== pluginVersion) {
            throw new BadRequestError('plugin_version and config.plugin_version differ: set one');
          }
          const version = input.plugin_version || pluginVersion;
          const entryConfig = { ...defaultMountConfig(), ...config };
          checkLeaseTtls(entryConfig, services.maxLeaseTtl);
          await services.unsealed.mounts.enable(table, input.path, {
            type,
            description: input.description ?? '',
            config,
            options: alias ? { ...parseOptions(input.options), version: alias } : parseOptions(input.options),
            local: input.local,
            ...(version ? { plugin_version: version } : {}),
          });
          return null;
        },
      },
      delete: {
        summary: `Disable the ${w.what} and delete all its data.`,
        handler: async (_req, input) => {
          await services.unsealed.mounts.disable(table, input.path);
          return null;
        },
      },
    },
    synopsis: `Enable, read or disable a ${w.what}.`,
    description:
      `POST enables a ${w.what} of the given type at the path (409 if the path or a parent or child of it is in use). ` +
      'DELETE disables it and deletes everything it stored.',
  });

  const tuneFields = {
    ...MOUNT_CONFIG_FIELDS,
    path: pathField(w.what),
    description: { type: 'string', description: 'A new description.' },
    options: { type: 'map', description: 'Options to set (merged into the existing ones).' },
  } as const;
  type TuneInput = FieldValues<typeof tuneFields>;
  const readTune = {
    summary: `Read the tunable settings of a ${w.what}.`,
    handler: async (_req: LogicalRequest, input: { path: string }) => {
      const live = services.unsealed.mounts.live(table, input.path);
      return { data: tuneInfo(live.entry, defaults) };
    },
  };
  const writeTune = async (input: TuneInput, lockout: Record<string, unknown> | undefined) => {
    const { path, description, options, plugin_version: version, ...rest } = input;
    const { config } = parseMountConfig(rest, table);
    const mounts = services.unsealed.mounts;
    const live = mounts.live(table, path);
    // As in Vault, an empty user_lockout_config changes nothing.
    const lockoutTune = lockout && Object.keys(lockout).length > 0 ? lockout : undefined;
    if (lockoutTune && !live.backend?.describePaths().some((p) => p.userLockout)) {
      throw new BadRequestError(`tuning of user lockout configuration for auth type "${live.entry.type}" not allowed: it has no login under user lockout`);
    }
    // The version must be in the catalog now; the mount runs it from its next reload on, as in Vault.
    const pinned = version ? await mounts.checkPluginVersion(table, live.entry.type, version) : undefined;
    await mounts.tune(table, path, (entry) => {
      const next = { ...entry.config, ...config };
      if (lockoutTune) next.user_lockout_config = parseLockoutTune(lockoutTune, entry.config.user_lockout_config);
      checkLeaseTtls(next, services.maxLeaseTtl);
      return {
        ...entry,
        config: next,
        ...(typeof description === 'string' ? { description } : {}),
        ...(options ? { options: { ...(entry.options ?? {}), ...parseOptions(options) } } : {}),
        ...(pinned !== undefined ? { plugin_version: pinned } : {}),
      };
    });
    return null;
  };
  const tuneSpec = {
    pattern: `${w.prefix}/:path+/tune`,
    refusedFields: REFUSED_TUNE_FIELDS[table],
    sudo: w.sudo,
    synopsis: `Tune the settings of a ${w.what}.`,
    description: 'TTLs are effective values on read (the system value where the mount sets none); a write changes only the fields given.',
  };
  const tune =
    table === 'auth'
      ? definePath({
          ...tuneSpec,
          fields: { ...tuneFields, user_lockout_config: USER_LOCKOUT_TUNE_FIELD },
          operations: {
            read: readTune,
            update: { summary: `Tune a ${w.what}.`, handler: async (_req, { user_lockout_config, ...input }) => writeTune(input, user_lockout_config) },
          },
        })
      : definePath({
          ...tuneSpec,
          fields: tuneFields,
          operations: { read: readTune, update: { summary: `Tune a ${w.what}.`, handler: async (_req, input) => writeTune(input, undefined) } },
        });

  return [list, single, tune];
}

