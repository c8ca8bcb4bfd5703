/** Token roles: stored settings that `auth/token/create/:role` applies. */
import type { Storage } from '../../../storage/storage.js';
import type { TokenType } from '../token-store.js';

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
  allowed_entity_aliases: string[];
  token_period: number;
  /** Seconds; 0 = the mount default. */
  token_ttl: number;
  /** Seconds; 0 = the mount maximum. */
  token_max_ttl: number;
  token_explicit_max_ttl: number;
  token_type: 'service' | 'batch' | 'default-service' | 'default-batch';
  token_bound_cidrs: string[];
  token_no_default_policy: boolean;
  token_num_uses: number;
}

export async function readRole(storage: Storage, name: string): Promise<TokenRole | undefined> {
  const raw = await storage.get(roleKey(name));
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as TokenRole) : undefined;
}

/** The token type a role asks for, given the type the request asked for. */
export function roleTokenType(role: TokenRole | undefined, requested: string | undefined): TokenType {
  switch (role?.token_type) {
    case 'service':
      return 'service';
    case 'batch':
      return 'batch';
    case 'default-batch':
      return requested === 'service' ? 'service' : 'batch';
    default:
      return requested === 'batch' ? 'batch' : 'service';
  }
}

/** Glob match with `*` anywhere (Vault's policy globs on roles). */
export function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(value);
}
