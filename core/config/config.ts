/**
 * The server configuration file (JSON): listener, storage, TTL defaults, logging, plugins.
 * Checked as a whole when loaded, so a typo fails start-up with a message that names the key.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { parseBool, parseDurationExact, parseDurationSeconds } from '../framework/fields.js';
import { DEFAULT_MAX_REQUEST_SIZE } from '../http/body.js';
import { DEFAULT_READ_HEADER_TIMEOUT_MS, DEFAULT_READ_TIMEOUT_MS } from '../http/listener.js';

export interface ServerConfig {
  readonly listener: {
    readonly address: string;
    readonly tlsDisable: boolean;
    readonly tlsCertFile?: string;
    readonly tlsKeyFile?: string;
    readonly maxRequestSize: number;
    /** Milliseconds a client may take to send a request's headers (0: no limit; default 10 s). */
    readonly readHeaderTimeoutMs?: number;
    /** Milliseconds a client may take to send a whole request, body included (0: no limit; default 30 s). */
    readonly readTimeoutMs?: number;
    /**
     * `disable_unauthed_generate_root_endpoints` (OpenBao's name): refuse Vault's unauthenticated
     * `sys/generate-root/*`, leaving the token-authenticated `sys/generate-root-token/*`.
     */
    readonly disableUnauthedGenerateRootEndpoints?: boolean;
  };
  readonly storage:
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
  /** Seconds. */
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
  readonly apiAddr?: string;
  readonly logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  /** A directory of plugin modules (`*.js`, default export a plugin manifest). */
  readonly pluginDirectory?: string;
  /** Where `keywarden server` writes its process id while it runs. */
  readonly pidFile?: string;
  /** How often backends' periodic hooks run, in milliseconds; 0 turns the timer off. */
  readonly periodicIntervalMs: number;
  /** The cloud auth method's server-wide switches. */
  readonly cloudAuth?: {
    /**
     * Accept SHA-1 PKCS#7 signatures (the DSA-SHA1 `pkcs7` identity document) at ec2 login. Off
     * by default: SHA-1 is deprecated, and the `rsa2048` document or identity + signature work without it.
     */
    readonly allowSha1Signatures: boolean;
  };
}

export class ConfigError extends Error {}

const duration = { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string' }] };
/** As Vault reads `tls_disable`: a boolean, 0 or 1, or a word of Go's ParseBool. */
const bool = {
  anyOf: [
    { type: 'boolean' },
    { type: 'integer', enum: [0, 1] },
    { type: 'string', enum: ['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'] },
  ],
};

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    listener: {
      type: 'object',
      additionalProperties: false,
      properties: {
        tcp: {
          type: 'object',
          additionalProperties: false,
          properties: {
            address: { type: 'string' },
            tls_disable: bool,
            tls_cert_file: { type: 'string' },
            tls_key_file: { type: 'string' },
            max_request_size: { type: 'integer' },
            http_read_header_timeout: duration,
            http_read_timeout: duration,
            disable_unauthed_generate_root_endpoints: bool,
          },
        },
      },
    },
    storage: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      properties: {
        leveldb: { type: 'object', additionalProperties: false, required: ['path'], properties: { path: { type: 'string', minLength: 1 } } },
        inmem: { type: 'object' },
        postgresql: {
          type: 'object',
          additionalProperties: false,
          required: ['connection_url'],
          properties: {
            connection_url: { type: 'string', minLength: 1 },
            table: { type: 'string', minLength: 1 },
            ha_enabled: bool,
            max_parallel: { anyOf: [{ type: 'integer', minimum: 1, maximum: 1000 }, { type: 'string', pattern: '^[1-9][0-9]{0,2}$' }] },
          },
        },
      },
    },
    default_lease_ttl: duration,
    max_lease_ttl: duration,
    api_addr: { type: 'string' },
    log_level: { type: 'string', enum: ['trace', 'debug', 'info', 'warn', 'warning', 'error'] },
    plugin_directory: { type: 'string' },
    pid_file: { type: 'string', minLength: 1 },
    periodic_interval: duration,
    cloud_auth: { type: 'object', additionalProperties: false, properties: { allow_sha1_signatures: bool } },
    ui: {},
    disable_mlock: {},
    cluster_name: { type: 'string' },
  },
} as const;

const validate = new Ajv({ allErrors: false, strict: false }).compile(schema);

const DEFAULT_TTL = 768 * 3600;

function toBool(v: unknown): boolean {
  return v === undefined ? false : parseBool(v);
}

/** A TTL in seconds; unset, "" and 0 mean the default, as in Vault's NewCore. */
function toSeconds(v: unknown, key: string, fallback: number): number {
  if (v === undefined || v === '') return fallback;
  try {
    return parseDurationSeconds(v) || fallback;
  } catch (err) {
    throw new ConfigError(`${key}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function toMillis(v: unknown, key: string, fallback: number): number {
  if (v === undefined || v === '') return fallback;
  try {
    return Math.round(parseDurationExact(v) * 1000);
  } catch (err) {
    throw new ConfigError(`${key}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Builds a config from a parsed document; relative paths resolve against `baseDir`. */
export function parseConfig(doc: unknown, baseDir: string): ServerConfig {
  if (!validate(doc)) {
    const e = validate.errors![0]!;
    const where = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(top level)';
    const extra = e.keyword === 'additionalProperties' ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"` : '';
    throw new ConfigError(`invalid configuration at ${where}: ${e.message ?? 'invalid'}${extra}`);
  }
  const d = doc as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const tcp = d.listener?.tcp ?? {};
  const tlsDisable = toBool(tcp.tls_disable);
  if (!tlsDisable && (!tcp.tls_cert_file || !tcp.tls_key_file)) {
    throw new ConfigError('listener.tcp: tls_cert_file and tls_key_file are required unless tls_disable is true');
  }
  const readHeaderTimeoutMs = toMillis(tcp.http_read_header_timeout, 'listener.tcp.http_read_header_timeout', DEFAULT_READ_HEADER_TIMEOUT_MS);
  const readTimeoutMs = toMillis(tcp.http_read_timeout, 'listener.tcp.http_read_timeout', DEFAULT_READ_TIMEOUT_MS);
  if (tcp.http_read_header_timeout !== undefined && tcp.http_read_timeout !== undefined && readTimeoutMs > 0 && readHeaderTimeoutMs > readTimeoutMs) {
    throw new ConfigError('listener.tcp: http_read_header_timeout cannot be greater than http_read_timeout');
  }
  const defaultLeaseTtl = toSeconds(d.default_lease_ttl, 'default_lease_ttl', DEFAULT_TTL);
  const maxLeaseTtl = toSeconds(d.max_lease_ttl, 'max_lease_ttl', DEFAULT_TTL);
  if (defaultLeaseTtl > maxLeaseTtl) throw new ConfigError('default_lease_ttl cannot be greater than max_lease_ttl');
  const storage: ServerConfig['storage'] = d.storage?.leveldb
    ? { kind: 'leveldb', path: path.resolve(baseDir, d.storage.leveldb.path) }
    : d.storage?.inmem
      ? { kind: 'inmem' }
      : d.storage?.postgresql
        ? postgresStorage(d.storage.postgresql)
        : (() => {
            throw new ConfigError('storage: a "leveldb" (with "path"), "postgresql" (with "connection_url") or "inmem" block is required');
          })();
  // Standbys forward writes to the active node's api_addr, so an HA node must advertise one.
  const apiAddr = d.api_addr ?? process.env.KEYWARDEN_API_ADDR ?? process.env.VAULT_API_ADDR;
  if (storage.kind === 'postgresql' && storage.haEnabled) {
    if (!apiAddr) throw new ConfigError('api_addr is required with storage.postgresql.ha_enabled: standby nodes forward writes to the active node at this address');
    if (!/^https?:\/\/[^/\s]+\/?$/.test(apiAddr)) throw new ConfigError(`api_addr must be a URL like "https://10.0.0.5:8200", got "${apiAddr}"`);
  }
  return {
    listener: {
      address: tcp.address ?? '127.0.0.1:8200',
      tlsDisable,
      ...(tlsDisable ? {} : { tlsCertFile: path.resolve(baseDir, tcp.tls_cert_file), tlsKeyFile: path.resolve(baseDir, tcp.tls_key_file) }),
      maxRequestSize: tcp.max_request_size === undefined || tcp.max_request_size === 0 ? DEFAULT_MAX_REQUEST_SIZE : tcp.max_request_size,
      // Only when configured: the listener owns the defaults.
      ...(tcp.http_read_header_timeout !== undefined ? { readHeaderTimeoutMs } : {}),
      ...(tcp.http_read_timeout !== undefined ? { readTimeoutMs } : {}),
      ...(tcp.disable_unauthed_generate_root_endpoints !== undefined
        ? { disableUnauthedGenerateRootEndpoints: toBool(tcp.disable_unauthed_generate_root_endpoints) }
        : {}),
    },
    storage,
    defaultLeaseTtl,
    maxLeaseTtl,
    ...(apiAddr ? { apiAddr: apiAddr.replace(/\/$/, '') } : {}),
    logLevel: d.log_level === 'warning' ? 'warn' : (d.log_level ?? 'info'),
    ...(d.plugin_directory ? { pluginDirectory: path.resolve(baseDir, d.plugin_directory) } : {}),
    ...(d.pid_file ? { pidFile: path.resolve(baseDir, d.pid_file) } : {}),
    periodicIntervalMs: toMillis(d.periodic_interval, 'periodic_interval', 60_000),
    ...(d.cloud_auth ? { cloudAuth: { allowSha1Signatures: toBool(d.cloud_auth.allow_sha1_signatures) } } : {}),
  };
}

function postgresStorage(block: Record<string, unknown>): ServerConfig['storage'] {
  const table = (block.table as string | undefined) ?? 'keywarden_store';
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(table)) {
    throw new ConfigError(`storage.postgresql.table: "${table}" is not a plain table name (lower-case letters, digits and "_", at most 51 characters)`);
  }
  if (!/^postgres(ql)?:\/\//.test(block.connection_url as string)) {
    // Not echoed back: the value may hold a password.
    throw new ConfigError('storage.postgresql.connection_url must be a URL starting with postgres:// or postgresql://');
  }
  return {
    kind: 'postgresql',
    connectionUrl: block.connection_url as string,
    table,
    haEnabled: toBool(block.ha_enabled),
    maxParallel: block.max_parallel === undefined ? 10 : Number(block.max_parallel),
  };
}

export function loadConfigFile(file: string): ServerConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseConfig(doc, path.dirname(path.resolve(file)));
}

/** `host:port` → parts; the port may be 0 (tests: any free port). */
export function splitAddress(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address);
  if (!m) throw new ConfigError(`listener.tcp.address must be host:port, got "${address}"`);
  const port = Number(m[3]);
  if (port > 65535) throw new ConfigError(`listener.tcp.address: port ${port} is out of range`);
  return { host: m[1] ?? m[2]!, port };
}
