/**
 * Minting a token from a request (auth/token/create*) or from a login's auth result, and the
 * shapes Vault clients read back: the `auth` block and the lookup `data`.
 */
import { BadRequestError } from '../../errors.js';
import type { ResolvedToken, TokenAuthOrigin, TokenEntry, TokenStore, TokenType } from '../token-store.js';
import { resolveTokenTtl } from '../ttl.js';
import { RESERVED_POLICY_NAMES, ROOT_POLICY_NAME } from '../policy/builtin.js';

export interface IssueRequest {
  readonly policies: readonly string[];
  readonly noDefaultPolicy: boolean;
  readonly meta: Readonly<Record<string, string>> | null;
  /** Shown as given (callers add Vault's prefixes). */
  readonly displayName: string;
  readonly numUses: number;
  readonly ttl: number;
  readonly explicitMaxTtl: number;
  readonly period: number;
  readonly roleMaxTtl: number;
  readonly renewable: boolean;
  readonly type: TokenType;
  readonly boundCidrs: readonly string[];
  readonly entityId: string;
  readonly role: string;
  readonly path: string;
  /** Undefined for an orphan. */
  readonly parent: ResolvedToken | undefined;
  /** Present exactly when the token comes from a login through an auth method. */
  readonly origin?: TokenAuthOrigin;
  readonly id?: string;
  /** Effective TTLs of the mount the token is issued through. */
  readonly mountDefault: number;
  readonly mountMax: number;
}

/** Lower-cased, trimmed, unique and sorted; `default` added unless refused; `root` stands alone. */
export function sanitizePolicies(policies: readonly string[], addDefault: boolean): string[] {
  const set = new Set(policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''));
  if (set.has(ROOT_POLICY_NAME)) return [ROOT_POLICY_NAME];
  if (addDefault) set.add('default');
  return [...set].sort();
}

/**
 * Mints a token. Whoever asks, no token may hold a reserved policy other than root, and a login
 * may not produce a root token (Vault refuses both, on token creation and on login alike).
 */
/** What issuing a token needs of the token store. */
export type TokenIssuer = Pick<TokenStore, 'now' | 'create'>;

export async function issueToken(store: TokenIssuer, request: IssueRequest): Promise<{ id: string; entry: TokenEntry; warnings: string[] }> {
  const policies = sanitizePolicies(request.policies, !request.noDefaultPolicy);
  if (policies.length === 0) throw new BadRequestError('token must have at least one policy');
  const reserved = policies.find((p) => p !== ROOT_POLICY_NAME && RESERVED_POLICY_NAMES.has(p));
  if (reserved) throw new BadRequestError(`cannot assign policy "${reserved}"`);
  const isRoot = policies.includes(ROOT_POLICY_NAME);
  if (isRoot && request.origin) throw new BadRequestError('auth methods cannot create root tokens');
  if (request.numUses < 0) throw new BadRequestError('number of uses cannot be negative');
  if (request.type === 'batch') {
    if (isRoot) throw new BadRequestError('batch tokens cannot be root tokens');
    if (request.period > 0) throw new BadRequestError('batch tokens cannot be periodic');
    if (request.numUses > 0) throw new BadRequestError('batch tokens cannot have a limited number of uses');
    if (request.explicitMaxTtl > 0) throw new BadRequestError('batch tokens cannot have an explicit max TTL');
  }
  const now = store.now();
  const lifetime = resolveTokenTtl({
    requested: request.ttl,
    period: request.period,
    explicitMaxTtl: request.explicitMaxTtl,
    roleMaxTtl: request.roleMaxTtl,
    mountDefault: request.mountDefault,
    mountMax: request.mountMax,
    neverExpires: isRoot && request.ttl === 0 && request.period === 0 && request.explicitMaxTtl === 0,
    now,
    parentExpire: request.parent?.entry.expireTime ?? 0,
  });
  const { id, entry } = await store.create(
    {
      parent: request.parent?.hash ?? '',
      policies,
      path: request.path,
      meta: request.meta && Object.keys(request.meta).length > 0 ? request.meta : null,
      displayName: request.displayName,
      numUses: request.numUses,
      creationTime: now,
      ttl: lifetime.ttl,
      creationTtl: lifetime.ttl,
      expireTime: lifetime.expireTime,
      explicitMaxTtl: request.explicitMaxTtl,
      maxTtl: lifetime.maxTtl,
      period: request.period,
      // A token that never expires has nothing to renew; batch tokens are never renewable.
      renewable: request.type === 'service' && lifetime.ttl > 0 && request.renewable,
      type: request.type,
      boundCidrs: request.boundCidrs,
      entityId: request.entityId,
      role: request.role,
      lastRenewalTime: 0,
      ...(request.origin ? { origin: request.origin } : {}),
    },
    request.id,
  );
  return { id, entry, warnings: lifetime.warnings };
}

/** Vault's `auth` block for a freshly issued or renewed token. */
export function authBlock(id: string, entry: TokenEntry): Record<string, unknown> {
  return {
    client_token: id,
    accessor: entry.accessor,
    policies: entry.policies,
    token_policies: entry.policies,
    metadata: entry.meta,
    lease_duration: entry.ttl,
    renewable: entry.renewable,
    entity_id: entry.entityId,
    token_type: entry.type,
    orphan: entry.parent === '',
    mfa_requirement: null,
    num_uses: entry.numUses,
  };
}

/** Seconds since the epoch as Vault prints a time: RFC 3339 in UTC, without zero fractions. */
export function rfc3339(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.000Z$/, 'Z');
}

/**
 * Vault's lookup `data`; `id` is '' for lookups by accessor. `identityPolicies`: what the token's
 * entity and its groups add to its own policies at each use.
 */
export function lookupData(id: string, entry: TokenEntry, now: number, identityPolicies: readonly string[]): Record<string, unknown> {
  return {
    id,
    accessor: entry.accessor,
    policies: entry.policies,
    path: entry.path,
    meta: entry.meta,
    display_name: entry.displayName,
    num_uses: Math.max(entry.numUses, 0),
    orphan: entry.parent === '',
    creation_time: entry.creationTime,
    creation_ttl: entry.creationTtl,
    expire_time: entry.expireTime ? rfc3339(entry.expireTime) : null,
    ttl: entry.expireTime ? Math.max(entry.expireTime - now, 0) : 0,
    explicit_max_ttl: entry.explicitMaxTtl,
    entity_id: entry.entityId,
    type: entry.type,
    renewable: entry.renewable,
    issue_time: rfc3339(entry.creationTime),
    identity_policies: [...identityPolicies],
    ...(entry.lastRenewalTime ? { last_renewal_time: entry.lastRenewalTime, last_renewal: rfc3339(entry.lastRenewalTime) } : {}),
    ...(entry.period ? { period: entry.period } : {}),
    ...(entry.boundCidrs.length ? { bound_cidrs: entry.boundCidrs } : {}),
    ...(entry.role ? { role: entry.role } : {}),
  };
}

/** `token-<name>` with characters outside [A-Za-z0-9-] replaced and one trailing `-` dropped, as Vault stores display names. */
export function tokenDisplayName(name: string | undefined): string {
  if (!name) return 'token';
  return `token-${name}`.replace(/[^A-Za-z0-9-]/g, '-').replace(/-$/, '');
}
