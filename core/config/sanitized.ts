/**
 * The configuration as `sys/config/state/sanitized` shows it: every setting under the name the
 * configuration file gives it, defaults filled in, and nothing secret. The PostgreSQL connection
 * URL (it holds the database password) is left out whole, not masked: a masked URL would still
 * show user, host and database to whoever may read this path.
 */
import { DEFAULT_TELEMETRY, type ListenerConfig, type ServerConfig, type StorageConfig } from './config.js';
import { DEFAULT_AUDIT_CONFIG } from '../audit/rules.js';
import { effectiveLockout, type UserLockoutStanzas } from '../auth/lockout/settings.js';

export function sanitizedConfig(config: ServerConfig): Record<string, unknown> {
  const telemetry = config.telemetry ?? DEFAULT_TELEMETRY;
  const audit = config.audit ?? DEFAULT_AUDIT_CONFIG;
  return {
    api_addr: config.apiAddr ?? '',
    cluster_name: config.clusterName ?? '',
    default_lease_ttl: config.defaultLeaseTtl,
    max_lease_ttl: config.maxLeaseTtl,
    log_level: config.logLevel,
    log_format: 'json',
    pid_file: config.pidFile ?? '',
    plugin_directory: config.pluginDirectory ?? '',
    periodic_interval: config.periodicIntervalMs / 1000,
    disable_unauthed_generate_root_endpoints: config.disableUnauthedGenerateRoot ?? false,
    listeners: config.listeners.map(listener),
    storage: storage(config.storage),
    telemetry: {
      prometheus_retention_time: telemetry.prometheusRetentionMs / 1000,
      disable_hostname: telemetry.disableHostname,
      filter_default: telemetry.collect,
    },
    cloud_auth: { allow_sha1_signatures: config.cloudAuth?.allowSha1Signatures ?? false },
    unsafe_allow_api_audit_creation: audit.unsafeAllowApiAuditCreation,
    allow_audit_log_prefixing: audit.allowAuditLogPrefixing,
    api_audit_socket_allowlist: audit.apiAuditSocketAllowlist,
    // As OpenBao shows them: what each declared device is, not its options (where it writes).
    // As Vault shows them: the type only; every other seal setting can hold a key or a token.
    ...(config.seal ? { seals: config.seal.map((seal) => ({ type: seal.type, disabled: seal.disabled })) } : {}),
    ...(audit.devices.length > 0 ? { audits: audit.devices.map(({ path, type, description }) => ({ path, type, description })) } : {}),
    ...(config.userLockout ? { user_lockout_configs: userLockouts(config.userLockout) } : {}),
  };
}

/** As Vault shows them: each stanza's type with every field, those it leaves out filled in. */
function userLockouts(stanzas: UserLockoutStanzas): Record<string, unknown>[] {
  return Object.keys(stanzas).map((type) => {
    const settings = effectiveLockout(type, stanzas, undefined);
    return {
      type,
      lockout_threshold: settings.threshold,
      lockout_duration: settings.duration,
      lockout_counter_reset: settings.counterReset,
      disable_lockout: settings.disabled,
    };
  });
}

function listener(config: ListenerConfig): Record<string, unknown> {
  const tls = config.tls;
  return {
    type: 'tcp',
    config: {
      address: config.address,
      tls_disable: tls === undefined,
      ...(tls
        ? {
            tls_cert_file: tls.certFile,
            tls_key_file: tls.keyFile,
            tls_min_version: tls.minVersion === 'TLSv1.3' ? 'tls13' : 'tls12',
            tls_require_and_verify_client_cert: tls.clientCertificates === 'require',
            tls_disable_client_certs: tls.clientCertificates === 'none',
            ...(tls.clientCaFile ? { tls_client_ca_file: tls.clientCaFile } : {}),
          }
        : {}),
      max_request_size: config.maxRequestSize,
      ...(config.maxUnauthenticatedRequestSize !== undefined ? { max_unauthenticated_request_size: config.maxUnauthenticatedRequestSize } : {}),
      ...(config.jsonLimits
        ? {
            max_json_depth: config.jsonLimits.depth,
            max_json_string_value_length: config.jsonLimits.stringLength,
            max_json_object_entry_count: config.jsonLimits.objectEntries,
            max_json_array_element_count: config.jsonLimits.arrayElements,
            max_request_json_strings: config.jsonLimits.strings,
          }
        : {}),
      ...(config.readHeaderTimeoutMs !== undefined ? { http_read_header_timeout: config.readHeaderTimeoutMs / 1000 } : {}),
      ...(config.readTimeoutMs !== undefined ? { http_read_timeout: config.readTimeoutMs / 1000 } : {}),
      ...(config.idleTimeoutMs !== undefined ? { http_idle_timeout: config.idleTimeoutMs / 1000 } : {}),
      ...(config.writeTimeoutMs !== undefined ? { http_write_timeout: config.writeTimeoutMs / 1000 } : {}),
      ...(config.maxRequestDurationMs !== undefined ? { max_request_duration: config.maxRequestDurationMs / 1000 } : {}),
      telemetry: { unauthenticated_metrics_access: config.unauthenticatedMetricsAccess ?? false },
    },
  };
}

function storage(config: StorageConfig): Record<string, unknown> {
  switch (config.kind) {
    case 'leveldb':
      return { type: 'leveldb', path: config.path };
    case 'inmem':
      return { type: 'inmem' };
    case 'postgresql':
      return { type: 'postgresql', table: config.table, ha_enabled: config.haEnabled, max_parallel: config.maxParallel };
  }
}
