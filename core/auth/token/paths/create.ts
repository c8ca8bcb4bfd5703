/** `auth/token/create`, `create-orphan` and `create/:role_name`: minting tokens from a token. */
import { BadRequestError, PermissionDeniedError } from '../../../errors.js';
import { definePath, type AnyPathDefinition, type FieldValues, type LogicalRequest } from '../../../framework/index.js';
import { authBlock, issueToken, sanitizePolicies, tokenDisplayName } from '../issue.js';
import { callerToken, type TokenServices } from '../services.js';
import { globMatch, readRole, roleTokenType, type TokenRole } from '../roles.js';

const CREATE_FIELDS = {
  id: { type: 'string', description: 'A custom token id (root or sudo only; may not contain ".").', sensitive: true },
  policies: { type: 'comma-string-list', description: "Policies of the token; the parent's when omitted." },
  meta: { type: 'map', description: 'Metadata (string values), shown in lookups and the audit log.' },
  no_parent: { type: 'bool', description: 'Create an orphan token (root or sudo only).', default: false },
  no_default_policy: { type: 'bool', description: 'Do not add the default policy.', default: false },
  renewable: { type: 'bool', description: 'Whether the token can be renewed.', default: true },
  ttl: { type: 'duration', description: 'Initial TTL; the mount default when omitted.' },
  lease: { type: 'duration', description: 'Deprecated alias of ttl.', deprecated: true },
  type: { type: 'string', description: 'Token type.', allowedValues: ['service', 'batch'] },
  explicit_max_ttl: { type: 'duration', description: 'A hard limit on the lifetime, renewals included.', default: 0 },
  display_name: { type: 'string', description: 'Display name, stored as token-<name>.' },
  num_uses: { type: 'int', description: 'Number of uses; 0 is unlimited.', default: 0, minimum: 0 },
  period: { type: 'duration', description: 'Make a periodic token renewed to this TTL (root, sudo or role only).', default: 0 },
  entity_alias: { type: 'string', description: 'Not supported: entity aliases on token roles.' },
  role_name: { type: 'string', description: 'The role to create the token against.' },
} as const;

type CreateInput = FieldValues<typeof CREATE_FIELDS>;

async function create(services: TokenServices, req: LogicalRequest, input: CreateInput, mode: 'create' | 'orphan' | 'role'): Promise<{ tokenAuth: Record<string, unknown>; warnings?: string[] }> {
  const caller = await callerToken(services, req);
  const callerRoot = caller.entry.policies.includes('root');
  const privileged = callerRoot || (req.auth?.sudo ?? false);
  if (caller.entry.type === 'batch') throw new BadRequestError('batch tokens cannot create more tokens');
  if (caller.entry.numUses !== 0) throw new BadRequestError('tokens with a limited number of uses cannot create more tokens');
  if (input.entity_alias) throw new BadRequestError('entity_alias is not supported');

  let role: TokenRole | undefined;
  if (mode === 'role') {
    role = await readRole(services.storage, input.role_name ?? '');
    if (!role) throw new BadRequestError(`unknown role ${input.role_name}`);
  }

  if (input.id !== undefined) {
    if (!privileged) throw new PermissionDeniedError('root or sudo privileges required to specify a token id');
    if (input.id.includes('.')) throw new BadRequestError('a custom token id cannot contain "."');
    if (input.type === 'batch') throw new BadRequestError('batch tokens cannot have a custom id');
  }
  if (input.no_parent && mode === 'create' && !privileged) {
    throw new PermissionDeniedError('root or sudo privileges required to create an orphan token');
  }
  if (input.period > 0 && !privileged && !role) throw new PermissionDeniedError('root or sudo privileges required to create a periodic token');

  // Policies: requested, else the role's allowed list, else the parent's.
  const requested = input.policies ?? (role && role.allowed_policies.length > 0 ? role.allowed_policies : caller.entry.policies.filter((p) => p !== 'default'));
  const addDefault = !(input.no_default_policy || role?.token_no_default_policy);
  const policies = sanitizePolicies(requested, addDefault);
  if (policies.includes('root') && !callerRoot) throw new PermissionDeniedError('root tokens may not be created without parent token being root');
  if (role) {
    for (const policy of policies) {
      if (policy === 'default') continue;
      const allowed =
        (role.allowed_policies.length === 0 && role.allowed_policies_glob.length === 0) ||
        role.allowed_policies.includes(policy) ||
        role.allowed_policies_glob.some((g) => globMatch(g, policy));
      const denied = role.disallowed_policies.includes(policy) || role.disallowed_policies_glob.some((g) => globMatch(g, policy));
      if (!allowed || denied) throw new BadRequestError(`token policies (${policy}) must be allowed by the role`);
      if (role.allowed_policies.length === 0 && role.allowed_policies_glob.length === 0 && !privileged && !caller.entry.policies.includes(policy)) {
        throw new BadRequestError('child policies must be subset of parent');
      }
    }
  } else if (!privileged) {
    for (const policy of policies) {
      if (policy !== 'default' && !caller.entry.policies.includes(policy)) throw new BadRequestError('child policies must be subset of parent');
    }
  }

  const orphan = mode === 'orphan' || input.no_parent || (role?.orphan ?? false);
  const type = roleTokenType(role, input.type);
  const ttls = services.mountTtls();
  const period = role?.token_period || input.period;
  const explicitMax = role?.token_explicit_max_ttl ? (input.explicit_max_ttl ? Math.min(role.token_explicit_max_ttl, input.explicit_max_ttl) : role.token_explicit_max_ttl) : input.explicit_max_ttl;
  const meta: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.meta ?? {})) {
    if (typeof value !== 'string') throw new BadRequestError(`meta: value of "${key}" must be a string`);
    meta[key] = value;
  }
  const path = role ? `auth/token/create/${role.name}${role.path_suffix ? `/${role.path_suffix}` : ''}` : mode === 'orphan' ? 'auth/token/create-orphan' : 'auth/token/create';

  const issued = await issueToken(services.store, {
    policies,
    noDefaultPolicy: true,
    meta,
    displayName: tokenDisplayName(input.display_name),
    numUses: role?.token_num_uses || input.num_uses,
    ttl: input.ttl ?? input.lease ?? role?.token_ttl ?? 0,
    explicitMaxTtl: explicitMax,
    period,
    roleMaxTtl: role?.token_max_ttl ?? 0,
    renewable: input.renewable && (role?.renewable ?? true),
    type,
    boundCidrs: role?.token_bound_cidrs ?? [],
    entityId: '',
    role: role?.name ?? '',
    path,
    parent: orphan ? undefined : caller,
    mountDefault: ttls.defaultTtl,
    mountMax: ttls.maxTtl,
    ...(input.id !== undefined ? { id: input.id } : {}),
  });
  const warnings = [...issued.warnings];
  for (const policy of issued.entry.policies) {
    if (policy !== 'root' && policy !== 'default' && !(await services.policyExists(policy))) warnings.push(`Policy "${policy}" does not exist`);
  }
  return { tokenAuth: authBlock(issued.id, issued.entry), ...(warnings.length ? { warnings } : {}) };
}

export function createPaths(services: TokenServices): AnyPathDefinition[] {
  const description =
    'Creates a child of the calling token (or an orphan). Policies must be a subset of the caller\'s unless the ' +
    'caller is root or has sudo; `default` is added unless no_default_policy. Batch tokens and tokens with ' +
    'limited uses cannot create tokens.';
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
      description: `${description} The role's settings override the request's.`,
    }),
  ];
}
