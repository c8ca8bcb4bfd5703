/** Token roles: stored settings that `auth/token/create/:role` applies. */
import type { Storage } from '../../../storage/storage.js';
import { BadRequestError } from '../../errors.js';
import type { TokenTypeSetting } from './token-type.js';
import { sanitizePolicies } from './issue.js';

/** Storage key of a role (behind the barrier). */
export const roleKey = (name: string) => `sys/token/roles/${name}`;
export const ROLES_PREFIX = 'sys/token/roles/';

export interface TokenRole {
  name: string;
  allowed_policies: string[];
  disallowed_policies: string[];
  allowed_policies_glob: string[];
  disallowed_policies_glob: string[];
  orphan: boolean;
  renewable: boolean;
  path_suffix: string;
  /** Lower-cased names or globs a caller may pass as `entity_alias`. */
  allowed_entity_aliases: string[];
  token_period: number;
  /** Seconds; 0 = the mount default. */
  token_ttl: number;
  /** Seconds; 0 = the mount maximum. */
  token_max_ttl: number;
  token_explicit_max_ttl: number;
  token_type: TokenTypeSetting;
  token_bound_cidrs: string[];
  token_no_default_policy: boolean;
  token_num_uses: number;
}

export async function readRole(storage: Storage, name: string): Promise<TokenRole | undefined> {
  const raw = await storage.get(roleKey(name));
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as TokenRole) : undefined;
}

/** Glob match with `*` anywhere (Vault's policy globs on roles). */
export function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(value);
}

/** Trimmed, lower-cased, unique and sorted, without `sanitizePolicies`' special cases (Vault's RemoveDuplicates). */
export function lowerUnique(values: readonly string[]): string[] {
  return [...new Set(values.map((v) => v.trim().toLowerCase()).filter((v) => v !== ''))].sort();
}

/** Whether the role sets policy rules of its own; they then replace the parent-subset rule. */
export function hasPolicyRules(role: TokenRole): boolean {
  return role.allowed_policies.length + role.disallowed_policies.length + role.allowed_policies_glob.length + role.disallowed_policies_glob.length > 0;
}

/** A list as Go's %q prints it in Vault's messages: ["a" "b"]. */
function goQuoted(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

/**
 * The policies of a token created against a role with policy rules, by Vault's rules: the
 * requested ones, else the role's allowed ones, else the parent's. With an allowed list (or globs)
 * every policy must be in it; none may be disallowed. `default` is added unless refused or
 * disallowed. The parent's policies do not bound the result: the role's author grants it.
 */
export function rolePolicies(role: TokenRole, requested: readonly string[], noDefault: boolean, parentPolicies: readonly string[]): string[] {
  const disallowed = lowerUnique(role.disallowed_policies);
  const disallowedGlob = lowerUnique(role.disallowed_policies_glob);
  const isDisallowed = (policy: string) => disallowed.includes(policy) || disallowedGlob.some((g) => globMatch(g, policy));
  const addDefault = !noDefault && !isDisallowed('default');
  let policies = requested.length > 0 ? sanitizePolicies(requested, addDefault) : [];
  if (role.allowed_policies.length > 0 || role.allowed_policies_glob.length > 0) {
    const allowed = sanitizePolicies(role.allowed_policies, addDefault);
    if (policies.length === 0) {
      policies = allowed;
    } else {
      const allowedGlob = sanitizePolicies(role.allowed_policies_glob, false);
      if (policies.some((p) => !allowed.includes(p) && !allowedGlob.some((g) => globMatch(g, p)))) {
        throw new BadRequestError(
          `token policies (${goQuoted(policies)}) must be subset of the role's allowed policies (${goQuoted(allowed)}) or glob policies (${goQuoted(allowedGlob)})`,
        );
      }
    }
  } else if (policies.length === 0) {
    policies = sanitizePolicies(parentPolicies, addDefault);
  }
  const refused = policies.find(isDisallowed);
  if (refused) throw new BadRequestError(`token policy "${refused}" is disallowed by this role`);
  return policies;
}

/** The role's token_num_uses caps the requested count; 0 is unlimited on either side. */
export function roleNumUses(role: TokenRole, requested: number): number {
  if (role.token_num_uses === 0) return requested;
  if (requested === 0) return role.token_num_uses;
  return Math.min(role.token_num_uses, requested);
}

/** Whether the role lets a caller name this entity alias (compared lower-cased, globs allowed). */
export function roleAllowsEntityAlias(role: TokenRole, alias: string): boolean {
  const name = alias.toLowerCase();
  return role.allowed_entity_aliases.some((pattern) => globMatch(pattern, name));
}
