/**
 * Token lifetimes, as Vault computes them: request → role → mount tune → system defaults, capped by
 * the effective max TTL (or, for periodic tokens, only by explicit_max_ttl), and by the parent's
 * own expiry. Pure functions over seconds. A TTL is never longer than any duration field takes
 * (MAX_DURATION_SECONDS), even from a role or a token stored before durations were bounded.
 */
import { BadRequestError } from '../errors.js';
import { MAX_DURATION_SECONDS } from '../framework/fields.js';

export interface TtlInput {
  /** Requested TTL (token request or the auth method's role); 0 = not requested. */
  readonly requested: number;
  readonly period: number;
  readonly explicitMaxTtl: number;
  /** A maximum set by the role or auth method; 0 = none. */
  readonly roleMaxTtl: number;
  /** Effective mount values (the system's where the mount sets none). */
  readonly mountDefault: number;
  readonly mountMax: number;
  /** A root-policy token with no TTL and no period never expires. */
  readonly neverExpires: boolean;
  readonly now: number;
  /** The parent's expiry (unix seconds); 0 = no parent or a parent that never expires. */
  readonly parentExpire: number;
}

export interface TtlResult {
  readonly ttl: number;
  readonly expireTime: number;
  /** The cap that renewals keep to (0 = none). */
  readonly maxTtl: number;
  readonly warnings: string[];
}

export function resolveTokenTtl(input: TtlInput): TtlResult {
  const warnings: string[] = [];
  if (input.neverExpires) return { ttl: 0, expireTime: 0, maxTtl: 0, warnings };
  let ttl: number;
  let maxTtl: number;
  if (input.period > 0) {
    maxTtl = input.explicitMaxTtl;
    ttl = input.period;
    if (maxTtl > 0 && ttl > maxTtl) {
      warnings.push(`period of ${input.period}s exceeded the explicit max TTL of ${maxTtl}s; TTL value is capped accordingly`);
      ttl = maxTtl;
    }
  } else {
    maxTtl = input.mountMax;
    if (input.roleMaxTtl > 0) maxTtl = Math.min(maxTtl, input.roleMaxTtl);
    if (input.explicitMaxTtl > 0) maxTtl = Math.min(maxTtl, input.explicitMaxTtl);
    ttl = input.requested > 0 ? input.requested : input.mountDefault;
    if (ttl > maxTtl) {
      warnings.push(`TTL of ${ttl}s exceeded the effective max_ttl of ${maxTtl}s; TTL value is capped accordingly`);
      ttl = maxTtl;
    }
  }
  if (input.parentExpire > 0) {
    const parentLeft = input.parentExpire - input.now;
    if (ttl === 0 || ttl > parentLeft) {
      warnings.push(`TTL of ${ttl}s exceeded the parent token's remaining ${parentLeft}s; TTL value is capped accordingly`);
      ttl = Math.max(parentLeft, 1);
    }
  }
  ttl = Math.min(ttl, MAX_DURATION_SECONDS);
  return { ttl, expireTime: ttl > 0 ? input.now + ttl : 0, maxTtl, warnings };
}

export interface RenewInput {
  readonly increment: number;
  readonly period: number;
  /** The token's TTL at creation (what a renewal without increment asks for again). */
  readonly creationTtl: number;
  readonly creationTime: number;
  /** From the token entry: the cap from creation; 0 = none. */
  readonly maxTtl: number;
  readonly explicitMaxTtl: number;
  readonly now: number;
}

/** The new TTL of a renewal, or BadRequestError when the token is past its maximum lifetime. */
export function renewTokenTtl(input: RenewInput): { ttl: number; expireTime: number; warnings: string[] } {
  const warnings: string[] = [];
  const cap = input.period > 0 ? input.explicitMaxTtl : input.maxTtl;
  const maxExpire = cap > 0 ? input.creationTime + cap : 0;
  if (maxExpire > 0 && input.now >= maxExpire) throw new BadRequestError('past the max TTL, cannot renew');
  let ttl = input.period > 0 ? input.period : input.increment > 0 ? input.increment : input.creationTtl;
  if (maxExpire > 0 && input.now + ttl > maxExpire) {
    warnings.push(`TTL of ${ttl}s exceeded the effective max_ttl; TTL value is capped accordingly`);
    ttl = maxExpire - input.now;
  }
  ttl = Math.min(ttl, MAX_DURATION_SECONDS);
  return { ttl, expireTime: ttl > 0 ? input.now + ttl : 0, warnings };
}
