/** `role/:role/tag`: create a role tag, the value an operator puts on an instance to narrow its ec2 logins. */
import { definePath, type AnyPathDefinition, BadRequestError, givenValue } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { readRole } from '../role.js';
import { MAX_ROLE_TAG_LENGTH, createRoleTag, tagPolicies, tagPoliciesAllowed } from '../role-tag.js';

export function roleTagPath(ctx: CloudAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'role/:role/tag',
    fields: {
      role: { type: 'name', description: 'Name of the role.', required: true },
      policies: {
        type: 'comma-string-list',
        description: "Policies of tokens from the tag, a subset of the role's; given but empty: only default; not given: the role's.",
      },
      max_ttl: { type: 'duration', description: 'Maximum lifetime of tokens from the tag (0: the role and mount decide).' },
      instance_id: { type: 'string', description: 'Only this instance may use the tag.' },
      allow_instance_migration: { type: 'bool', description: 'Logins with the tag may migrate, if the role allows it too.' },
      disallow_reauthentication: { type: 'bool', description: 'Only one login per instance with the tag, until its access-list entry is deleted.' },
    },
    operations: {
      update: {
        summary: 'Create a role tag.',
        handler: async (req, input) => {
          const role = await readRole(ctx.storage, input.role);
          if (!role) throw new BadRequestError(`entry not found for role ${input.role}`);
          if (!role.role_tag) throw new BadRequestError('tag creation is not enabled for this role');
          const allowMigration = input.allow_instance_migration ?? false;
          const disallowReauthentication = input.disallow_reauthentication ?? false;
          if (allowMigration && disallowReauthentication) throw new BadRequestError('cannot set both disallow_reauthentication and allow_instance_migration');

          const requested = givenValue(req, input.policies, 'policies', []);
          const policies = requested === undefined ? [] : tagPolicies(requested);
          const maxTtl = input.max_ttl ?? 0;
          const warnings: string[] = [];
          if (!tagPoliciesAllowed(policies, role.token_policies)) {
            warnings.push('Policies on the tag are not a subset of the policies set on the role. Login will not be allowed with this tag unless the role policies are updated.');
          }
          if (allowMigration && !role.allow_instance_migration) {
            warnings.push('Role does not allow instance migration. Login will not be allowed with this tag unless the role value is updated.');
          }
          const mountMax = ctx.system.maxLeaseTtl();
          if (maxTtl > mountMax) warnings.push(`Given max TTL of ${maxTtl} is greater than the mount maximum of ${mountMax} seconds, and will be capped at login time.`);
          if (role.token_max_ttl > 0 && maxTtl > role.token_max_ttl) {
            warnings.push(`Given max TTL of ${maxTtl} is greater than the role maximum of ${role.token_max_ttl} seconds, and will be capped at login time.`);
          }

          const value = createRoleTag(
            {
              role: input.role.toLowerCase(),
              disallowReauthentication,
              allowInstanceMigration: allowMigration,
              policies,
              instanceId: (input.instance_id ?? '').toLowerCase(),
              maxTtl,
            },
            role.hmac_key,
          );
          if (value.length > MAX_ROLE_TAG_LENGTH) {
            throw new BadRequestError(`role tag 'value' exceeding the limit of ${MAX_ROLE_TAG_LENGTH} characters (${value.length}); use fewer or shorter policies`);
          }
          return { data: { tag_key: role.role_tag, tag_value: value }, ...(warnings.length > 0 ? { warnings } : {}) };
        },
      },
    },
    synopsis: 'Create a role tag for a role that has role_tag set.',
    description:
      'The answer holds tag_key (the role\'s role_tag) and tag_value: put that tag on an instance and its ec2 logins get at ' +
      "most the tag's policies and max_ttl, and the tag's reauthentication limits. The value is HMAC-signed with a secret " +
      'of the role and at most 255 characters (the EC2 tag value limit).',
  });
}
