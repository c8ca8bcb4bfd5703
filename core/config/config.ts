/**
 * The server configuration, Vault's way: `-config` names an HCL or JSON file, or a directory whose
 * `*.hcl` and `*.json` files are merged in lexical order. Each file is read by config-file.ts, which
 * refuses any key it does not know with the file, line and key; this module merges the files,
 * fills in defaults and checks what spans files (a storage block, the TTL pair, HA's api_addr, the
 * audit stanzas). What the merged configuration holds is described in settings.ts.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { HclSyntaxError, parseHclDocument, type HclSyntax } from '../hcl.js';
import { readConfigDocument, type FileSettings } from './config-file.js';
import { ConfigError, fail, type Setting, type SourceFile } from './config-values.js';
import { readAuditStanzas } from './audit-stanza.js';
import { readPluginStanzas, type PluginBlock } from './plugin-stanza.js';
import type { ListenerConfig, PluginSettings, SelfInitBlock, ServerConfig, StorageConfig } from './settings.js';
import { readUserLockoutStanzas, type UserLockoutStanza } from './user-lockout-stanza.js';
import { checkInitializeNames, readInitializeStanzas } from './initialize-stanza.js';
import type { UserLockoutStanzas } from '../auth/lockout/settings.js';
import { checkDeviceOptions } from '../audit/device-types.js';
import { BadRequestError } from '../errors.js';
import { DEFAULT_AUDIT_CONFIG, DEFAULT_AUDIT_RULES, normalizeAllowedAddress, type AuditConfig, type DeclaredAuditDevice } from '../audit/rules.js';

export { ConfigError } from './config-values.js';
export { splitAddress } from './listener-stanza.js';

export type { CloudAuthConfig, ListenerConfig, ListenerTls, LogLevel, ServerConfig, StorageConfig, TelemetryConfig } from './settings.js';
export { DEFAULT_PROMETHEUS_RETENTION_MS, DEFAULT_TELEMETRY } from './settings.js';

/** One file's settings and its `audit`, `plugin`, `user_lockout` and `initialize` stanzas. */
interface FileContents extends FileSettings {
  readonly auditDevices: readonly Setting<DeclaredAuditDevice>[];
  readonly pluginBlocks: readonly Setting<PluginBlock>[];
  readonly userLockouts: readonly Setting<UserLockoutStanza>[];
  readonly initializeBlocks: readonly Setting<SelfInitBlock>[];
}

const DEFAULT_TTL = 768 * 3600;

/**
 * Loads `-config` paths in order, each a file or a directory, and merges everything they hold.
 * @throws ConfigError naming the file, line and key of the first problem.
 */
export function loadConfig(paths: string | readonly string[]): ServerConfig {
  const list = typeof paths === 'string' ? [paths] : paths;
  const settings = list.flatMap(configFilesAt).map(readConfigFile);
  return finishConfig(mergeSettings(settings), list.join(', '));
}

/** A configuration given as a JSON-shaped value (embedding programs, tests); relative paths resolve against `baseDir`. */
export function parseConfig(doc: unknown, baseDir: string): ServerConfig {
  const name = '(configuration)';
  return finishConfig(parseConfigText(JSON.stringify(doc, null, 2) ?? '', { name, dir: baseDir }, 'json'), name);
}

/**
 * A file as is; a directory's `*.hcl` and `*.json` files in lexical order, as Vault's
 * LoadConfigDir, without subdirectories and editor lock files (`.#name`).
 */
function configFilesAt(configPath: string): string[] {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(configPath).isDirectory();
  } catch (err) {
    throw new ConfigError(`cannot read config file ${configPath}: ${errorCode(err)}`);
  }
  if (!isDirectory) return [configPath];
  const names = readdirSync(configPath, { withFileTypes: true })
    .filter((entry) => !entry.isDirectory() && /\.(hcl|json)$/.test(entry.name) && !entry.name.startsWith('.#'))
    .map((entry) => entry.name)
    .sort();
  if (names.length === 0) throw new ConfigError(`config directory ${configPath} holds no .hcl or .json file`);
  return names.map((name) => path.join(configPath, name));
}

function readConfigFile(file: string): FileContents {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${errorCode(err)}`);
  }
  // A .json file is JSON even when it does not start with "{", so its errors read as JSON errors.
  return parseConfigText(text, { name: file, dir: path.dirname(path.resolve(file)) }, file.endsWith('.json') ? 'json' : undefined);
}

function parseConfigText(text: string, source: SourceFile, syntax: HclSyntax | undefined): FileContents {
  try {
    const doc = parseHclDocument(text, syntax);
    return {
      ...readConfigDocument(doc, source),
      auditDevices: readAuditStanzas(doc, source),
      pluginBlocks: readPluginStanzas(doc, source),
      userLockouts: readUserLockoutStanzas(doc, source),
      initializeBlocks: readInitializeStanzas(doc, source),
    };
  } catch (err) {
    if (err instanceof HclSyntaxError) throw new ConfigError(`${source.name}:${err.line}:${err.column}: ${err.detail}`);
    throw err;
  }
}

/**
 * Vault's merge (command/server/config.go, Config.Merge): listeners add up; storage and the other
 * settings of a later file replace an earlier file's; lease TTLs keep the larger value.
 */
function mergeSettings(files: readonly FileContents[]): FileContents {
  return files.reduce((a, b) => ({
    listeners: [...a.listeners, ...b.listeners],
    auditDevices: [...a.auditDevices, ...b.auditDevices],
    pluginBlocks: [...a.pluginBlocks, ...b.pluginBlocks],
    userLockouts: [...a.userLockouts, ...b.userLockouts],
    // In the files' order, as OpenBao runs them.
    initializeBlocks: [...a.initializeBlocks, ...b.initializeBlocks],
    storage: b.storage ?? a.storage,
    apiAddr: b.apiAddr ?? a.apiAddr,
    clusterName: b.clusterName ?? a.clusterName,
    defaultLeaseTtl: larger(a.defaultLeaseTtl, b.defaultLeaseTtl),
    maxLeaseTtl: larger(a.maxLeaseTtl, b.maxLeaseTtl),
    logLevel: b.logLevel ?? a.logLevel,
    pluginDirectory: b.pluginDirectory ?? a.pluginDirectory,
    pluginMemoryLimitMb: b.pluginMemoryLimitMb ?? a.pluginMemoryLimitMb,
    pluginResidentMemoryLimitMb: b.pluginResidentMemoryLimitMb ?? a.pluginResidentMemoryLimitMb,
    pluginWatchdogMs: b.pluginWatchdogMs ?? a.pluginWatchdogMs,
    pidFile: b.pidFile ?? a.pidFile,
    periodicIntervalMs: b.periodicIntervalMs ?? a.periodicIntervalMs,
    cloudAuth: b.cloudAuth ?? a.cloudAuth,
    ui: b.ui ?? a.ui,
    telemetry: b.telemetry ?? a.telemetry,
    unsafeAllowApiAuditCreation: b.unsafeAllowApiAuditCreation ?? a.unsafeAllowApiAuditCreation,
    allowAuditLogPrefixing: b.allowAuditLogPrefixing ?? a.allowAuditLogPrefixing,
    apiAuditSocketAllowlist: b.apiAuditSocketAllowlist ?? a.apiAuditSocketAllowlist,
    seal: b.seal ?? a.seal,
    workers: b.workers ?? a.workers,
  }));
}

/**
 * Whether Vault's unauthenticated root generation is turned off. OpenBao sets it per listener;
 * Keywarden applies it to the whole server, so listeners that disagree are refused rather than
 * leave the endpoints open on one of them.
 */
function disableUnauthedGenerateRoot(listeners: readonly ListenerConfig[]): boolean {
  const values = new Set(listeners.map((listener) => listener.disableUnauthedGenerateRootEndpoints ?? false));
  if (values.size > 1) {
    throw new ConfigError('listener: disable_unauthed_generate_root_endpoints must be the same on every listener (Keywarden applies it to the whole server)');
  }
  return values.has(true);
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The plugin names the deprecated `cloud_auth` block stands for. */
const CLOUD_AUTH_PLUGINS = ['cloud', 'aws'] as const;

/** Plugin blocks by name (a later file's replaces an earlier's); none given: undefined. */
function pluginConfigs(settings: FileContents): Readonly<Record<string, PluginSettings>> | undefined {
  const legacy = settings.cloudAuth;
  const both = legacy && settings.pluginBlocks.find((block) => (CLOUD_AUTH_PLUGINS as readonly string[]).includes(block.value.name));
  if (legacy && both) fail(legacy.where, `cloud_auth is the older spelling of plugin "${both.value.name}" { … } (${both.where.file}:${both.where.line}): keep only the plugin block`);
  if (settings.pluginBlocks.length === 0) return undefined;
  const plugins: Record<string, PluginSettings> = Object.create(null) as Record<string, PluginSettings>;
  for (const block of settings.pluginBlocks) plugins[block.value.name] = block.value.config;
  return { ...plugins };
}

/**
 * The block of the configuration file for a plugin (empty when there is none). The deprecated
 * `cloud_auth` block is read as the cloud auth method's block, under both its names.
 */
export function pluginConfigOf(config: Pick<ServerConfig, 'plugins' | 'cloudAuth'>, name: string): PluginSettings {
  if (config.plugins && Object.hasOwn(config.plugins, name)) return config.plugins[name]!;
  if (config.cloudAuth && (CLOUD_AUTH_PLUGINS as readonly string[]).includes(name)) return { allow_sha1_signatures: config.cloudAuth.allowSha1Signatures };
  return {};
}

function larger(a: Setting<number> | undefined, b: Setting<number> | undefined): Setting<number> | undefined {
  return a && b ? (b.value > a.value ? b : a) : (b ?? a);
}

function finishConfig(settings: FileContents, source: string): ServerConfig {
  if (settings.listeners.length === 0) throw new ConfigError(`${source}: listener: a listener "tcp" { … } block is required`);
  const storage = settings.storage;
  if (!storage) {
    throw new ConfigError(`${source}: storage: a storage "leveldb" (with path), "postgresql" (with connection_url) or "inmem" block is required`);
  }
  const defaultLeaseTtl = settings.defaultLeaseTtl?.value ?? DEFAULT_TTL;
  const maxLeaseTtl = settings.maxLeaseTtl?.value ?? DEFAULT_TTL;
  if (defaultLeaseTtl > maxLeaseTtl) {
    if (settings.defaultLeaseTtl) fail(settings.defaultLeaseTtl.where, `${defaultLeaseTtl}s is greater than max_lease_ttl (${maxLeaseTtl}s)`);
    fail(settings.maxLeaseTtl!.where, `${maxLeaseTtl}s is less than the default lease TTL (${defaultLeaseTtl}s); lower default_lease_ttl too`);
  }
  const apiAddr = settings.apiAddr?.value ?? process.env.KEYWARDEN_API_ADDR ?? process.env.VAULT_API_ADDR;
  if (storage.value.kind === 'postgresql' && storage.value.haEnabled) checkHaApiAddr(apiAddr, settings.apiAddr, storage);
  return {
    listeners: settings.listeners,
    storage: storage.value,
    defaultLeaseTtl,
    maxLeaseTtl,
    ...(apiAddr ? { apiAddr: apiAddr.replace(/\/$/, '') } : {}),
    ...(settings.clusterName ? { clusterName: settings.clusterName.value } : {}),
    logLevel: settings.logLevel?.value ?? 'info',
    ...(settings.pluginDirectory ? { pluginDirectory: settings.pluginDirectory.value } : {}),
    ...(settings.pluginMemoryLimitMb ? { pluginMemoryLimitMb: settings.pluginMemoryLimitMb.value } : {}),
    ...(settings.pluginResidentMemoryLimitMb ? { pluginResidentMemoryLimitMb: settings.pluginResidentMemoryLimitMb.value } : {}),
    ...(settings.pluginWatchdogMs ? { pluginWatchdogMs: settings.pluginWatchdogMs.value } : {}),
    ...(settings.pidFile ? { pidFile: settings.pidFile.value } : {}),
    ...(disableUnauthedGenerateRoot(settings.listeners) ? { disableUnauthedGenerateRoot: true } : {}),
    periodicIntervalMs: settings.periodicIntervalMs?.value ?? 60_000,
    ...(settings.cloudAuth ? { cloudAuth: settings.cloudAuth.value } : {}),
    ...optional('plugins', pluginConfigs(settings)),
    ...(settings.ui?.value ? { ui: true } : {}),
    ...(settings.telemetry ? { telemetry: settings.telemetry.value } : {}),
    audit: auditConfig(settings),
    ...(settings.userLockouts.length > 0 ? { userLockout: userLockoutStanzas(settings.userLockouts) } : {}),
    ...(settings.seal ? { seal: settings.seal.value } : {}),
    ...optional('initialize', initializeBlocks(settings)),
    ...(settings.workers ? { workers: settings.workers.value } : {}),
  };
}

/**
 * The `initialize` stanzas, checked across files. They need an auto seal, as in OpenBao: the
 * store initializes itself with nobody to hand shares to.
 */
function initializeBlocks(settings: FileContents): readonly SelfInitBlock[] | undefined {
  const blocks = settings.initializeBlocks;
  if (blocks.length === 0) return undefined;
  checkInitializeNames(blocks);
  if (!settings.seal) fail(blocks[0]!.where, 'self-initialization needs an auto seal: add a seal stanza (seal "static", seal "transit")');
  return blocks.map((block) => block.value);
}

/** The stanzas by type; a type's stanza in a later file replaces an earlier file's, field by field. */
function userLockoutStanzas(stanzas: readonly Setting<UserLockoutStanza>[]): UserLockoutStanzas {
  const byType: Record<string, UserLockoutStanza['settings']> = {};
  for (const { value } of stanzas) byType[value.type] = { ...byType[value.type], ...value.settings };
  return byType;
}

/**
 * The audit settings, checked across files: one path per declared device, no path inside another,
 * every stanza's options acceptable to its device type under the file's rules (a `prefix` only
 * with allow_audit_log_prefixing, no executable mode), every allowlist entry an address.
 */
function auditConfig(settings: FileContents): AuditConfig {
  const allowAuditLogPrefixing = settings.allowAuditLogPrefixing?.value ?? DEFAULT_AUDIT_CONFIG.allowAuditLogPrefixing;
  const seen: Setting<DeclaredAuditDevice>[] = [];
  for (const stanza of settings.auditDevices) {
    const device = stanza.value;
    const other = seen.find((s) => s.value.path.startsWith(device.path) || device.path.startsWith(s.value.path));
    if (other) {
      const problem =
        other.value.path === device.path
          ? `audit device path "${device.path}" is declared twice (first at ${other.value.declaredAt})`
          : `audit device path "${device.path}" overlaps "${other.value.path}" declared at ${other.value.declaredAt}`;
      fail(stanza.where, problem);
    }
    seen.push(stanza);
    try {
      checkDeviceOptions(device.type, device.options, { origin: 'config', rules: { ...DEFAULT_AUDIT_RULES, allowAuditLogPrefixing } });
    } catch (err) {
      if (!(err instanceof BadRequestError)) throw err;
      fail(stanza.where, err.message);
    }
  }
  const allowlist = settings.apiAuditSocketAllowlist;
  const apiAuditSocketAllowlist = (allowlist?.value ?? []).map((entry) => {
    try {
      return normalizeAllowedAddress(entry);
    } catch (err) {
      if (!(err instanceof BadRequestError)) throw err;
      return fail(allowlist!.where, err.message);
    }
  });
  return {
    devices: settings.auditDevices.map((stanza) => stanza.value),
    unsafeAllowApiAuditCreation: settings.unsafeAllowApiAuditCreation?.value ?? DEFAULT_AUDIT_CONFIG.unsafeAllowApiAuditCreation,
    allowAuditLogPrefixing,
    apiAuditSocketAllowlist,
  };
}

/** Standbys forward requests to the active node's api_addr, so an HA node must advertise a usable one. */
function checkHaApiAddr(apiAddr: string | undefined, configured: Setting<string> | undefined, storage: Setting<StorageConfig>): void {
  if (!apiAddr) fail(storage.where, 'ha_enabled needs api_addr: standby nodes forward requests to the active node at that address');
  if (/^https?:\/\/[^/\s]+\/?$/.test(apiAddr)) return;
  const problem = `must be a URL like "https://10.0.0.5:8200", got "${apiAddr}"`;
  if (configured) fail(configured.where, problem);
  throw new ConfigError(`api_addr (from the environment): ${problem}`);
}

function errorCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}
