/** `config/identity`: the identity alias and the metadata fields of iam and ec2 logins. */
import { definePath, type AnyPathDefinition, BadRequestError, givenValue } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import {
  EC2_ALIAS_VALUES,
  EC2_METADATA_FIELDS,
  IAM_ALIAS_VALUES,
  IAM_METADATA_FIELDS,
  effectiveMetadataFields,
  parseMetadataSelection,
  readIdentityConfig,
  type IdentityConfig,
} from '../identity-config.js';
import { STORAGE_KEYS, writeJson } from '../storage.js';

export function configIdentityPath(ctx: CloudAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'config/identity',
    fields: {
      iam_alias: { type: 'string', description: 'Alias name of iam logins: role_id, unique_id or full_arn.' },
      iam_metadata: {
        type: 'comma-string-list',
        description: 'Metadata fields of iam logins; "default" for the defaults, "" or [] for none.',
      },
      ec2_alias: { type: 'string', description: 'Alias name of ec2 logins: role_id, instance_id or image_id.' },
      ec2_metadata: {
        type: 'comma-string-list',
        description: 'Metadata fields of ec2 logins; "default" for the defaults, "" or [] for none.',
      },
    },
    operations: {
      read: {
        summary: 'Read the identity configuration (the defaults when never written).',
        handler: async () => {
          const config = await readIdentityConfig(ctx.storage);
          return {
            data: {
              iam_alias: config.iam_alias,
              iam_metadata: effectiveMetadataFields(config.iam_metadata),
              ec2_alias: config.ec2_alias,
              ec2_metadata: effectiveMetadataFields(config.ec2_metadata),
            },
          };
        },
      },
      update: {
        summary: 'Write the identity configuration; fields not sent keep their values.',
        handler: async (req, input) => {
          const next: IdentityConfig = { ...(await readIdentityConfig(ctx.storage)) };
          if (input.iam_alias !== undefined) {
            if (!(IAM_ALIAS_VALUES as readonly string[]).includes(input.iam_alias)) {
              throw new BadRequestError(`iam_alias of "${input.iam_alias}" not in set of allowed values: [${IAM_ALIAS_VALUES.join(' ')}]`);
            }
            next.iam_alias = input.iam_alias;
          }
          if (input.ec2_alias !== undefined) {
            if (!(EC2_ALIAS_VALUES as readonly string[]).includes(input.ec2_alias)) {
              throw new BadRequestError(`ec2_alias of "${input.ec2_alias}" not in set of allowed values: [${EC2_ALIAS_VALUES.join(' ')}]`);
            }
            next.ec2_alias = input.ec2_alias;
          }
          const iamMetadata = givenValue(req, input.iam_metadata, 'iam_metadata', []);
          if (iamMetadata !== undefined) next.iam_metadata = selection(iamMetadata, IAM_METADATA_FIELDS);
          const ec2Metadata = givenValue(req, input.ec2_metadata, 'ec2_metadata', []);
          if (ec2Metadata !== undefined) next.ec2_metadata = selection(ec2Metadata, EC2_METADATA_FIELDS);
          if (next.iam_metadata === undefined) delete next.iam_metadata;
          if (next.ec2_metadata === undefined) delete next.ec2_metadata;
          await writeJson(ctx.storage, STORAGE_KEYS.identityConfig, next);
          return null;
        },
      },
    },
    synopsis: 'Configure the identity alias and the token metadata of logins.',
    description:
      'iam_alias and ec2_alias choose the identity alias name (default role_id). iam_metadata and ec2_metadata choose the ' +
      'metadata fields on tokens, audit entries and aliases (default account_id and auth_type). Only "default" alone restores ' +
      'the defaults; "" or [] selects none.',
  });
}

function selection(fields: string[], available: readonly string[]): string[] | undefined {
  const parsed = parseMetadataSelection(fields, available);
  if ('error' in parsed) throw new BadRequestError(parsed.error);
  return parsed.fields;
}
