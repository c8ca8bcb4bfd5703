/** `role/:role` (create, read, update, delete) and `LIST role/` / `LIST roles/`. */
import { randomUUID } from 'node:crypto';
import { definePath, listResponse, type AnyPathDefinition, type FieldSpecs, type FieldValues, type LogicalRequest, BadRequestError, givenValue, applyTokenFields, defaultTokenSettings, LEGACY_TOKEN_FIELDS, TOKEN_FIELDS } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { ArnError, parseIamArn } from '../arn.js';
import {
  BOUND_LIST_FIELDS,
  EC2_ENTITY_TYPE,
  ROLE_STORAGE_VERSION,
  deleteRole,
  listRoles,
  readRole,
  roleResponse,
  writeRole,
  type RoleEntry,
} from '../role.js';
import { resolveUniqueId } from '../principals.js';
import { isProviderError } from '../failures.js';

const list = (description: string) => ({ type: 'comma-string-list', description }) as const;

const FIELDS = {
  role: { type: 'name', description: 'Name of the role (lower-cased).', required: true },
  auth_type: { type: 'string', description: 'ec2 or iam (default iam); fixed once the role exists.' },
  bound_ami_id: list('AMI IDs an instance must have (ec2, or iam inferring an instance).'),
  bound_account_id: list('Account IDs an instance must belong to (ec2, or iam inferring an instance).'),
  bound_region: list('Regions an instance must be in (ec2, or iam inferring an instance).'),
  bound_vpc_id: list('VPC IDs an instance must be in (ec2, or iam inferring an instance).'),
  bound_subnet_id: list('Subnet IDs an instance must be in (ec2, or iam inferring an instance).'),
  bound_iam_role_arn: list("ARNs of the instance profile's role; a trailing * matches by prefix (ec2, or iam inferring an instance)."),
  bound_iam_instance_profile_arn: list('Instance profile ARNs; a trailing * matches by prefix (ec2, or iam inferring an instance).'),
  bound_ec2_instance_id: list('Instance IDs (ec2, or iam inferring an instance).'),
  bound_iam_principal_arn: list('IAM principals that may log in (iam); a trailing * matches by prefix.'),
  inferred_entity_type: { type: 'string', description: 'ec2_instance: infer the EC2 instance behind an iam login (iam only).' },
  inferred_cloud_region: { type: 'string', description: 'Region of inferred instances; required with inferred_entity_type.' },
  inferred_aws_region: { type: 'string', description: 'Alias of inferred_cloud_region, as Vault clients send it.', deprecated: true },
  resolve_cloud_unique_ids: {
    type: 'bool',
    description: 'Bind principals by their unique ID (default true for new roles); cannot be turned off once on.',
  },
  resolve_aws_unique_ids: { type: 'bool', description: 'Alias of resolve_cloud_unique_ids, as Vault clients send it.', deprecated: true },
  role_tag: { type: 'string', description: 'Key of the instance tag that holds a role tag (ec2 only); empty disables role tags.' },
  allow_instance_migration: { type: 'bool', description: 'Allow a newer pendingTime to replace the nonce check (ec2 only).' },
  disallow_reauthentication: { type: 'bool', description: 'One token per instance until its access-list entry is removed (ec2 only).' },
  ...TOKEN_FIELDS,
  policies: LEGACY_TOKEN_FIELDS.policies,
  ttl: LEGACY_TOKEN_FIELDS.ttl,
  max_ttl: LEGACY_TOKEN_FIELDS.max_ttl,
  period: LEGACY_TOKEN_FIELDS.period,
} as const satisfies FieldSpecs;

type Input = FieldValues<typeof FIELDS>;

export function rolePaths(ctx: CloudAuthContext): AnyPathDefinition[] {
  const role = definePath({
    pattern: 'role/:role',
    fields: FIELDS,
    existenceCheck: async (_req, input) => (await readRole(ctx.storage, input.role)) !== undefined,
    operations: {
      read: {
        summary: 'Read a role.',
        handler: async (_req, input) => {
          const entry = await readRole(ctx.storage, input.role);
          return entry ? { data: roleResponse(entry) } : null;
        },
      },
      create: { summary: 'Create a role.', handler: (req, input) => writeRoleRequest(ctx, req, input, true) },
      update: { summary: 'Update a role; fields not sent keep their values.', handler: (req, input) => writeRoleRequest(ctx, req, input, false) },
      delete: {
        summary: 'Delete a role.',
        handler: async (_req, input) => {
          await deleteRole(ctx.storage, input.role);
          return null;
        },
      },
    },
    synopsis: 'Create, read, update or delete a role.',
    description:
      'A role holds the constraints a login must meet and the settings of the tokens it gets. At least one bound_* ' +
      'constraint is required, and only constraints the auth type checks are accepted: bound_iam_principal_arn for iam; ' +
      'the instance constraints for ec2, or for iam with inferred_entity_type=ec2_instance.',
  });

  const listing = (pattern: string) =>
    definePath({
      pattern,
      fields: {},
      operations: { list: { summary: 'List role names.', handler: async () => listResponse(await listRoles(ctx.storage)) } },
      synopsis: 'List the roles.',
      description: 'Names of the roles (lower-case).',
    });
  return [role, listing('role/'), listing('roles/')];
}

function newRole(): RoleEntry {
  return {
    version: ROLE_STORAGE_VERSION,
    role_id: randomUUID(),
    auth_type: 'iam',
    bound_ami_id: [],
    bound_account_id: [],
    bound_region: [],
    bound_vpc_id: [],
    bound_subnet_id: [],
    bound_iam_role_arn: [],
    bound_iam_instance_profile_arn: [],
    bound_ec2_instance_id: [],
    bound_iam_principal_arn: [],
    bound_iam_principal_id: [],
    inferred_entity_type: '',
    inferred_cloud_region: '',
    resolve_cloud_unique_ids: true,
    role_tag: '',
    hmac_key: randomUUID(),
    allow_instance_migration: false,
    disallow_reauthentication: false,
    ...defaultTokenSettings(),
    legacy: {},
  };
}

async function writeRoleRequest(ctx: CloudAuthContext, req: LogicalRequest, input: Input, creating: boolean) {
  const name = input.role.toLowerCase();
  const stored = creating ? undefined : await readRole(ctx.storage, name);
  const role: RoleEntry = stored ? structuredClone(stored) : newRole();
  const fail = (message: string): never => {
    throw new BadRequestError(message);
  };

  for (const field of BOUND_LIST_FIELDS) {
    const value = givenValue(req, input[field], field, []);
    if (value !== undefined) role[field] = value;
  }
  // Writing the principal ARNs always re-resolves them: that is how a recreated principal is picked up.
  if (givenValue(req, input.bound_iam_principal_arn, 'bound_iam_principal_arn', []) !== undefined) role.bound_iam_principal_id = [];

  const resolve = input.resolve_cloud_unique_ids ?? input.resolve_aws_unique_ids;
  if (resolve !== undefined) {
    if (!creating && role.resolve_cloud_unique_ids && !resolve) fail('changing resolve_cloud_unique_ids from true to false is not allowed');
    role.resolve_cloud_unique_ids = resolve;
  }

  const inferredType = givenValue(req, input.inferred_entity_type, 'inferred_entity_type', '');
  if (inferredType !== undefined) role.inferred_entity_type = inferredType;
  const inferredRegion = givenValue(req, input.inferred_cloud_region ?? input.inferred_aws_region, 'inferred_cloud_region', '');
  if (inferredRegion !== undefined) role.inferred_cloud_region = inferredRegion;

  if (input.auth_type !== undefined) {
    if (creating) {
      if (input.auth_type !== 'ec2' && input.auth_type !== 'iam') fail(`unrecognized auth_type: ${input.auth_type}`);
      role.auth_type = input.auth_type as RoleEntry['auth_type'];
    } else if (input.auth_type !== role.auth_type) {
      fail('changing auth_type on a role is not allowed');
    }
  }

  checkBindings(role, fail);

  if (input.disallow_reauthentication !== undefined) {
    if (role.auth_type !== 'ec2') fail('specified disallow_reauthentication when not using ec2 auth type');
    role.disallow_reauthentication = input.disallow_reauthentication;
  }
  if (input.allow_instance_migration !== undefined) {
    if (role.auth_type !== 'ec2') fail('specified allow_instance_migration when not using ec2 auth type');
    role.allow_instance_migration = input.allow_instance_migration;
  }
  if (role.allow_instance_migration && role.disallow_reauthentication) {
    fail('cannot specify both disallow_reauthentication=true and allow_instance_migration=true');
  }

  const warnings = applyTokenFields(req, input, role, ctx.system.maxLeaseTtl());

  const roleTag = givenValue(req, input.role_tag, 'role_tag', '');
  if (roleTag !== undefined) {
    if (roleTag !== '' && role.auth_type !== 'ec2') fail('tried to enable role_tag when not using ec2 auth method');
    if (roleTag.length > 127) fail('length of role tag exceeds the EC2 key limit of 127 characters');
    role.role_tag = roleTag;
  }

  if (role.resolve_cloud_unique_ids && role.bound_iam_principal_id.length === 0) {
    for (const arn of role.bound_iam_principal_arn) {
      if (arn.endsWith('*')) continue;
      try {
        role.bound_iam_principal_id.push(await resolveUniqueId(ctx, arn));
      } catch (err) {
        if (!(err instanceof ArnError) && !isProviderError(err)) throw err;
        fail(`unable to resolve ARN "${arn}" to internal ID: ${(err as Error).message}`);
      }
    }
  }

  await writeRole(ctx.storage, name, role);
  return warnings.length > 0 ? { warnings } : null;
}

/** The constraints a role must set and may set (docs/cloud-auth.md, "Roles"), and the inference settings they depend on. */
function checkBindings(role: RoleEntry, fail: (message: string) => never): void {
  let instanceBindsAllowed = role.auth_type === 'ec2';
  if (role.inferred_entity_type !== '') {
    if (role.auth_type !== 'iam') fail("specified inferred_entity_type but didn't allow iam auth_type");
    if (role.inferred_entity_type !== EC2_ENTITY_TYPE) fail(`specified invalid inferred_entity_type: ${role.inferred_entity_type}`);
    if (role.inferred_cloud_region === '') fail('specified inferred_entity_type but not inferred_cloud_region');
    instanceBindsAllowed = true;
  } else if (role.inferred_cloud_region !== '') {
    fail('specified inferred_cloud_region but not inferred_entity_type');
  }

  let binds = 0;
  const instanceBinds = [
    'bound_account_id',
    'bound_region',
    'bound_ami_id',
    'bound_iam_instance_profile_arn',
    'bound_ec2_instance_id',
    'bound_iam_role_arn',
    'bound_vpc_id',
    'bound_subnet_id',
  ] as const;
  for (const field of instanceBinds) {
    if (role[field].length === 0) continue;
    // Taken for an iam role that infers an instance too, as Vault's API documentation describes bound_region (docs/cloud-auth.md, "Roles").
    if (!instanceBindsAllowed) fail(`specified ${field} but not specifying ec2 auth_type or inferring ${EC2_ENTITY_TYPE}`);
    binds++;
  }
  if (role.bound_iam_principal_arn.length > 0) {
    if (role.auth_type !== 'iam') fail('specified bound_iam_principal_arn but not specifying iam auth_type');
    if (!role.resolve_cloud_unique_ids) {
      for (const arn of role.bound_iam_principal_arn) {
        if (arn.endsWith('*')) continue;
        let path: string;
        try {
          path = parseIamArn(arn).path;
        } catch (err) {
          return fail(`invalid bound_iam_principal_arn "${arn}": ${(err as Error).message}`);
        }
        if (path !== '') {
          fail(
            `bound_iam_principal_arn "${arn}" has a path: without resolve_cloud_unique_ids a login presents the ARN ` +
              'without its path, so bind it without the path (or with a trailing *)',
          );
        }
      }
    }
    binds++;
  }
  if (binds === 0) fail('at least one bound parameter should be specified on the role');
}
