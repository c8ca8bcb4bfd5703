/**
 * The `config` object of sys/mounts and sys/auth enable and tune: parsed with the framework's field
 * coercions so `""`/null mean unset and durations may be strings, exactly like top-level fields.
 */
import { BadRequestError } from '../../errors.js';
import { compileFields, type FieldSpecs } from '../../framework/index.js';
import type { MountConfig, MountEntry } from '../../mounts/mount-entry.js';

export const MOUNT_CONFIG_FIELDS = {
  default_lease_ttl: { type: 'duration', description: 'Default lease TTL for this mount; "" or 0 means the system default.' },
  max_lease_ttl: { type: 'duration', description: 'Maximum lease TTL for this mount; "" or 0 means the system maximum.' },
  force_no_cache: { type: 'bool', description: 'Disable caching for this mount.' },
  audit_non_hmac_request_keys: { type: 'comma-string-list', description: 'Request keys the audit log records without HMAC.' },
  audit_non_hmac_response_keys: { type: 'comma-string-list', description: 'Response keys the audit log records without HMAC.' },
  listing_visibility: { type: 'string', description: 'Visibility in unauthenticated mount listings.', allowedValues: ['', 'unauth', 'hidden'] },
  passthrough_request_headers: { type: 'comma-string-list', description: 'Request headers passed to the backend.' },
  allowed_response_headers: { type: 'comma-string-list', description: 'Response headers the backend may set.' },
  token_type: {
    type: 'string',
    description: 'Auth mounts: the type of token logins issue.',
    allowedValues: ['default-service', 'default-batch', 'service', 'batch'],
  },
  options: { type: 'map', description: 'Ignored here; the top-level options field configures the mount.' },
  plugin_version: { type: 'string', description: 'Accepted for compatibility; the registered version always runs.' },
} as const satisfies FieldSpecs;

const parser = compileFields(MOUNT_CONFIG_FIELDS);

/** Parses a `config` object into the fields it sets. */
export function parseMountConfig(raw: Record<string, unknown> | undefined, table: 'secret' | 'auth'): Partial<MountConfig> {
  if (!raw) return {};
  let parsed: Record<string, unknown>;
  try {
    parsed = parser.parse(raw).input;
  } catch (err) {
    if (err instanceof BadRequestError) throw new BadRequestError(`config: ${err.message}`);
    throw err;
  }
  const { options: _options, plugin_version: _version, ...config } = parsed;
  if (table === 'secret' && config.token_type !== undefined) {
    throw new BadRequestError('config: token_type can only be set on auth mounts');
  }
  return config as Partial<MountConfig>;
}

/** Checks the effective TTLs of a mount against each other and the system maximum. */
export function checkLeaseTtls(config: MountConfig, systemMax: number): void {
  const max = config.max_lease_ttl || systemMax;
  const dflt = config.default_lease_ttl;
  if (config.max_lease_ttl > systemMax) throw new BadRequestError(`max_lease_ttl cannot be greater than the system maximum of ${systemMax}s`);
  if (dflt > max) throw new BadRequestError('default_lease_ttl cannot be greater than max_lease_ttl');
}

/** Options are string → string (kv's `version`, …). */
export function parseOptions(raw: Record<string, unknown> | undefined): Record<string, string> | null {
  if (!raw) return null;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object') throw new BadRequestError(`options: value of "${key}" must be a string`);
    out[key] = String(value);
  }
  return out;
}

/** A mount as sys/mounts and sys/auth list it. */
export function mountInfo(entry: MountEntry): Record<string, unknown> {
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
    plugin_version: '',
    running_plugin_version: entry.plugin_version,
    running_sha256: '',
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
    ...(entry.table === 'auth' ? { token_type: c.token_type ?? 'default-service' } : {}),
    ...(c.audit_non_hmac_request_keys.length ? { audit_non_hmac_request_keys: c.audit_non_hmac_request_keys } : {}),
    ...(c.audit_non_hmac_response_keys.length ? { audit_non_hmac_response_keys: c.audit_non_hmac_response_keys } : {}),
    ...(c.listing_visibility ? { listing_visibility: c.listing_visibility } : {}),
    ...(c.passthrough_request_headers.length ? { passthrough_request_headers: c.passthrough_request_headers } : {}),
    ...(c.allowed_response_headers.length ? { allowed_response_headers: c.allowed_response_headers } : {}),
  };
}
