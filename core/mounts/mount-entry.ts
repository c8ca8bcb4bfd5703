/** One row of a mount table, as persisted behind the barrier and shown by sys/mounts and sys/auth. */
import type { MountLockoutConfig } from '../auth/lockout/settings.js';

export type MountTableName = 'secret' | 'auth';

export interface MountConfig {
  /** Seconds; 0 means "use the system default". */
  default_lease_ttl: number;
  max_lease_ttl: number;
  force_no_cache: boolean;
  audit_non_hmac_request_keys: string[];
  audit_non_hmac_response_keys: string[];
  listing_visibility: '' | 'unauth' | 'hidden';
  passthrough_request_headers: string[];
  allowed_response_headers: string[];
  /** Auth mounts only: `default-service`, `default-batch`, `service`, `batch`. */
  token_type?: string;
  /** Auth mounts whose logins are under user lockout: the tune's `user_lockout_config`. */
  user_lockout_config?: MountLockoutConfig;
}

export interface MountEntry {
  readonly table: MountTableName;
  /** Relative to its table, with a trailing slash: `transit/`, `crypto/eu/`, `cloud/`. */
  readonly path: string;
  readonly type: string;
  description: string;
  readonly uuid: string;
  readonly accessor: string;
  readonly local: boolean;
  readonly seal_wrap: boolean;
  readonly external_entropy_access: boolean;
  options: Record<string, string> | null;
  config: MountConfig;
  plugin_version: string;
  /** Built in (sys/, token/): cannot be disabled, tuned only partly, never reloaded. */
  readonly builtin?: boolean;
}

/** The request path prefix that routes to this mount (`auth/` added for auth methods). */
export function routePrefixOf(entry: Pick<MountEntry, 'table' | 'path'>): string {
  return entry.table === 'auth' ? `auth/${entry.path}` : entry.path;
}

/**
 * Where a mount's data lives under the barrier: by UUID, so remounting or mounting one plugin
 * twice never collides (`logical/<uuid>/` for secrets engines, `auth/<uuid>/` for auth methods).
 */
export function storagePrefixOf(entry: Pick<MountEntry, 'table' | 'uuid'>): string {
  return entry.table === 'auth' ? `auth/${entry.uuid}/` : `logical/${entry.uuid}/`;
}

export function defaultMountConfig(): MountConfig {
  return {
    default_lease_ttl: 0,
    max_lease_ttl: 0,
    force_no_cache: false,
    audit_non_hmac_request_keys: [],
    audit_non_hmac_response_keys: [],
    listing_visibility: '',
    passthrough_request_headers: [],
    allowed_response_headers: [],
  };
}
