/**
 * The `config` object of sys/mounts and sys/auth enable and tune: parsed with the framework's field
 * coercions so `""`/null mean unset and durations may be strings, exactly like top-level fields.
 */
import { BadRequestError } from '../../errors.js';
import { compileFields, refuseUnhonoured, type FieldSpecs } from '../../framework/index.js';
import type { MountConfig, MountEntry, MountTableName } from '../../mounts/mount-entry.js';
import { TOKEN_HEADERS } from '../../pipeline/backend-headers.js';
import { lockoutTuneInfo } from '../../auth/lockout/settings.js';

export const MOUNT_CONFIG_FIELDS = {
  default_lease_ttl: { type: 'duration', description: 'Default lease TTL for this mount; "" or 0 means the system default.' },
  max_lease_ttl: { type: 'duration', description: 'Maximum lease TTL for this mount; "" or 0 means the system maximum.' },
  audit_non_hmac_request_keys: { type: 'comma-string-list', description: 'Request keys the audit log records without HMAC.' },
  audit_non_hmac_response_keys: { type: 'comma-string-list', description: 'Response keys the audit log records without HMAC.' },
  listing_visibility: {
    type: 'string',
    description: 'Visibility in the unauthenticated mount listing (sys/internal/ui/mounts): "unauth" lists the mount there, for the web UI\'s sign-in page; "" or "hidden" does not.',
    allowedValues: ['', 'unauth', 'hidden'],
  },
  passthrough_request_headers: {
    type: 'comma-string-list',
    description:
      'Request headers passed to the backend; it receives no others. X-Vault-Token and X-Service-Token are refused, and an ' +
      'Authorization header is passed only when it does not carry the request\'s token.',
  },
  token_type: {
    type: 'string',
    description: 'Auth mounts: the type of token logins issue.',
    allowedValues: ['default-service', 'default-batch', 'service', 'batch'],
  },
  plugin_version: { type: 'string', description: 'The catalog version of the plugin to run; a tune takes effect at the next reload (sys/plugins/reload/backend).' },
} as const satisfies FieldSpecs;

/**
 * Config fields Vault reads (from `config` on enable, at the top level on tune) that no mount here
 * honours, with why. force_no_cache and allowed_response_headers are Vault CE fields too: backends
 * here keep their caches, and set no response headers for an allow-list to let through.
 */
const REFUSED_CONFIG = {
  allowed_managed_keys: 'managed keys are a Vault Enterprise feature; no managed-key registry exists here',
  allowed_response_headers: 'backends here set no response headers, so there are none to allow',
  delegated_auth_accessors: 'no backend here requests delegated authentication',
  force_no_cache: 'backends here keep their caches (transit sizes its key cache with cache-config)',
  identity_token_key: 'plugin identity tokens (workload identity federation) are not issued here',
  options: 'mount options are set by the top-level options field (Vault ignores them inside config)',
  trim_request_trailing_slashes: 'request paths are routed as sent; trailing slashes are never trimmed',
  user_lockout_config: 'user lockout is set by the tune of an auth method once it is enabled (sys/auth/:path/tune), as in Vault',
} as const satisfies Readonly<Record<string, string>>;

const { allowed_managed_keys, allowed_response_headers, delegated_auth_accessors, identity_token_key, trim_request_trailing_slashes } = REFUSED_CONFIG;

/** The refused fields of `sys/<table>/:path/tune`: those Vault's tune of that table defines. */
export const REFUSED_TUNE_FIELDS: Readonly<Record<MountTableName, Readonly<Record<string, string>>>> = {
  secret: {
    allowed_managed_keys,
    allowed_response_headers,
    delegated_auth_accessors,
    identity_token_key,
    trim_request_trailing_slashes,
    user_lockout_config: 'user lockout applies to the logins of auth methods (sys/auth/:path/tune)',
  },
  auth: { allowed_response_headers, identity_token_key, trim_request_trailing_slashes },
};

/** The tune field of auth mounts whose logins are under user lockout (core/auth/lockout/settings.ts). */
export const USER_LOCKOUT_TUNE_FIELD = {
  type: 'map',
  description:
    'User lockout of the logins of this auth method (userpass, approle): lockout_threshold, lockout_duration, ' +
    'lockout_counter_reset_duration (or lockout_counter_reset), lockout_disable; a duration of "system" goes back to the server configuration\'s.',
} as const;

const parser = compileFields(MOUNT_CONFIG_FIELDS);

/**
 * Parses a `config` object into the fields it sets, refusing the fields no mount here honours.
 * Its plugin_version is returned apart: the mount table checks it against the catalog.
 */
export function parseMountConfig(
  raw: Record<string, unknown> | undefined,
  table: MountTableName,
): { config: Partial<MountConfig>; pluginVersion?: string } {
  if (!raw) return { config: {} };
  refuseUnhonoured(REFUSED_CONFIG, raw, 'config: ');
  let parsed: Record<string, unknown>;
  try {
    parsed = parser.parse(raw).input;
  } catch (err) {
    if (err instanceof BadRequestError) throw new BadRequestError(`config: ${err.message}`);
    throw err;
  }
  const { plugin_version: pluginVersion, ...config } = parsed;
  if (table === 'secret' && config.token_type !== undefined) {
    throw new BadRequestError('config: token_type can only be set on auth mounts');
  }
  for (const header of (config.passthrough_request_headers as string[] | undefined) ?? []) {
    const token = TOKEN_HEADERS.get(header.toLowerCase());
    if (token) throw new BadRequestError(`passthrough_request_headers: ${token} carries the caller's token and is never passed to a backend`);
  }
  return { config: config as Partial<MountConfig>, ...(pluginVersion !== undefined ? { pluginVersion: pluginVersion as string } : {}) };
}

/**
 * Checks a mount's effective TTLs against each other. As in Vault, a mount's own max_lease_ttl may
 * exceed the system maximum (an operator raising one mount's limit); only default ≤ max is checked.
 */
export function checkLeaseTtls(config: MountConfig, systemMax: number): void {
  const max = config.max_lease_ttl || systemMax;
  if (config.default_lease_ttl > max) throw new BadRequestError('default_lease_ttl cannot be greater than max_lease_ttl');
}

/** Options are string → string (kv's `version`, …). */
export function parseOptions(raw: Record<string, unknown> | undefined): Record<string, string> | null {
  if (!raw) return null;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object' || typeof value === 'function') throw new BadRequestError(`options: value of "${key}" must be a string`);
    out[key] = String(value as string | number | boolean | bigint | symbol);
  }
  return out;
}

/**
 * A mount as sys/mounts and sys/auth list it: `plugin_version` is the version asked for (empty:
 * chosen by the catalog), `running_*` what the live backend runs (empty when it failed to start).
 */
export function mountInfo(entry: MountEntry, running?: { readonly version: string; readonly sha256: string }): Record<string, unknown> {
  const c = entry.config;
  return {
    type: entry.type,
    description: entry.description,
    accessor: entry.accessor,
    uuid: entry.uuid,
    local: entry.local,
    seal_wrap: entry.seal_wrap,
    external_entropy_access: entry.external_entropy_access,
    options: entry.options,
    plugin_version: entry.plugin_version,
    running_plugin_version: running?.version ?? '',
    running_sha256: running?.sha256 ?? '',
    config: {
      default_lease_ttl: c.default_lease_ttl,
      max_lease_ttl: c.max_lease_ttl,
      force_no_cache: c.force_no_cache,
      ...(c.audit_non_hmac_request_keys.length ? { audit_non_hmac_request_keys: c.audit_non_hmac_request_keys } : {}),
      ...(c.audit_non_hmac_response_keys.length ? { audit_non_hmac_response_keys: c.audit_non_hmac_response_keys } : {}),
      ...(c.listing_visibility ? { listing_visibility: c.listing_visibility } : {}),
      ...(c.passthrough_request_headers.length ? { passthrough_request_headers: c.passthrough_request_headers } : {}),
      ...(c.allowed_response_headers.length ? { allowed_response_headers: c.allowed_response_headers } : {}),
      ...(entry.table === 'auth' ? { token_type: c.token_type ?? 'default-service' } : {}),
      ...(c.user_lockout_config ? { user_lockout_config: lockoutTuneInfo(c.user_lockout_config) } : {}),
    },
  };
}

/** The tune read body: effective TTLs (the system value where the mount sets none). */
export function tuneInfo(entry: MountEntry, defaults: { defaultLeaseTtl: number; maxLeaseTtl: number }): Record<string, unknown> {
  const c = entry.config;
  return {
    description: entry.description,
    default_lease_ttl: c.default_lease_ttl || defaults.defaultLeaseTtl,
    max_lease_ttl: c.max_lease_ttl || defaults.maxLeaseTtl,
    force_no_cache: c.force_no_cache,
    ...(entry.options ? { options: entry.options } : {}),
    ...(entry.plugin_version ? { plugin_version: entry.plugin_version } : {}),
    ...(entry.table === 'auth' ? { token_type: c.token_type ?? 'default-service' } : {}),
    ...(c.audit_non_hmac_request_keys.length ? { audit_non_hmac_request_keys: c.audit_non_hmac_request_keys } : {}),
    ...(c.audit_non_hmac_response_keys.length ? { audit_non_hmac_response_keys: c.audit_non_hmac_response_keys } : {}),
    ...(c.listing_visibility ? { listing_visibility: c.listing_visibility } : {}),
    ...(c.passthrough_request_headers.length ? { passthrough_request_headers: c.passthrough_request_headers } : {}),
    ...(c.allowed_response_headers.length ? { allowed_response_headers: c.allowed_response_headers } : {}),
    ...(c.user_lockout_config ? lockoutTuneInfo(c.user_lockout_config) : {}),
  };
}
