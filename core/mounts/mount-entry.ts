/**
 * One row of a mount table, as persisted behind the barrier and shown by sys/mounts and sys/auth.
 * An entry is never changed: a tune makes a new one (copy-on-write), which replaces it.
 */
import { BadRequestError } from '../errors.js';
import type { TokenTypeSetting } from '../auth/token/token-type.js';
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
  /** Auth mounts only: the type of token logins issue (auth/token/token-type.ts). */
  token_type?: TokenTypeSetting;
  /** Auth mounts whose logins are under user lockout: the tune's `user_lockout_config`. */
  user_lockout_config?: MountLockoutConfig;
}

export interface MountEntry {
  readonly table: MountTableName;
  /** Relative to its table, with a trailing slash: `transit/`, `crypto/eu/`, `cloud/`. */
  readonly path: string;
  readonly type: string;
  readonly description: string;
  readonly uuid: string;
  readonly accessor: string;
  readonly local: boolean;
  readonly seal_wrap: boolean;
  readonly external_entropy_access: boolean;
  readonly options: Readonly<Record<string, string>> | null;
  readonly config: Readonly<MountConfig>;
  readonly plugin_version: string;
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

/** `a/b`, `/a/b/`, `a/b/` → `a/b/`; refuses empty, relative and odd segments. */
export function normalizeMountPath(raw: string): string {
  const trimmed = raw.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '') throw new BadRequestError('mount path must not be empty');
  for (const segment of trimmed.split('/')) {
    if (segment === '' || segment === '.' || segment === '..' || !/^[\w.-]+$/.test(segment)) {
      throw new BadRequestError(`invalid mount path "${raw}": segments may hold letters, digits, "_", "-" and "."`);
    }
  }
  return `${trimmed}/`;
}

/** Whether two mounts' options are the same settings (null and {} alike, in any key order). */
export function sameOptions(a: Readonly<Record<string, string>> | null, b: Readonly<Record<string, string>> | null): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((k) => Object.hasOwn(right, k) && left[k] === right[k]);
}
