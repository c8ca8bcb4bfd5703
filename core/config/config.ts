/**
 * The server configuration, Vault's way: `-config` names an HCL or JSON file, or a directory whose
 * `*.hcl` and `*.json` files are merged in lexical order. Each file is read by config-file.ts, which
 * refuses any key it does not know with the file, line and key; this module merges the files,
 * fills in defaults and checks what spans files (a storage block, the TTL pair, HA's api_addr, the
 * audit stanzas).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { HclSyntaxError, parseHclDocument, type HclSyntax } from '../hcl.js';
import { ConfigError, fail, readConfigDocument, type FileSettings, type Setting, type SourceFile } from './config-file.js';
import { readAuditStanzas } from './audit-stanza.js';
import { checkDeviceOptions } from '../audit/device-types.js';
import { BadRequestError } from '../errors.js';
import type { SealStanza } from './seal-stanza.js';
import { DEFAULT_AUDIT_CONFIG, DEFAULT_AUDIT_RULES, normalizeAllowedAddress, type AuditConfig, type DeclaredAuditDevice } from '../audit/rules.js';

export { ConfigError, splitAddress } from './config-file.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** A listener's TLS; a listener without it speaks plain HTTP (`tls_disable`). */
export interface ListenerTls {
  readonly certFile: string;
  readonly keyFile: string;
  /** The oldest protocol accepted (`tls_min_version`, default tls12). */
  readonly minVersion: 'TLSv1.2' | 'TLSv1.3';
  /**
   * Vault's client certificate modes: `request` (its default) asks for one and takes any, or none;
   * `require` refuses the handshake without one that chains to `clientCaFile`; `none` never asks.
   */
  readonly clientCertificates: 'none' | 'request' | 'require';
  /** CA certificates (PEM) that client certificates must chain to; only with `require`. */
  readonly clientCaFile?: string;
}

export interface ListenerConfig {
  /** `host:port`; port 0 picks a free port. */
  readonly address: string;
  readonly tls?: ListenerTls;
  readonly maxRequestSize: number;
  /**
   * The largest body of a request to a path that needs no token (login, init, unseal), in bytes;
   * only when configured (the HTTP layer's default is 1 MiB, never more than maxRequestSize).
   */
  readonly maxUnauthenticatedRequestSize?: number;
  /** Milliseconds a client may take to send a request's headers (0: no limit; default 10 s). */
  readonly readHeaderTimeoutMs?: number;
  /** Milliseconds a client may take to send a whole request, body included (0: no limit; default 30 s). */
  readonly readTimeoutMs?: number;
  /**
   * `disable_unauthed_generate_root_endpoints` (OpenBao's name and place): refuse Vault's
   * unauthenticated `sys/generate-root/*`, leaving the token-authenticated `sys/generate-root-token/*`.
   * Keywarden applies it server-wide, so every listener must agree (see loadConfig).
   */
  readonly disableUnauthedGenerateRootEndpoints?: boolean;
  /** `telemetry { unauthenticated_metrics_access }`: `sys/metrics` on this listener needs no token. */
  readonly unauthenticatedMetricsAccess?: boolean;
}

export type StorageConfig =
  | { readonly kind: 'leveldb'; readonly path: string }
  | { readonly kind: 'inmem' }
  | {
      readonly kind: 'postgresql';
      /** Holds the database password: never log it. */
      readonly connectionUrl: string;
      readonly table: string;
      readonly haEnabled: boolean;
      /** Connections in this node's pool. */
      readonly maxParallel: number;
    };

/** The cloud auth method's server-wide switches. */
export interface CloudAuthConfig {
  /**
   * Accept SHA-1 PKCS#7 signatures (the DSA-SHA1 `pkcs7` identity document) at ec2 login. Off
   * by default: SHA-1 is deprecated, and the `rsa2048` document or identity + signature work without it.
   */
  readonly allowSha1Signatures: boolean;
}

/** The `telemetry` block: what `sys/metrics` collects and shows. */
export interface TelemetryConfig {
  /**
   * How long a series that stops changing stays in `sys/metrics` (`prometheus_retention_time`,
   * default 24h), in milliseconds; 0 turns the Prometheus format off, as in Vault.
   */
  readonly prometheusRetentionMs: number;
  /** No `host` label on every series (`disable_hostname`). */
  readonly disableHostname: boolean;
  /** `filter_default = false`: collect nothing (Vault's "no metrics when no filter allows them"). */
  readonly collect: boolean;
}

/** Vault's default `prometheus_retention_time`: 24 hours. */
export const DEFAULT_PROMETHEUS_RETENTION_MS = 24 * 3600 * 1000;

export const DEFAULT_TELEMETRY: TelemetryConfig = { prometheusRetentionMs: DEFAULT_PROMETHEUS_RETENTION_MS, disableHostname: false, collect: true };

export interface ServerConfig {
  /** One or more; the server listens on each. */
  readonly listeners: readonly ListenerConfig[];
  readonly storage: StorageConfig;
  /** Seconds. */
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
  readonly apiAddr?: string;
  /** The name a new cluster gets on its first unseal (`keywarden-cluster-…` otherwise). */
  readonly clusterName?: string;
  readonly logLevel: LogLevel;
  /** Where external plugin modules live; one runs only once registered in the catalog with its SHA-256. */
  readonly pluginDirectory?: string;
  /** Heap limit of each external plugin's process, MB (`plugin_memory_limit_mb`, default 128). */
  readonly pluginMemoryLimitMb?: number;
  /**
   * Resident memory limit of each external plugin's process, MB (`plugin_resident_memory_limit_mb`,
   * default the heap limit + 128); the server refuses to start with one not above the heap limit.
   */
  readonly pluginResidentMemoryLimitMb?: number;
  /** How long an external plugin's process may leave the watchdog unanswered, ms (`plugin_watchdog_timeout`, default 10s). */
  readonly pluginWatchdogMs?: number;
  /** Where `keywarden server` writes its process id while it runs (`pid_file`). */
  readonly pidFile?: string;
  /** Vault's unauthenticated root generation is off (`disable_unauthed_generate_root_endpoints` on the listeners). */
  readonly disableUnauthedGenerateRoot?: boolean;
  /** How often backends' periodic hooks run, in milliseconds; 0 turns the timer off. */
  readonly periodicIntervalMs: number;
  readonly cloudAuth?: CloudAuthConfig;
  /** Serve the operator web UI at `/ui/` (and redirect `/` there). */
  readonly ui?: boolean;
  /** Absent: DEFAULT_TELEMETRY. */
  readonly telemetry?: TelemetryConfig;
  /**
   * Declared audit devices and what API-created ones may do (`audit` stanzas,
   * `unsafe_allow_api_audit_creation`, `allow_audit_log_prefixing`, `api_audit_socket_allowlist`);
   * absent: DEFAULT_AUDIT_CONFIG. Applied again on SIGHUP.
   */
  readonly audit?: AuditConfig;
  /** The `seal` stanza: an auto seal wraps the root key; absent, Shamir shares unseal. */
  readonly seal?: SealStanza;
}

/** One file's settings and its `audit` stanzas. */
interface FileContents extends FileSettings {
  readonly auditDevices: readonly Setting<DeclaredAuditDevice>[];
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
    return { ...readConfigDocument(doc, source), auditDevices: readAuditStanzas(doc, source) };
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
    ...(settings.ui?.value ? { ui: true } : {}),
    ...(settings.telemetry ? { telemetry: settings.telemetry.value } : {}),
    audit: auditConfig(settings),
    ...(settings.seal ? { seal: settings.seal.value } : {}),
  };
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
