/**
 * One configuration file, HCL or JSON, read into the settings it makes. Every key is known or
 * refused: a typo, a Vault key Keywarden has no use for, or a switch for a feature that does not
 * exist yet stops start-up with the file, the line and the key, where Vault would ignore it or warn.
 * The readers every block uses are config-values.ts's; the listener blocks listener-stanza.ts's.
 * Merging the files of a directory, defaults and checks across files are config.ts's.
 */
import path from 'node:path';
import type { HclObject, HclValue } from '../hcl.js';
import { DEFAULT_TELEMETRY, type CloudAuthConfig, type ListenerConfig, type LogLevel, type SealStanza, type StorageConfig, type TelemetryConfig } from './settings.js';
import {
  boolean, durationMillis, fail, fieldsOf, integer, labeledBlocks, leaseTtl, logLevel, nonEmptyString, singleBody, string, stringList, whereOf,
  type Field, type Reader, type Setting, type SourceFile, type Where,
} from './config-values.js';
import { readListener } from './listener-stanza.js';
import { readSealStanza } from './seal-stanza.js';

export { ConfigError } from './config-values.js';

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
  readonly seal?: Setting<readonly SealStanza[]>;
  readonly workers?: Setting<number>;
}

const TOP_LEVEL_KEYS = [
  'listener', 'storage', 'api_addr', 'cluster_name', 'ui', 'telemetry', 'default_lease_ttl', 'max_lease_ttl',
  'log_level', 'log_format', 'plugin_directory', 'plugin_memory_limit_mb', 'plugin_resident_memory_limit_mb', 'plugin_watchdog_timeout', 'pid_file', 'periodic_interval', 'disable_mlock', 'cloud_auth',
  'unsafe_allow_api_audit_creation', 'allow_audit_log_prefixing', 'api_audit_socket_allowlist', 'seal',
  'workers',
] as const;

/** Vault keys that would mislead if ignored, each with the reason it is refused. */
const REFUSED_KEYS: Readonly<Record<string, string>> = {
  backend: 'this is Vault\'s old name for the storage block; write it as storage "…" { … }',
  cluster_addr: 'Keywarden has no cluster port: standby nodes forward requests to the active node\'s api_addr; remove cluster_addr',
  ha_storage: 'HA runs on the storage backend itself (storage "postgresql" { ha_enabled = true })',
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

/**
 * Blocks that repeat at the top level, each read on its own (`audit`, `plugin`, `user_lockout` and
 * `initialize` stanzas by audit-stanza.ts, plugin-stanza.ts, user-lockout-stanza.ts and
 * initialize-stanza.ts).
 */
const REPEATED_BLOCKS = ['listener', 'audit', 'plugin', 'user_lockout', 'initialize'];

/** Reads one parsed document, all but its `audit`, `plugin`, `user_lockout` and `initialize` stanzas. */
export function readConfigDocument(doc: HclObject, source: SourceFile): FileSettings {
  const fields = fieldsOf(doc.items.filter((item) => !REPEATED_BLOCKS.includes(item.key)), '', source, TOP_LEVEL_KEYS, REFUSED_KEYS);
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
    workers: read('workers', (value, where) => {
      const count = integer(value, where);
      return count >= 1 ? count : fail(where, `must be at least 1 (one serving process), got ${count}`);
    }),
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

