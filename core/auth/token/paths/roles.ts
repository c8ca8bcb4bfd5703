/** `auth/token/roles` and `auth/token/roles/:role_name`. */
import { definePath, listResponse, type AnyPathDefinition } from '../../../framework/index.js';
import { BadRequestError } from '../../../errors.js';
import type { TokenDeps } from '../services.js';
import { ROLES_PREFIX, lowerUnique, readRole, roleKey, type TokenRole } from '../roles.js';

/**
 * Vault refuses a role fixed to batch tokens that would also make them children, periodic,
 * renewable or bound by an explicit max TTL; a use count is refused too, as batch tokens keep none.
 */
function refuseBatchConflicts(role: TokenRole): void {
  const conflicts: ReadonlyArray<readonly [boolean, string]> = [
    [!role.orphan, 'non-orphan tokens'],
    [role.token_period > 0, 'periodic tokens'],
    [role.renewable, 'renewable tokens'],
    [role.token_explicit_max_ttl > 0, 'tokens with an explicit max TTL'],
    [role.token_num_uses > 0, 'tokens with a limited number of uses'],
  ];
  const conflict = conflicts.find(([applies]) => applies);
  if (conflict) throw new BadRequestError(`'token_type' cannot be 'batch' when role is set to generate ${conflict[1]}`);
}

export function rolePaths(services: TokenDeps): AnyPathDefinition[] {
  const role = definePath({
    pattern: 'roles/:role_name',
    fields: {
      role_name: { type: 'name', description: 'Name of the role.', required: true },
      allowed_policies: { type: 'comma-string-list', description: 'Policies tokens of this role may have; empty: a subset of the parent\'s.' },
      disallowed_policies: { type: 'comma-string-list', description: 'Policies tokens of this role may not have.' },
      allowed_policies_glob: { type: 'comma-string-list', description: 'Glob patterns of allowed policies.' },
      disallowed_policies_glob: { type: 'comma-string-list', description: 'Glob patterns of disallowed policies.' },
      orphan: { type: 'bool', description: 'Tokens of this role are orphans.' },
      renewable: { type: 'bool', description: 'Tokens of this role can be renewed.' },
      path_suffix: { type: 'string', description: 'Appended to the token path (auth/token/create/<role>/<suffix>).' },
      allowed_entity_aliases: {
        type: 'comma-string-list',
        description: 'Entity aliases (names or globs, compared lower-cased) a caller may attach to tokens of this role with entity_alias.',
      },
      token_period: { type: 'duration', description: 'Tokens are periodic with this period.' },
      token_ttl: { type: 'duration', description: 'Default TTL of tokens of this role; the mount default when 0.' },
      token_max_ttl: { type: 'duration', description: 'Maximum TTL of tokens of this role; the mount maximum when 0.' },
      period: { type: 'duration', description: 'Deprecated alias of token_period.', deprecated: true },
      token_explicit_max_ttl: { type: 'duration', description: 'A hard limit on the lifetime of tokens of this role.' },
      explicit_max_ttl: { type: 'duration', description: 'Deprecated alias of token_explicit_max_ttl.', deprecated: true },
      token_type: { type: 'string', description: 'Type of tokens of this role.', allowedValues: ['service', 'batch', 'default-service', 'default-batch'] },
      token_bound_cidrs: { type: 'comma-string-list', description: 'CIDR blocks tokens of this role may be used from.' },
      bound_cidrs: { type: 'comma-string-list', description: 'Deprecated alias of token_bound_cidrs.', deprecated: true },
      token_no_default_policy: { type: 'bool', description: 'Do not add the default policy.' },
      token_num_uses: { type: 'int', description: 'Number of uses of tokens of this role; 0 is unlimited.', minimum: 0 },
    },
    operations: {
      read: {
        summary: 'Read a role.',
        handler: async (_req, input) => {
          const found = await readRole(services.storage, input.role_name);
          if (!found) return null;
          return {
            data: {
              ...found,
              period: found.token_period,
              explicit_max_ttl: found.token_explicit_max_ttl,
              bound_cidrs: found.token_bound_cidrs,
            },
          };
        },
      },
      update: {
        summary: 'Create or update a role.',
        handler: async (_req, input) => {
          const existing = await readRole(services.storage, input.role_name);
          const next: TokenRole = {
            name: input.role_name,
            allowed_policies: input.allowed_policies ?? existing?.allowed_policies ?? [],
            disallowed_policies: input.disallowed_policies ?? existing?.disallowed_policies ?? [],
            allowed_policies_glob: input.allowed_policies_glob ?? existing?.allowed_policies_glob ?? [],
            disallowed_policies_glob: input.disallowed_policies_glob ?? existing?.disallowed_policies_glob ?? [],
            orphan: input.orphan ?? existing?.orphan ?? false,
            renewable: input.renewable ?? existing?.renewable ?? true,
            path_suffix: input.path_suffix ?? existing?.path_suffix ?? '',
            allowed_entity_aliases: input.allowed_entity_aliases ? lowerUnique(input.allowed_entity_aliases) : (existing?.allowed_entity_aliases ?? []),
            token_period: input.token_period ?? input.period ?? existing?.token_period ?? 0,
            token_ttl: input.token_ttl ?? existing?.token_ttl ?? 0,
            token_max_ttl: input.token_max_ttl ?? existing?.token_max_ttl ?? 0,
            token_explicit_max_ttl: input.token_explicit_max_ttl ?? input.explicit_max_ttl ?? existing?.token_explicit_max_ttl ?? 0,
            token_type: (input.token_type as TokenRole['token_type'] | undefined) ?? existing?.token_type ?? 'default-service',
            token_bound_cidrs: input.token_bound_cidrs ?? input.bound_cidrs ?? existing?.token_bound_cidrs ?? [],
            token_no_default_policy: input.token_no_default_policy ?? existing?.token_no_default_policy ?? false,
            token_num_uses: input.token_num_uses ?? existing?.token_num_uses ?? 0,
          };
          if (next.token_max_ttl > 0 && next.token_ttl > next.token_max_ttl) throw new BadRequestError('token_ttl cannot be greater than token_max_ttl');
          if (next.path_suffix.includes('..')) throw new BadRequestError('path_suffix cannot contain ".."');
          if (next.token_type === 'batch') refuseBatchConflicts(next);
          await services.storage.put(roleKey(next.name), Buffer.from(JSON.stringify(next)));
          return null;
        },
      },
      delete: {
        summary: 'Delete a role.',
        handler: async (_req, input) => {
          await services.storage.delete(roleKey(input.role_name));
          return null;
        },
      },
    },
    synopsis: 'Manage a token role.',
    description: 'A role fixes policies, TTLs and type for tokens created through auth/token/create/<role>.',
  });
  const list = definePath({
    pattern: 'roles/',
    fields: {},
    operations: { list: { summary: 'List roles.', handler: async () => listResponse(await services.storage.list(ROLES_PREFIX)) } },
    synopsis: 'List token roles.',
    description: 'Names of the token roles.',
  });
  return [role, list];
}
