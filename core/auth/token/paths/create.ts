/**
 * `auth/token/create`, `create-orphan` and `create/:role_name`: minting tokens from a token, with
 * Vault's rules for what the caller may ask for. Root or sudo on the create path is what lifts the
 * limits (`id`, `period`, `no_parent`, policies outside the caller's); a role lifts only what its
 * author configured (its own policy rules, `token_period`, `orphan`) and caps the rest.
 */
import { BadRequestError } from '../../../errors.js';
import { definePath, type AnyPathDefinition, type FieldValues, type LogicalRequest } from '../../../framework/index.js';
import { ROOT_POLICY_NAME } from '../../policy/builtin.js';
import type { ResolvedToken, TokenType } from '../../token-store.js';
import { authBlock, issueToken, sanitizePolicies, tokenDisplayName } from '../issue.js';
import { callerToken, type TokenDeps } from '../services.js';
import { hasPolicyRules, readRole, roleAllowsEntityAlias, roleNumUses, rolePolicies, type TokenRole } from '../roles.js';
import { issuedTokenType } from '../token-type.js';

const CREATE_FIELDS = {
  id: { type: 'string', description: 'A custom token id (root or sudo only; may not contain ".").', sensitive: true },
  policies: { type: 'comma-string-list', description: "Policies of the token; the parent's when omitted." },
  meta: { type: 'map', description: 'Metadata (string values), shown in lookups and the audit log.' },
  no_parent: {
    type: 'bool',
    description: "Create an orphan token (root or sudo only). Ignored with a role: the role's orphan setting decides.",
    default: false,
  },
  no_default_policy: { type: 'bool', description: 'Do not add the default policy.', default: false },
  renewable: { type: 'bool', description: 'Whether the token can be renewed.', default: true },
  ttl: { type: 'duration', description: 'Initial TTL; the mount default when omitted.' },
  lease: { type: 'duration', description: 'Deprecated alias of ttl.', deprecated: true },
  type: { type: 'string', description: 'Token type.', allowedValues: ['service', 'batch'] },
  explicit_max_ttl: { type: 'duration', description: 'A hard limit on the lifetime, renewals included.', default: 0 },
  display_name: { type: 'string', description: 'Display name, stored as token-<name>.' },
  num_uses: { type: 'int', description: 'Number of uses; 0 is unlimited.', default: 0, minimum: 0 },
  period: {
    type: 'duration',
    description: "Make a periodic token renewed to this TTL (root or sudo only, with a role too; a role's token_period needs neither).",
    default: 0,
  },
  entity_alias: {
    type: 'string',
    description: "Name of an entity alias on the token mount to tie the token to (with a role only; must match the role's allowed_entity_aliases).",
  },
  role_name: { type: 'string', description: 'The role to create the token against.' },
} as const;

type CreateInput = FieldValues<typeof CREATE_FIELDS>;
type CreateMode = 'create' | 'orphan' | 'role';

/**
 * The new token's policies. A role with policy rules decides them (`rolePolicies`); otherwise they
 * are the caller's when none are asked for, and must be a subset of the caller's unless the caller
 * has root or sudo. Without sudo, `default` comes along only when the caller has it.
 */
function tokenPolicies(caller: ResolvedToken, role: TokenRole | undefined, input: CreateInput, sudo: boolean): string[] {
  const noDefault = input.no_default_policy || (role?.token_no_default_policy ?? false);
  const requested = input.policies ?? [];
  let policies: string[];
  if (role && hasPolicyRules(role)) {
    policies = rolePolicies(role, requested, noDefault, caller.entry.policies);
  } else if (requested.length === 0) {
    policies = sanitizePolicies(caller.entry.policies, false);
  } else if (sudo) {
    policies = sanitizePolicies(requested, true);
  } else {
    const held = sanitizePolicies(caller.entry.policies, false);
    if (!sanitizePolicies(requested, false).every((p) => held.includes(p))) throw new BadRequestError('child policies must be subset of parent');
    policies = sanitizePolicies(requested, held.includes('default'));
  }
  return noDefault ? policies.filter((p) => p !== 'default') : policies;
}

/** With a role only its `orphan` flag decides, so a role cannot be used to shed a parent. */
function createsOrphan(role: TokenRole | undefined, input: CreateInput, mode: CreateMode, sudo: boolean): boolean {
  if (role) return role.orphan;
  if (input.no_parent) {
    if (!sudo) throw new BadRequestError('root or sudo privileges required to create orphan token');
    return true;
  }
  return mode === 'orphan';
}

/** The lesser of the request's and the role's value (0 = unset), with Vault's warning when both are set. */
function lesserWithRole(requested: number, fromRole: number, what: string, warnings: string[]): number {
  if (fromRole === 0) return requested;
  if (requested === 0) return fromRole;
  const lesser = Math.min(requested, fromRole);
  warnings.push(`${what} specified both during creation call and in role; using the lesser value of ${lesser} seconds`);
  return lesser;
}

/** The requested entity alias, once the role is known to allow it. */
function allowedEntityAlias(role: TokenRole | undefined, alias: string): string {
  if (!role) throw new BadRequestError("'entity_alias' is only allowed in combination with token role");
  if (!roleAllowsEntityAlias(role, alias)) throw new BadRequestError("invalid 'entity_alias' value");
  return alias;
}

async function create(services: TokenDeps, req: LogicalRequest, input: CreateInput, mode: CreateMode): Promise<{ tokenAuth: Record<string, unknown>; warnings?: string[] }> {
  const caller = await callerToken(services, req);
  const callerRoot = caller.entry.policies.includes(ROOT_POLICY_NAME);
  const sudo = callerRoot || (req.auth?.sudo ?? false);
  if (caller.entry.type === 'batch') throw new BadRequestError('batch tokens cannot create more tokens');
  // Children would let a token with a use count escape it.
  if (caller.entry.numUses !== 0) throw new BadRequestError('restricted use token cannot generate child tokens');

  let role: TokenRole | undefined;
  if (mode === 'role') {
    role = await readRole(services.storage, input.role_name ?? '');
    if (!role) throw new BadRequestError(`unknown role ${input.role_name}`);
  }
  // The field's allowed values are service and batch.
  const type = issuedTokenType(role?.token_type, (input.type as TokenType | undefined) ?? 'default');
  if (type === 'batch') {
    const set = input.explicit_max_ttl > 0 ? 'explicit_max_ttl' : input.num_uses > 0 ? 'num_uses' : input.period > 0 ? 'period' : undefined;
    if (set) throw new BadRequestError(`batch tokens cannot have "${set}" set`);
  }
  const entityAlias = input.entity_alias !== undefined ? allowedEntityAlias(role, input.entity_alias) : undefined;
  if (input.id !== undefined) {
    if (!sudo) throw new BadRequestError('root or sudo privileges required to specify token id');
    if (input.id.includes('.')) throw new BadRequestError("custom token ID cannot have a '.' in the value");
    if (type === 'batch') throw new BadRequestError('batch tokens cannot have a custom id');
  }

  const policies = tokenPolicies(caller, role, input, sudo);
  if (policies.includes(ROOT_POLICY_NAME) && !callerRoot) throw new BadRequestError('root tokens may not be created without parent token being root');
  const orphan = createsOrphan(role, input, mode, sudo);
  if (input.period > 0 && !sudo) throw new BadRequestError('root or sudo privileges required to create periodic token');

  const warnings: string[] = [];
  // Batch tokens take neither from the role (the role's own settings cannot ask for them).
  const fromRole = role && type !== 'batch' ? role : undefined;
  const period = lesserWithRole(input.period, fromRole?.token_period ?? 0, 'Period', warnings);
  const explicitMax = lesserWithRole(input.explicit_max_ttl, fromRole?.token_explicit_max_ttl ?? 0, 'Explicit max TTL', warnings);
  const ttl = input.ttl ?? input.lease ?? role?.token_ttl ?? 0;
  if (policies.includes(ROOT_POLICY_NAME) && ttl === 0 && period === 0 && explicitMax === 0 && caller.entry.expireTime !== 0) {
    throw new BadRequestError('expiring root tokens cannot create non-expiring root tokens');
  }
  const meta: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.meta ?? {})) {
    if (typeof value !== 'string') throw new BadRequestError(`meta: value of "${key}" must be a string`);
    meta[key] = value;
  }
  const path = role ? `auth/token/create/${role.name}${role.path_suffix ? `/${role.path_suffix}` : ''}` : mode === 'orphan' ? 'auth/token/create-orphan' : 'auth/token/create';
  const ttls = services.mountTtls();
  // Resolved last, so a request refused above leaves no entity behind.
  const aliasEntity = entityAlias !== undefined ? await services.entityForAlias(entityAlias, req.mount) : '';

  const issued = await issueToken(services.store, {
    policies,
    noDefaultPolicy: true,
    meta,
    displayName: tokenDisplayName(input.display_name),
    numUses: role ? roleNumUses(role, input.num_uses) : input.num_uses,
    ttl,
    explicitMaxTtl: explicitMax,
    period,
    roleMaxTtl: role?.token_max_ttl ?? 0,
    renewable: input.renewable && (role?.renewable ?? true),
    type,
    // A role sets its own CIDRs, as its author chose; otherwise a child keeps its parent's, so a
    // bound token cannot mint an unbound one.
    boundCidrs: role ? role.token_bound_cidrs : orphan ? [] : caller.entry.boundCidrs,
    entityId: aliasEntity || (orphan ? '' : caller.entry.entityId),
    role: role?.name ?? '',
    path,
    parent: orphan ? undefined : caller,
    mountDefault: ttls.defaultTtl,
    mountMax: ttls.maxTtl,
    ...(input.id !== undefined ? { id: input.id } : {}),
  });
  warnings.push(...issued.warnings);
  for (const policy of issued.entry.policies) {
    if (policy !== ROOT_POLICY_NAME && policy !== 'default' && !(await services.policyExists(policy))) warnings.push(`Policy "${policy}" does not exist`);
  }
  return { tokenAuth: authBlock(issued.id, issued.entry), ...(warnings.length ? { warnings } : {}) };
}

export function createPaths(services: TokenDeps): AnyPathDefinition[] {
  const description =
    'Creates a child of the calling token (or an orphan). Policies must be a subset of the caller\'s unless the ' +
    'caller is root or has sudo; `default` is added unless no_default_policy (without sudo, only when the caller ' +
    'has it). id, period and no_parent need root or sudo. Reserved policies cannot be assigned. Batch tokens and ' +
    'tokens with limited uses cannot create tokens; a child keeps its parent\'s bound CIDRs and entity.';
  return [
    definePath({
      pattern: 'create',
      fields: CREATE_FIELDS,
      operations: { update: { summary: 'Create a token.', handler: async (req, input) => create(services, req, input, 'create') } },
      synopsis: 'Create a token.',
      description,
    }),
    definePath({
      pattern: 'create-orphan',
      fields: CREATE_FIELDS,
      operations: { update: { summary: 'Create an orphan token.', handler: async (req, input) => create(services, req, input, 'orphan') } },
      synopsis: 'Create a token with no parent.',
      description,
    }),
    definePath({
      pattern: 'create/:role_name',
      fields: { ...CREATE_FIELDS, role_name: { type: 'string', description: 'The role to create the token against.', required: true } },
      operations: { update: { summary: 'Create a token against a role.', handler: async (req, input) => create(services, req, input, 'role') } },
      synopsis: 'Create a token against a role.',
      description:
        `${description} With a role, its allowed/disallowed policies replace the subset rule, its orphan flag decides ` +
        '(no_parent is ignored), and its period, explicit max TTL, max TTL and number of uses cap the request\'s.',
    }),
  ];
}
