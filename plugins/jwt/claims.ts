/**
 * What a verified token's claims decide beyond the registered ones: the entity alias (`user_claim`),
 * the group aliases (`groups_claim`), the metadata (`claim_mappings`) and the role's `bound_claims`.
 * A claim name that starts with `/` is a JSON pointer (RFC 6901) into nested claims, as in Vault.
 * Numbers compare as whole numbers, as Vault reads claims.
 */
import { globMatch } from '../../sdk/index.js';
import type { BoundClaimsType, JwtRole } from './role.js';
import type { Claims } from './validate.js';

/** The claims do not give what the role needs; the message is Vault's. */
export class ClaimError extends Error {}

/** A claim by name, or by JSON pointer when the name starts with `/`; undefined when absent. */
export function getClaim(claims: Claims, name: string): unknown {
  let value: unknown = claims;
  if (!name.startsWith('/')) {
    value = claims[name];
  } else {
    for (const raw of name.slice(1).split('/')) {
      const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
      if (Array.isArray(value) && /^(0|[1-9]\d*)$/.test(token)) value = value[Number(token)];
      else if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, token)) value = (value as Record<string, unknown>)[token];
      else return undefined;
    }
  }
  if (name === 'aud' && typeof value === 'string') return [value];
  return value ?? undefined;
}

/** A string, bool or number as a list of one; a list as it is; undefined for anything else. */
export function normalizeList(raw: unknown): unknown[] | undefined {
  if (Array.isArray(raw)) return raw as unknown[];
  if (typeof raw === 'string' || typeof raw === 'boolean' || typeof raw === 'number') return [raw];
  return undefined;
}

/** Two scalar claim values are the same: numbers as whole numbers, anything else strictly. */
function sameValue(want: unknown, have: unknown): boolean {
  if (typeof want === 'number' && typeof have === 'number') return Math.trunc(want) === Math.trunc(have);
  return want === have;
}

/** Every bound claim must be present and match one of its values (globs: `*` anywhere, strings only). */
export function checkBoundClaims(type: BoundClaimsType, bound: Readonly<Record<string, unknown>>, claims: Claims): void {
  for (const [name, boundRaw] of Object.entries(bound)) {
    const claimedRaw = getClaim(claims, name);
    if (claimedRaw === undefined) throw new ClaimError(`claim "${name}" is missing`);
    const claimed = normalizeList(claimedRaw);
    if (!claimed) throw new ClaimError(`received claim is not a string, bool, int or list: ${JSON.stringify(claimedRaw)}`);
    const allowed = normalizeList(boundRaw);
    if (!allowed) throw new ClaimError(`bound claim is not a string, bool, int or list: ${JSON.stringify(boundRaw)}`);
    const matches = allowed.some((want) =>
      claimed.some((have) => (type === 'glob' ? typeof want === 'string' && typeof have === 'string' && globMatch(want, have) : sameValue(want, have))),
    );
    if (!matches) throw new ClaimError(`claim "${name}" does not match any associated bound claim values`);
  }
}

/** The metadata `claim_mappings` copies from the claims; a mapped claim that is absent is left out. */
export function mappedMetadata(claims: Claims, mappings: Readonly<Record<string, string>>): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [source, target] of Object.entries(mappings)) {
    const value = getClaim(claims, source);
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new ClaimError(`error converting claim '${source}' to string`);
    metadata[target] = value;
  }
  return metadata;
}

export interface LoginIdentity {
  /** The entity alias name: the user claim's value. */
  readonly name: string;
  /** The mapped claims and the role name. */
  readonly metadata: Record<string, string>;
  /** The group alias names (`groups_claim`), empty ones dropped. */
  readonly groups: string[];
}

/** The alias, metadata and groups of a login, in Vault's order of checks. */
export function identityOf(claims: Claims, roleName: string, role: JwtRole): LoginIdentity {
  const userRaw = role.user_claim_json_pointer ? getClaim(claims, role.user_claim) : claims[role.user_claim];
  if (userRaw === undefined || userRaw === null) throw new ClaimError(`claim "${role.user_claim}" not found in token`);
  if (typeof userRaw !== 'string') throw new ClaimError(`claim "${role.user_claim}" could not be converted to string`);
  const metadata = { ...mappedMetadata(claims, role.claim_mappings), role: roleName };
  if (role.groups_claim === '') return { name: userRaw, metadata, groups: [] };
  const groupsRaw = getClaim(claims, role.groups_claim);
  if (groupsRaw === undefined) throw new ClaimError(`failed to fetch groups: "${role.groups_claim}" claim not found in token`);
  const groups = normalizeList(groupsRaw);
  if (!groups) throw new ClaimError(`"${role.groups_claim}" claim could not be converted to string list`);
  const names: string[] = [];
  for (const group of groups) {
    if (typeof group !== 'string') throw new ClaimError(`value ${JSON.stringify(group)} in groups claim could not be parsed as string`);
    if (group !== '') names.push(group);
  }
  return { name: userRaw, metadata, groups: names };
}
