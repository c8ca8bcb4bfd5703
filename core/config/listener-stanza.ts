/**
 * The configuration file's `listener "tcp" { … }` blocks: the address, TLS and client certificates,
 * request size limits and timeouts, and who may read the metrics without a token.
 */
import path from 'node:path';
import { DEFAULT_MAX_REQUEST_SIZE } from '../http/body.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from '../http/json-limits.js';
import type { ListenerConfig, ListenerTls } from './settings.js';
import {
  boolean, durationMillis, fail, fieldsOf, integer, nonEmptyString, singleBody, string, tlsVersion, ConfigError,
  type LabeledBlock, type Reader, type SourceFile, type Where,
} from './config-values.js';

const LISTENER_KEYS = [
  'address', 'tls_disable', 'tls_cert_file', 'tls_key_file', 'tls_min_version', 'tls_client_ca_file',
  'tls_require_and_verify_client_cert', 'tls_disable_client_certs', 'max_request_size', 'max_unauthenticated_request_size',
  'http_read_header_timeout', 'http_read_timeout', 'http_idle_timeout', 'http_write_timeout', 'telemetry', 'disable_unauthed_generate_root_endpoints',
  'max_json_depth', 'max_json_string_value_length', 'max_json_object_entry_count', 'max_json_array_element_count',
  'max_request_json_strings', 'max_request_duration',
] as const;

type ListenerKey = (typeof LISTENER_KEYS)[number];

const JSON_LIMIT_KEYS: readonly ListenerKey[] = [
  'max_json_depth', 'max_json_string_value_length', 'max_json_object_entry_count', 'max_json_array_element_count', 'max_request_json_strings',
];

export function readListener(block: LabeledBlock, source: SourceFile): ListenerConfig {
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
  const idleTimeoutMs = read('http_idle_timeout', durationMillis);
  const writeTimeoutMs = read('http_write_timeout', durationMillis);
  const maxRequestSize = read('max_request_size', integer);
  const maxUnauthenticated = read('max_unauthenticated_request_size', integer);
  if (maxUnauthenticated !== undefined && maxUnauthenticated < 0) {
    fail(at('max_unauthenticated_request_size'), 'max_unauthenticated_request_size cannot be negative: what a request without a token may send is always bounded (0 means the default, 1 MiB)');
  }
  const jsonLimits = readJsonLimits(read, at);
  const maxRequestDurationMs = read('max_request_duration', durationMillis);
  if (maxRequestDurationMs !== undefined && maxRequestDurationMs < 0) fail(at('max_request_duration'), 'max_request_duration cannot be negative (0 means the default, 90s)');
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
    // Only when configured, as the timeouts: the HTTP layer owns the defaults.
    ...(JSON_LIMIT_KEYS.some((key) => fields.has(key)) ? { jsonLimits } : {}),
    // Only when configured: the listener owns the defaults.
    ...(readHeaderTimeoutMs !== undefined ? { readHeaderTimeoutMs } : {}),
    ...(readTimeoutMs !== undefined ? { readTimeoutMs } : {}),
    ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
    ...(writeTimeoutMs !== undefined ? { writeTimeoutMs } : {}),
    // 0 means the default, as in Vault.
    ...(maxRequestDurationMs ? { maxRequestDurationMs } : {}),
  };
}

/**
 * The JSON limits (json-limits.ts); 0 or absent means the default, as in Vault. Vault's four
 * cannot be turned off (they keep a body from exhausting the stack or the audit log);
 * `max_request_json_strings` below 0 turns it off, as in OpenBao.
 */
function readJsonLimits(read: <T>(key: ListenerKey, reader: Reader<T>) => T | undefined, at: (key: ListenerKey) => Where): JsonLimits {
  const bounded = (key: ListenerKey, fallback: number): number => {
    const value = read(key, integer);
    if (value !== undefined && value < 0) fail(at(key), `${key} cannot be negative: it bounds what one request costs the server (0 means the default, ${fallback})`);
    return value || fallback;
  };
  const strings = read('max_request_json_strings', integer);
  return {
    depth: bounded('max_json_depth', DEFAULT_JSON_LIMITS.depth),
    stringLength: bounded('max_json_string_value_length', DEFAULT_JSON_LIMITS.stringLength),
    objectEntries: bounded('max_json_object_entry_count', DEFAULT_JSON_LIMITS.objectEntries),
    arrayElements: bounded('max_json_array_element_count', DEFAULT_JSON_LIMITS.arrayElements),
    strings: strings === undefined || strings === 0 ? DEFAULT_JSON_LIMITS.strings : strings < 0 ? -1 : strings,
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

