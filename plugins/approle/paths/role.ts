/** `role/:role_name` (create, read, update, delete) and `LIST role/`. */
import {
  BadRequestError,
  applyTokenFields,
  checkCidrs,
  definePath,
  givenValue,
  listResponse,
  LEGACY_TOKEN_FIELDS,
  TOKEN_FIELDS,
  type AnyPathDefinition,
  type FieldSpecs,
  type FieldValues,
  type LogicalRequest,
} from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { deleteRoleEntry, listRoles, newRole, readRole, roleResponse, writeRole, type RoleEntry } from '../role.js';
import { deleteRoleSecretIds } from '../secret-id.js';
import { MAX_HMAC_INPUT_BYTES } from '../storage.js';

/** The role name of every role/:role_name path. */
export const ROLE_NAME_FIELD = { type: 'name', description: `Name of the role (lower-cased); less than ${MAX_HMAC_INPUT_BYTES} bytes.`, required: true } as const;

const FIELDS = {
  role_name: ROLE_NAME_FIELD,
  bind_secret_id: { type: 'bool', description: 'Logins must present a secret ID of the role (default true).' },
  secret_id_bound_cidrs: { type: 'comma-string-list', description: 'CIDR blocks logins with the role must come from.' },
  bound_cidr_list: { type: 'comma-string-list', description: 'Deprecated: use secret_id_bound_cidrs.', deprecated: true },
  secret_id_num_uses: { type: 'int', description: 'Logins a new secret ID allows; 0 (the default) is unlimited.' },
  secret_id_ttl: { type: 'duration', description: "Lifetime of a new secret ID; 0 (the default) is the mount's max lease TTL, or none." },
  local_secret_ids: { type: 'bool', description: 'Keep the secret IDs under a storage prefix of their own; only on creation.' },
  role_id: { type: 'string', description: 'A role ID of your choosing (default: a random UUID).' },
  ...TOKEN_FIELDS,
  policies: LEGACY_TOKEN_FIELDS.policies,
  period: LEGACY_TOKEN_FIELDS.period,
} as const satisfies FieldSpecs;

type Input = FieldValues<typeof FIELDS>;

export function rolePaths(ctx: AppRoleContext): AnyPathDefinition[] {
  const role = definePath({
    pattern: 'role/:role_name',
    fields: FIELDS,
    existenceCheck: async (_req, input) => (await readRole(ctx, input.role_name)) !== undefined,
    operations: {
      read: {
        summary: 'Read a role.',
        handler: async (_req, input) => {
          const entry = await readRole(ctx, input.role_name);
          return entry ? roleResponse(entry) : null;
        },
      },
      create: { summary: 'Create a role.', handler: (req, input) => writeRoleRequest(ctx, req, input) },
      update: { summary: 'Update a role; fields not sent keep their values.', handler: (req, input) => writeRoleRequest(ctx, req, input) },
      delete: {
        summary: 'Delete a role and its secret IDs.',
        handler: (_req, input) =>
          ctx.roleLocks.run(input.role_name.toLowerCase(), async () => {
            const entry = await readRole(ctx, input.role_name);
            if (!entry) return null;
            await deleteRoleSecretIds(ctx, entry);
            await deleteRoleEntry(ctx, entry);
            return null;
          }),
      },
    },
    synopsis: 'Create, read, update or delete a role.',
    description:
      'A role holds what a login must present — its role ID, a secret ID unless bind_secret_id is false, an address in ' +
      'secret_id_bound_cidrs — the defaults of its secret IDs, and the settings of the tokens it gets. At least one of ' +
      'bind_secret_id, secret_id_bound_cidrs and token_bound_cidrs must be set.',
  });

  const listing = definePath({
    pattern: 'role/',
    fields: {},
    operations: { list: { summary: 'List the role names.', handler: async () => listResponse(await listRoles(ctx)) } },
    synopsis: 'List the roles.',
    description: 'Names of the roles (lower-case).',
  });
  return [role, listing];
}

/** Creates the role, or updates the fields the request sends (the role as stored now, under its lock). */
async function writeRoleRequest(ctx: AppRoleContext, req: LogicalRequest, input: Input) {
  const name = input.role_name.toLowerCase();
  return ctx.roleLocks.run(name, async () => {
    const stored = await readRole(ctx, name);
    // Another request may have created the role since the existence check.
    const role: RoleEntry = stored ? structuredClone(stored) : newRole(name);
    const warnings: string[] = [];

    // Vault's backwards compatibility: the mount tune's words are taken for what they mean on a role.
    let tokenInput = input;
    if (input.token_type === 'default-service' || input.token_type === 'default-batch') {
      const type = input.token_type === 'default-service' ? 'service' : 'batch';
      warnings.push(`${input.token_type} has no useful meaning; adjusting to ${type}`);
      tokenInput = { ...input, token_type: type };
    }
    warnings.push(...applyTokenFields(req, tokenInput, role, ctx.system.maxLeaseTtl()));

    if (input.local_secret_ids !== undefined) {
      if (stored && input.local_secret_ids !== role.local_secret_ids) throw new BadRequestError('local_secret_ids can only be modified during role creation');
      if (!stored) role.local_secret_ids = input.local_secret_ids;
    }
    const previousRoleId = stored?.role_id;
    if (input.role_id !== undefined) {
      if (input.role_id === '') throw new BadRequestError('invalid role_id supplied, or failed to generate a role_id');
      role.role_id = input.role_id;
    }
    if (input.bind_secret_id !== undefined) role.bind_secret_id = input.bind_secret_id;

    const cidrs = givenValue(req, input.secret_id_bound_cidrs, 'secret_id_bound_cidrs', []) ?? givenValue(req, input.bound_cidr_list, 'bound_cidr_list', []);
    if (cidrs !== undefined) {
      checkCidrs(cidrs, input.secret_id_bound_cidrs !== undefined || req.data.secret_id_bound_cidrs === '' ? 'secret_id_bound_cidrs' : 'bound_cidr_list');
      role.secret_id_bound_cidrs = cidrs;
    }
    if (input.secret_id_num_uses !== undefined) {
      if (input.secret_id_num_uses < 0) throw new BadRequestError('secret_id_num_uses cannot be negative');
      role.secret_id_num_uses = input.secret_id_num_uses;
    }
    const ttl = givenValue(req, input.secret_id_ttl, 'secret_id_ttl', 0);
    if (ttl !== undefined) role.secret_id_ttl = ttl;

    await writeRole(ctx, role, previousRoleId);
    return warnings.length > 0 ? { warnings } : null;
  });
}
