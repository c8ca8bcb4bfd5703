/**
 * One configuration file, HCL or JSON, read into the settings it makes. Every key is known or
 * refused: a typo, a Vault key Keywarden has no use for, or a switch for a feature that does not
 * exist yet stops start-up with the file, the line and the key, where Vault would ignore it or warn.
 * Merging the files of a directory, defaults and checks across files are config.ts's.
 */
import path from 'node:path';
import { describeHclValue, type HclItem, type HclObject, type HclValue } from '../hcl.js';
import { CoercionError, parseBool, parseDurationExact, parseDurationSeconds } from '../framework/fields.js';
import { DEFAULT_MAX_REQUEST_SIZE } from '../http/body.js';
import { readSealStanza, type SealStanza } from './seal-stanza.js';
import { DEFAULT_TELEMETRY, type CloudAuthConfig, type ListenerConfig, type ListenerTls, type LogLevel, type StorageConfig, type TelemetryConfig } from './config.js';

export class ConfigError extends Error {}

/** Where a setting was read: the file, the line, and the key's dotted path (`listener.tcp.address`). */
export interface Where {
  readonly file: string;
  readonly line: number;
  readonly key: string;
}

export interface Setting<T> {
  readonly value: T;
  readonly where: Where;
}

/** `file:line: key: problem`, the shape of every error about a setting. */
export function fail(where: Where, problem: string): never {
  throw new ConfigError(`${where.file}:${where.line}: ${where.key}: ${problem}`);
}

/** What one file sets; what it leaves unset comes from the directory's other files, or from defaults. */
export interface FileSettings {
  readonly listeners: readonly ListenerConfig[];
  readonly storage?: Setting<StorageConfig>;
  readonly apiAddr?: Setting<string>;
  readonly clusterName?: Setting<string>;
  /** Seconds; unset for "" and 0, which mean "the default" in Vault. */
  readonly defaultLeaseTtl?: Setting<number>;
  readonly maxLeaseTtl?: Setting<number>;
  readonly logLevel?: Setting<LogLevel>;
  readonly pluginDirectory?: Setting<string>;
  readonly pluginMemoryLimitMb?: Setting<number>;
  readonly pluginResidentMemoryLimitMb?: Setting<number>;
  readonly pluginWatchdogMs?: Setting<number>;
  readonly pidFile?: Setting<string>;
  readonly periodicIntervalMs?: Setting<number>;
  readonly cloudAuth?: Setting<CloudAuthConfig>;
  readonly ui?: Setting<boolean>;
  readonly telemetry?: Setting<TelemetryConfig>;
  readonly unsafeAllowApiAuditCreation?: Setting<boolean>;
  readonly allowAuditLogPrefixing?: Setting<boolean>;
  /** As written; config.ts checks and normalizes the addresses. */
  readonly apiAuditSocketAllowlist?: Setting<readonly string[]>;
  readonly seal?: Setting<SealStanza>;
}

/** A file's name for messages, and the directory its relative paths resolve against. */
export interface SourceFile {
  readonly name: string;
  readonly dir: string;
}

const TOP_LEVEL_KEYS = [
  'listener', 'storage', 'api_addr', 'cluster_name', 'ui', 'telemetry', 'default_lease_ttl', 'max_lease_ttl',
  'log_level', 'log_format', 'plugin_directory', 'plugin_memory_limit_mb', 'plugin_resident_memory_limit_mb', 'plugin_watchdog_timeout', 'pid_file', 'periodic_interval', 'disable_mlock', 'cloud_auth',
  'unsafe_allow_api_audit_creation', 'allow_audit_log_prefixing', 'api_audit_socket_allowlist', 'seal',
] as const;

const LISTENER_KEYS = [
  'address', 'tls_disable', 'tls_cert_file', 'tls_key_file', 'tls_min_version', 'tls_client_ca_file',
  'tls_require_and_verify_client_cert', 'tls_disable_client_certs', 'max_request_size', 'max_unauthenticated_request_size',
  'http_read_header_timeout', 'http_read_timeout', 'telemetry', 'disable_unauthed_generate_root_endpoints',
] as const;

/** Vault keys that would mislead if ignored, each with the reason it is refused. */
const REFUSED_KEYS: Readonly<Record<string, string>> = {
  backend: 'this is Vault\'s old name for the storage block; write it as storage "…" { … }',
  cluster_addr: 'Keywarden has no cluster port: standby nodes forward requests to the active node\'s api_addr; remove cluster_addr',
  ha_storage: 'HA runs on the storage backend itself (storage "postgresql" { ha_enabled = true })',
};

/** Vault's log level names, "notice" and "err" included. */
export const LOG_LEVELS: Readonly<Record<string, LogLevel>> = {
  trace: 'trace', debug: 'debug', info: 'info', notice: 'info', warn: 'warn', warning: 'warn', error: 'error', err: 'error',
};

const TELEMETRY_KEYS = ['prometheus_retention_time', 'disable_hostname', 'filter_default'] as const;

/** Vault's other telemetry keys, each with the reason it is refused rather than ignored. */
const REFUSED_TELEMETRY_KEYS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    ['statsite_address', 'statsd_address', 'dogstatsd_addr', 'dogstatsd_tags'].map((key) => [key, 'Keywarden pushes metrics nowhere: Prometheus scrapes sys/metrics']),
  ),
  ...Object.fromEntries(
    [
      'circonus_api_token', 'circonus_api_app', 'circonus_api_url', 'circonus_submission_interval', 'circonus_submission_url',
      'circonus_check_id', 'circonus_check_force_metric_activation', 'circonus_check_instance_id', 'circonus_check_search_tag',
      'circonus_check_display_name', 'circonus_check_tags', 'circonus_broker_id', 'circonus_broker_select_tag',
      'stackdriver_project_id', 'stackdriver_location', 'stackdriver_namespace', 'stackdriver_debug_logs',
    ].map((key) => [key, 'Keywarden pushes metrics nowhere: Prometheus scrapes sys/metrics']),
  ),
  enable_hostname_label: 'every series carries a host label already unless disable_hostname = true',
  metrics_prefix: 'metric names always start with keywarden_',
  prefix_filter: 'metrics cannot be filtered by prefix; filter_default = false turns collection off altogether',
  usage_gauge_period: 'Keywarden has no periodic usage gauges',
  maximum_gauge_cardinality: 'Keywarden has no periodic usage gauges',
  lease_metrics_epsilon: 'Keywarden has no leases',
  num_lease_metrics_buckets: 'Keywarden has no leases',
  add_lease_metrics_namespace_labels: 'Keywarden has no leases or namespaces',
};

/** Blocks that repeat at the top level, each read on its own (`audit` stanzas by audit-stanza.ts). */
const REPEATED_BLOCKS = ['listener', 'audit'];

/** Reads one parsed document, all but its `audit` stanzas. */
export function readConfigDocument(doc: HclObject, source: SourceFile): FileSettings {
  const fields = fieldsOf(doc.items.filter((item) => !REPEATED_BLOCKS.includes(item.key)), '', source, TOP_LEVEL_KEYS);
  const read = <T>(key: (typeof TOP_LEVEL_KEYS)[number], reader: Reader<T | undefined>): Setting<T> | undefined => {
    const field = fields.get(key);
    const value = field && reader(field.value, field.where);
    return value === undefined ? undefined : { value, where: field!.where };
  };

  read('disable_mlock', boolean);
  const logFormat = read('log_format', string);
  if (logFormat && logFormat.value !== 'json') {
    fail(logFormat.where, logFormat.value === 'standard' ? 'Keywarden writes JSON logs only; remove log_format or set it to "json"' : `expected "json", got "${logFormat.value}"`);
  }

  return {
    listeners: doc.items
      .filter((item) => item.key === 'listener')
      .flatMap((item) => labeledBlocks(item.value, whereOf(item, '', source), source).map((block) => readListener(block, source))),
    storage: read('storage', (value, where) => readStorage(value, where, source)),
    apiAddr: read('api_addr', string),
    clusterName: read('cluster_name', nonEmptyString),
    defaultLeaseTtl: read('default_lease_ttl', leaseTtl),
    maxLeaseTtl: read('max_lease_ttl', leaseTtl),
    logLevel: read('log_level', logLevel),
    pluginDirectory: read('plugin_directory', (value, where) => path.resolve(source.dir, nonEmptyString(value, where))),
    pluginMemoryLimitMb: read('plugin_memory_limit_mb', (value, where) => {
      const mb = integer(value, where);
      return mb >= 16 ? mb : fail(where, `must be at least 16 (MB), got ${mb}`);
    }),
    pluginResidentMemoryLimitMb: read('plugin_resident_memory_limit_mb', (value, where) => {
      const mb = integer(value, where);
      // Node itself holds about 50 MB before a plugin allocates anything.
      return mb >= 64 ? mb : fail(where, `must be at least 64 (MB), got ${mb}`);
    }),
    pluginWatchdogMs: read('plugin_watchdog_timeout', (value, where) => {
      const ms = durationMillis(value, where);
      return ms >= 100 ? ms : fail(where, 'must be at least 100ms');
    }),
    pidFile: read('pid_file', (value, where) => path.resolve(source.dir, nonEmptyString(value, where))),
    periodicIntervalMs: read('periodic_interval', durationMillis),
    cloudAuth: read('cloud_auth', (value, where) => readCloudAuth(value, where, source)),
    ui: read('ui', boolean),
    telemetry: read('telemetry', (value, where) => readTelemetry(value, where, source)),
    unsafeAllowApiAuditCreation: read('unsafe_allow_api_audit_creation', boolean),
    allowAuditLogPrefixing: read('allow_audit_log_prefixing', boolean),
    apiAuditSocketAllowlist: read('api_audit_socket_allowlist', stringList),
    seal: read('seal', (value, where) => readSealStanza(value, where, source)),
  };
}

export interface Field {
  readonly value: HclValue;
  readonly where: Where;
}

export function whereOf(item: HclItem, prefix: string, source: SourceFile): Where {
  return { file: source.name, line: item.keyPos.line, key: prefix + item.key };
}

/** A block's items by key, refusing unknown keys and keys set twice. */
export function fieldsOf(items: readonly HclItem[], prefix: string, source: SourceFile, known: readonly string[]): Map<string, Field> {
  const fields = new Map<string, Field>();
  for (const item of items) {
    const where = whereOf(item, prefix, source);
    const refused = prefix === '' ? REFUSED_KEYS[item.key] : undefined;
    if (refused) fail(where, `not supported: ${refused}`);
    if (!known.includes(item.key)) fail(where, known.length === 0 ? 'unknown key; this block takes none' : `unknown key; expected one of ${known.join(', ')}`);
    const earlier = fields.get(item.key);
    if (earlier) fail(where, `set twice in this file (first on line ${earlier.where.line})`);
    fields.set(item.key, { value: item.value, where });
  }
  return fields;
}

/** A block's body: an object, or each object of a list (how HCL's JSON form repeats a block). */
export function blockBodies(value: HclValue, where: Where): readonly HclObject[] {
  if (value.kind === 'object') return [value];
  if (value.kind === 'list' && value.items.length > 0 && value.items.every((v) => v.kind === 'object')) return value.items as HclObject[];
  return fail(where, `expected a block { … }, got ${describeHclValue(value)}`);
}

/** The only body of a block that may appear once. */
function singleBody(value: HclValue, where: Where): HclObject {
  const bodies = blockBodies(value, where);
  if (bodies.length > 1) fail(where, 'expected one block, got a list of them');
  return bodies[0]!;
}

interface LabeledBlock {
  readonly label: string;
  readonly where: Where;
  readonly body: HclObject;
}

/** `name "label" { body }`, or its JSON form `"name": {"label": {body}}`: each label with its body. */
function labeledBlocks(value: HclValue, where: Where, source: SourceFile): LabeledBlock[] {
  const blocks: LabeledBlock[] = [];
  for (const outer of blockBodies(value, where)) {
    if (outer.items.length === 0) fail(where, `expected a labeled block such as ${where.key} "${where.key === 'listener' ? 'tcp' : 'leveldb'}" { … }`);
    for (const labeled of outer.items) {
      const labelWhere = whereOf(labeled, `${where.key}.`, source);
      for (const body of blockBodies(labeled.value, labelWhere)) blocks.push({ label: labeled.key, where: labelWhere, body });
    }
  }
  return blocks;
}

type ListenerKey = (typeof LISTENER_KEYS)[number];

function readListener(block: LabeledBlock, source: SourceFile): ListenerConfig {
  if (block.label === 'unix') fail(block.where, 'unix socket listeners are not supported; use listener "tcp"');
  if (block.label !== 'tcp') fail(block.where, `unknown listener type "${block.label}"; expected listener "tcp" { … }`);
  const fields = fieldsOf(block.body.items, 'listener.tcp.', source, LISTENER_KEYS);
  const read = <T>(key: ListenerKey, reader: Reader<T>): T | undefined => {
    const field = fields.get(key);
    return field && reader(field.value, field.where);
  };
  const at = (key: ListenerKey): Where => fields.get(key)?.where ?? block.where;

  const address = read('address', string) ?? '127.0.0.1:8200';
  const addressProblem = checkAddress(address);
  if (addressProblem) fail(at('address'), addressProblem);
  const unauthenticatedMetricsAccess = read('telemetry', readListenerTelemetry(source));
  const readHeaderTimeoutMs = read('http_read_header_timeout', durationMillis);
  const readTimeoutMs = read('http_read_timeout', durationMillis);
  if (readHeaderTimeoutMs !== undefined && readTimeoutMs !== undefined && readTimeoutMs > 0 && readHeaderTimeoutMs > readTimeoutMs) {
    fail(at('http_read_header_timeout'), 'http_read_header_timeout cannot be greater than http_read_timeout');
  }
  const maxRequestSize = read('max_request_size', integer);
  const maxUnauthenticated = read('max_unauthenticated_request_size', integer);
  if (maxUnauthenticated !== undefined && maxUnauthenticated < 0) {
    fail(at('max_unauthenticated_request_size'), 'max_unauthenticated_request_size cannot be negative: what a request without a token may send is always bounded (0 means the default, 1 MiB)');
  }
  const tls = readListenerTls(read, at, block.where, source);
  const disableUnauthedGenerateRoot = read('disable_unauthed_generate_root_endpoints', boolean);
  return {
    address,
    ...(tls ? { tls } : {}),
    ...(disableUnauthedGenerateRoot !== undefined ? { disableUnauthedGenerateRootEndpoints: disableUnauthedGenerateRoot } : {}),
    ...(unauthenticatedMetricsAccess ? { unauthenticatedMetricsAccess } : {}),
    // 0 means the default, as in Vault; a negative size turns the limit off.
    maxRequestSize: maxRequestSize === undefined || maxRequestSize === 0 ? DEFAULT_MAX_REQUEST_SIZE : maxRequestSize,
    ...(maxUnauthenticated ? { maxUnauthenticatedRequestSize: maxUnauthenticated } : {}),
    // Only when configured: the listener owns the defaults.
    ...(readHeaderTimeoutMs !== undefined ? { readHeaderTimeoutMs } : {}),
    ...(readTimeoutMs !== undefined ? { readTimeoutMs } : {}),
  };
}

function readListenerTls(
  read: <T>(key: ListenerKey, reader: Reader<T>) => T | undefined,
  at: (key: ListenerKey) => Where,
  blockWhere: Where,
  source: SourceFile,
): ListenerTls | undefined {
  const file: Reader<string> = (value, where) => path.resolve(source.dir, nonEmptyString(value, where));
  // Every value is checked, even those tls_disable makes moot, so a mistake surfaces before TLS is turned on.
  const requireClientCert = read('tls_require_and_verify_client_cert', boolean) ?? false;
  const disableClientCerts = read('tls_disable_client_certs', boolean) ?? false;
  const certFile = read('tls_cert_file', file);
  const keyFile = read('tls_key_file', file);
  const clientCaFile = read('tls_client_ca_file', file);
  const minVersion = read('tls_min_version', tlsVersion) ?? 'TLSv1.2';
  if (read('tls_disable', boolean)) {
    // Client certificates are a security control: asking for them without TLS must not pass silently.
    if (requireClientCert) fail(at('tls_require_and_verify_client_cert'), 'needs TLS, but tls_disable is true');
    return undefined;
  }
  if (!certFile || !keyFile) fail(blockWhere, 'tls_cert_file and tls_key_file are required unless tls_disable is true');
  if (requireClientCert && disableClientCerts) {
    fail(at('tls_disable_client_certs'), 'tls_disable_client_certs and tls_require_and_verify_client_cert are mutually exclusive');
  }
  if (clientCaFile && !requireClientCert) {
    fail(at('tls_client_ca_file'), 'only used with tls_require_and_verify_client_cert = true; without it client certificates are requested but not verified, as in Vault');
  }
  return {
    certFile,
    keyFile,
    minVersion,
    clientCertificates: requireClientCert ? 'require' : disableClientCerts ? 'none' : 'request',
    ...(clientCaFile ? { clientCaFile } : {}),
  };
}

function readListenerTelemetry(source: SourceFile): Reader<boolean> {
  return (value, where) => {
    const fields = fieldsOf(singleBody(value, where).items, `${where.key}.`, source, ['unauthenticated_metrics_access']);
    const access = fields.get('unauthenticated_metrics_access');
    return access ? boolean(access.value, access.where) : false;
  };
}

function readTelemetry(value: HclValue, where: Where, source: SourceFile): TelemetryConfig {
  const body = singleBody(value, where);
  for (const item of body.items) {
    const refused = REFUSED_TELEMETRY_KEYS[item.key];
    if (refused) fail(whereOf(item, 'telemetry.', source), `not supported: ${refused}`);
  }
  const fields = fieldsOf(body.items, 'telemetry.', source, TELEMETRY_KEYS);
  const retention = fields.get('prometheus_retention_time');
  const hostname = fields.get('disable_hostname');
  const filterDefault = fields.get('filter_default');
  return {
    prometheusRetentionMs: retention ? durationMillis(retention.value, retention.where) : DEFAULT_TELEMETRY.prometheusRetentionMs,
    disableHostname: hostname ? boolean(hostname.value, hostname.where) : DEFAULT_TELEMETRY.disableHostname,
    collect: filterDefault ? boolean(filterDefault.value, filterDefault.where) : DEFAULT_TELEMETRY.collect,
  };
}

function readStorage(value: HclValue, where: Where, source: SourceFile): StorageConfig {
  const blocks = labeledBlocks(value, where, source);
  if (blocks.length > 1) fail(blocks[1]!.where, `only one storage backend is permitted (another on line ${blocks[0]!.where.line})`);
  const { label, where: blockWhere, body } = blocks[0]!;
  const prefix = `storage.${label}.`;
  switch (label) {
    case 'inmem':
      fieldsOf(body.items, prefix, source, []);
      return { kind: 'inmem' };
    case 'leveldb': {
      const dir = fieldsOf(body.items, prefix, source, ['path']).get('path') ?? fail(blockWhere, 'path is required');
      return { kind: 'leveldb', path: path.resolve(source.dir, nonEmptyString(dir.value, dir.where)) };
    }
    case 'postgresql':
      return readPostgres(fieldsOf(body.items, prefix, source, ['connection_url', 'table', 'ha_enabled', 'max_parallel']), blockWhere);
    default:
      return fail(blockWhere, `unknown storage backend "${label}"; expected "leveldb", "postgresql" or "inmem"`);
  }
}

function readPostgres(fields: Map<string, Field>, blockWhere: Where): StorageConfig {
  const url = fields.get('connection_url') ?? fail(blockWhere, 'connection_url is required');
  const connectionUrl = nonEmptyString(url.value, url.where);
  // Not echoed back: the value may hold a password.
  if (!/^postgres(ql)?:\/\//.test(connectionUrl)) fail(url.where, 'must be a URL starting with postgres:// or postgresql://');
  const tableField = fields.get('table');
  const table = tableField ? nonEmptyString(tableField.value, tableField.where) : 'keywarden_store';
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(table)) {
    fail(tableField!.where, `"${table}" is not a plain table name (lower-case letters, digits and "_", at most 51 characters)`);
  }
  const haField = fields.get('ha_enabled');
  const parallelField = fields.get('max_parallel');
  const maxParallel = parallelField ? integer(parallelField.value, parallelField.where) : 10;
  if (maxParallel < 1 || maxParallel > 1000) fail(parallelField!.where, `expected 1 to 1000 connections, got ${maxParallel}`);
  return { kind: 'postgresql', connectionUrl, table, haEnabled: haField ? boolean(haField.value, haField.where) : false, maxParallel };
}

function readCloudAuth(value: HclValue, where: Where, source: SourceFile): CloudAuthConfig {
  const sha1 = fieldsOf(singleBody(value, where).items, 'cloud_auth.', source, ['allow_sha1_signatures']).get('allow_sha1_signatures');
  return { allowSha1Signatures: sha1 ? boolean(sha1.value, sha1.where) : false };
}

const ADDRESS = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/;

/** Why an address is not `host:port` (IPv6 in brackets), or undefined when it is. */
function checkAddress(address: string): string | undefined {
  const m = ADDRESS.exec(address);
  if (!m) return `must be host:port, got "${address}"`;
  if (Number(m[3]) > 65535) return `port ${m[3]} is out of range`;
  return undefined;
}

/** `host:port` → parts; the port may be 0 (tests: any free port). */
export function splitAddress(address: string): { host: string; port: number } {
  const problem = checkAddress(address);
  if (problem) throw new ConfigError(`listener.tcp.address: ${problem}`);
  const m = ADDRESS.exec(address)!;
  return { host: m[1] ?? m[2]!, port: Number(m[3]) };
}

export type Reader<T> = (value: HclValue, where: Where) => T;

export const string: Reader<string> = (value, where) => (value.kind === 'string' ? value.value : fail(where, `expected a string, got ${describeHclValue(value)}`));

const nonEmptyString: Reader<string> = (value, where) => string(value, where) || fail(where, 'must not be empty');

/** A list of strings (`["a", "b"]`). */
const stringList: Reader<readonly string[]> = (value, where) =>
  value.kind === 'list' ? value.items.map((item) => string(item, where)) : fail(where, `expected a list of strings, got ${describeHclValue(value)}`);

/** As Vault reads booleans: true or false, 0 or 1, or a word of Go's ParseBool ("true", "1", "f", …). */
export const boolean: Reader<boolean> = (value, where) => {
  try {
    return parseBool(scalar(value, where));
  } catch (err) {
    return fail(where, problemOf(err));
  }
};

/** A whole number, or a string of one ("1024"), as Vault's parseutil reads integers. */
const integer: Reader<number> = (value, where) => {
  if (value.kind === 'number' && Number.isSafeInteger(value.value)) return value.value;
  if (value.kind === 'string' && /^-?\d{1,15}$/.test(value.value)) return Number(value.value);
  return fail(where, `expected a whole number, got ${value.kind === 'number' ? value.value : describeHclValue(value)}`);
};

/** Seconds, or undefined for "" and 0 (Vault's "use the default"). */
const leaseTtl: Reader<number | undefined> = (value, where) => {
  if (value.kind === 'string' && value.value === '') return undefined;
  return durationIn(parseDurationSeconds)(value, where) || undefined;
};

/** A duration ("250ms", "1m30s", or whole seconds) in milliseconds, fractions of a second kept. */
const durationMillis: Reader<number> = (value, where) => Math.round(durationIn(parseDurationExact)(value, where) * 1000);

function durationIn(parse: (raw: unknown) => number): Reader<number> {
  return (value, where) => {
    if (value.kind === 'number' && !Number.isSafeInteger(value.value)) {
      fail(where, `expected a duration such as "30s" or a whole number of seconds, got ${value.value}`);
    }
    try {
      return parse(scalar(value, where));
    } catch (err) {
      return fail(where, problemOf(err));
    }
  };
}

const logLevel: Reader<LogLevel> = (value, where) => {
  const text = string(value, where);
  return LOG_LEVELS[text.trim().toLowerCase()] ?? fail(where, `expected trace, debug, info, warn or error, got "${text}"`);
};

const tlsVersion: Reader<ListenerTls['minVersion']> = (value, where) => {
  const text = string(value, where);
  if (text === 'tls12') return 'TLSv1.2';
  if (text === 'tls13') return 'TLSv1.3';
  if (text === 'tls10' || text === 'tls11') return fail(where, `"${text}" is not accepted: TLS 1.0 and 1.1 are deprecated (RFC 8996); use "tls12" or "tls13"`);
  return fail(where, `expected "tls12" or "tls13", got "${text}"`);
};

function scalar(value: HclValue, where: Where): string | number | boolean {
  if (value.kind === 'string' || value.kind === 'number' || value.kind === 'bool') return value.value;
  return fail(where, `expected a single value, got ${describeHclValue(value)}`);
}

function problemOf(err: unknown): string {
  if (err instanceof CoercionError) return err.message;
  throw err;
}
