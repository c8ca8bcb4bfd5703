/**
 * The logical request and response every backend sees: HTTP details are gone, the path is
 * relative to the mount, and the storage is the mount's own view.
 *
 * A request reaches a backend twice, as Vault's does: `prepare` gets its `RequestTarget` (what is
 * known before authorization: the path, the data, the caller) and decides the operation; the
 * pipeline then authorizes it and builds the `LogicalRequest` its handler runs with, frozen, the
 * operation and the caller's `sudo` settled. Nothing is written into a request after it is built.
 */
import type { Storage } from '../../storage/storage.js';

export type Operation = 'read' | 'list' | 'create' | 'update' | 'delete' | 'patch';

/** Who is calling, as resolved by the host from the client token. */
export interface RequestCaller {
  readonly accessor: string;
  readonly policies: readonly string[];
  readonly displayName: string;
  readonly metadata: Readonly<Record<string, string>>;
  /** The root policy: every capability everywhere. */
  readonly root: boolean;
  readonly entityId: string;
  readonly tokenType: 'service' | 'batch';
}

/** The caller as a handler sees it, once authorized. */
export interface RequestAuth extends RequestCaller {
  /** The caller's policy grants sudo on this path (authorization decided it). */
  readonly sudo: boolean;
}

export interface MountRef {
  /** The mount path with a trailing slash, including `auth/` for auth methods. */
  readonly path: string;
  readonly type: string;
  readonly accessor: string;
  readonly uuid: string;
}

/**
 * A request as `prepare` and an existence check see it: before authorization, so with the caller
 * but no `sudo` decision, and the operation as the client asked it (an `update` may yet become
 * `create`).
 */
export interface RequestTarget {
  readonly id: string;
  readonly operation: Operation;
  /** Relative to the mount; no leading slash. List requests end in `/`. */
  readonly path: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly storage: Storage;
  readonly mount: MountRef;
  readonly clientToken?: string;
  readonly auth?: RequestCaller;
  /**
   * Aborted when the request's deadline (the listener's `max_request_duration`) passes: the client
   * has had its 504 and `storage` refuses every call. A long loop may stop early on it.
   */
  readonly signal?: AbortSignal;
}

/** The request a handler runs with: authorized, its operation final; frozen by the pipeline. */
export interface LogicalRequest extends RequestTarget {
  readonly auth?: RequestAuth;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly connection: { readonly remoteAddress: string };
  /** The response-wrapping TTL the client asked for (X-Vault-Wrap-TTL), seconds; the pipeline wraps the answer. */
  readonly wrapTtl?: number;
  /** The unread body of a path declared with `binaryBody`. */
  readonly bodyStream?: AsyncIterable<Uint8Array>;
}

/** What a login hands the host; the host mints the token (see core/auth). */
export interface AuthResult {
  readonly policies: readonly string[];
  readonly displayName?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly internalData?: Readonly<Record<string, unknown>>;
  readonly alias?: { readonly name: string; readonly metadata?: Readonly<Record<string, string>> };
  /**
   * The login's groups at its identity provider (a JWT/OIDC `groups_claim`), as Vault's group
   * aliases: the login's entity becomes a member of the external groups whose group alias on this
   * mount has one of these names, and leaves those it no longer names (docs/identity.md).
   */
  readonly groupAliases?: readonly { readonly name: string }[];
  readonly ttl?: number;
  readonly maxTtl?: number;
  readonly explicitMaxTtl?: number;
  readonly period?: number;
  readonly numUses?: number;
  readonly boundCidrs?: readonly string[];
  readonly noDefaultPolicy?: boolean;
  readonly tokenType?: 'service' | 'batch' | 'default';
  readonly renewable?: boolean;
}

/** A response body read directly by the HTTP layer, bypassing the envelope (sys/seal-status etc.). */
export interface RawResponse {
  readonly status: number;
  readonly body?: unknown;
  /** Bytes sent as they are produced, instead of `body`: `application/octet-stream` (snapshots) unless `contentType` says otherwise (sys/monitor's text). */
  readonly binary?: AsyncIterable<Uint8Array>;
  /** A body that is text, not JSON (sys/metrics in the Prometheus format), sent with this Content-Type. */
  readonly contentType?: string;
}

/**
 * A secret a secrets engine hands out with a lease (Vault's `logical.Secret`): the host stores a
 * lease for it behind the barrier and answers with its `lease_id`, `lease_duration` and
 * `renewable`; the backend's `renewSecret` and `revokeSecret` get it back (docs/leases.md).
 */
export interface SecretResult {
  /** The kind of secret, for a backend that issues several; handed back as `LeasedSecret.type`. */
  readonly type: string;
  /** The lease's TTL in seconds; absent or 0 is the mount's default lease TTL. Capped by the max TTL. */
  readonly ttl?: number;
  /** How long after its issue the lease may live, renewals included, in seconds; absent or 0 is the mount's max lease TTL. */
  readonly maxTtl?: number;
  /** Whether the lease may be renewed (only if the backend has `renewSecret`); true when absent. */
  readonly renewable?: boolean;
  /** What the backend needs to renew or revoke the secret; kept with the lease, never shown to a client. */
  readonly internalData: Readonly<Record<string, unknown>>;
}

/** A stored lease of a secret, as `renewSecret` and `revokeSecret` get it. Times are Unix seconds. */
export interface LeasedSecret {
  readonly leaseId: string;
  readonly type: string;
  readonly internalData: Readonly<Record<string, unknown>>;
  readonly issueTime: number;
  readonly expireTime: number;
  /** The lease's TTL as last granted, seconds. */
  readonly ttl: number;
  /** The lease's max TTL from its issue, seconds. */
  readonly maxTtl: number;
  /** The TTL a renewal asks for, seconds (0: the lease's own TTL); 0 for a revocation. */
  readonly increment: number;
}

/** The request a secret's renewal or revocation runs with: the mount's storage and the path that issued the secret. */
export interface SecretRequest {
  readonly id: string;
  /** The path that issued the secret, relative to the mount. */
  readonly path: string;
  readonly storage: Storage;
  readonly mount: MountRef;
}

/** What a backend grants on renewal: the new TTL (seconds), which the host caps by the lease's max TTL. */
export interface SecretRenewal {
  readonly ttl: number;
  /** Data for the renewal's answer, if the secret has any to show again. */
  readonly data?: Record<string, unknown>;
}

/** The lease of an answer, as the envelope shows it: set by the host only (a backend's own is dropped). */
export interface LeaseInfo {
  readonly id: string;
  readonly duration: number;
  readonly renewable: boolean;
}

export interface LogicalResponse {
  data?: Record<string, unknown>;
  warnings?: string[];
  /** A login's result: the host mints the token and answers with Vault's auth block. */
  auth?: AuthResult;
  /** An auth block already minted (the token store's create and renew). */
  tokenAuth?: Record<string, unknown>;
  /** A secret to lease: the host stores the lease and answers with its id (secrets engines only). */
  secret?: SecretResult;
  /** The answer's lease in the envelope: set by the host (core/leases/) only. */
  lease?: LeaseInfo;
  /**
   * The HTTP status of an enveloped answer when it is not 200 (transit batches with failed items
   * answer 400 or partial_failure_response_code with the full envelope, as Vault does).
   */
  status?: number;
  raw?: RawResponse;
}

/** A LIST answer: `keys` sorted as given, folders ending in `/`; `keyInfo` optional per key. */
export function listResponse(keys: readonly string[], keyInfo?: Record<string, unknown>): LogicalResponse {
  const data: Record<string, unknown> = { keys: [...keys] };
  if (keyInfo) data.key_info = keyInfo;
  return { data };
}
