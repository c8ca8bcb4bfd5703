/**
 * What a configuration sets: the server's settings and each block's, as the rest of the server
 * reads them once loadConfig (config.ts) has merged the files and filled in the defaults.
 */
import type { AuditConfig } from '../audit/rules.js';
import type { UserLockoutStanzas } from '../auth/lockout/settings.js';
import type { JsonLimits } from '../http/json-limits.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** One plugin's block as plain values, as its context carries it (`PluginConfig`, core/plugins/plugin.ts). */
export type PluginSettings = Readonly<Record<string, unknown>>;

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
  /** `max_json_*` and `max_request_json_strings`, defaults filled in; absent: the HTTP layer's defaults. */
  readonly jsonLimits?: JsonLimits;
  /** Milliseconds a client may take to send a request's headers (0: no limit; default 10 s). */
  readonly readHeaderTimeoutMs?: number;
  /** Milliseconds a client may take to send a whole request, body included (0: no limit; default 30 s). */
  readonly readTimeoutMs?: number;
  /** Milliseconds a keep-alive connection may wait for its next request (default 5 min; 0: the read timeout). */
  readonly idleTimeoutMs?: number;
  /** Milliseconds from a request's arrival until its response is written (0, the default: no limit). */
  readonly writeTimeoutMs?: number;
  /** `max_request_duration` in milliseconds: a request's deadline (core/pipeline/deadline.ts; default 90 s). */
  readonly maxRequestDurationMs?: number;
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
  /**
   * The deprecated `cloud_auth` block, read as the cloud auth method's plugin block (`plugin "cloud"`,
   * and `plugin "aws"`, its other name; see pluginConfigOf). A file may not have both.
   */
  readonly cloudAuth?: CloudAuthConfig;
  /** Each plugin's block of the configuration file (`plugin "<name>" { … }`), by plugin name. */
  readonly plugins?: Readonly<Record<string, PluginSettings>>;
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
  /** The `user_lockout` stanzas by auth method type ("all": every type); absent: Vault's defaults. */
  readonly userLockout?: UserLockoutStanzas;
  /**
   * The `seal` stanzas, by priority (lowest first): auto seals wrap the root key; absent, Shamir
   * shares unseal.
   */
  readonly seal?: readonly SealStanza[];
  /** The `initialize` stanzas, in order: run once, on the first start of an auto-sealed store. */
  readonly initialize?: readonly SelfInitBlock[];
  /**
   * Serving processes (`workers`); absent: the `-workers` flag's, else the machine's available
   * parallelism (see resolveWorkers). 1 is a single process that owns its store itself.
   */
  readonly workers?: number;
}

/** An ACL operation a self-initialization request performs. */
export type SelfInitOperation = 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list';

/** One `request "<name>" { … }` of an `initialize` stanza. */
export interface SelfInitRequest {
  readonly name: string;
  readonly operation: SelfInitOperation;
  /** The API path after `/v1/`. */
  readonly path: string;
  /** Plain JSON; a string `env://NAME` or `file://PATH` (absolute) is resolved when the request runs. */
  readonly data?: Readonly<Record<string, unknown>>;
  readonly allowFailure: boolean;
  /** `file:line`, for the log. */
  readonly declaredAt: string;
}

export interface SelfInitBlock {
  readonly name: string;
  readonly requests: readonly SelfInitRequest[];
}

/** Where a static seal's key comes from: an environment variable, a file, or the value itself. */
export type KeySource =
  | { readonly kind: 'env'; readonly name: string }
  | { readonly kind: 'file'; readonly path: string }
  /** Base64 or hex of the 32 key bytes. Never logged or echoed in errors. */
  | { readonly kind: 'literal'; readonly value: string };

export interface StaticSealConfig {
  readonly type: 'static';
  readonly currentKeyId: string;
  readonly currentKey: KeySource;
  readonly previous?: { readonly keyId: string; readonly key: KeySource };
}

export interface TransitSealConfig {
  readonly type: 'transit';
  /** `http(s)://host:port`: only ever from this file, never from a client. */
  readonly address: string;
  /** Holds a credential: never log it. Unset: VAULT_TOKEN at start. */
  readonly token?: string;
  readonly mountPath: string;
  readonly keyName: string;
  readonly keyIdPrefix: string;
  readonly disableRenewal: boolean;
  readonly tls: {
    readonly caCert?: string;
    readonly clientCert?: string;
    readonly clientKey?: string;
    readonly serverName?: string;
    readonly skipVerify: boolean;
  };
}

/**
 * Vault's awskms seal. What is unset here is looked up when the server starts (region, kms_key_id,
 * endpoint and the credentials from the environment, then the SDK's own chain).
 */
export interface AwsKmsSealConfig {
  readonly type: 'awskms';
  readonly region?: string;
  /** Credentials: never log them. */
  readonly accessKey?: string;
  readonly secretKey?: string;
  readonly sessionToken?: string;
  readonly kmsKeyId?: string;
  /** `http(s)://host[:port]`: only ever from this file or AWS_KMS_ENDPOINT. */
  readonly endpoint?: string;
}

/**
 * What every stanza has beside its type's settings, with Vault's Seal HA names
 * (https://developer.hashicorp.com/vault/docs/configuration/seal/seal-ha).
 */
export interface SealCommon {
  /** Unique among the stanzas; the type when unset. */
  readonly name: string;
  /** Lowest first: the order the seals are tried in to open the root key. */
  readonly priority: number;
  /** Opens what it wrapped, wraps nothing more: the store moves off it at the next start. */
  readonly disabled: boolean;
}

export type SealStanza = (StaticSealConfig | TransitSealConfig | AwsKmsSealConfig) & SealCommon;
