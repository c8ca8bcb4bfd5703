/**
 * Issuing a secret ID to a role, generated (`role/:role_name/secret-id`) or chosen by the caller
 * (`custom-secret-id`): its uses, TTL and CIDR bounds may only narrow the role's.
 */
import { BadRequestError, NotFoundError, checkCidrs, type LogicalRequest, type LogicalResponse } from '../../sdk/index.js';
import type { AppRoleContext } from './context.js';
import { cidrsWithin } from './cidr.js';
import { parseMetadata } from './metadata.js';
import { readRole } from './role.js';
import { effectiveTtl, registerSecretId } from './secret-id.js';

/** The fields both paths take (besides role_name, and the secret ID of custom-secret-id). */
export const ISSUE_FIELDS = {
  metadata: {
    type: 'string',
    description: 'Key-value metadata of the secret ID, as a JSON object of strings; tokens of its logins carry it, and audit logs show it in plain text.',
  },
  cidr_list: { type: 'comma-string-list', description: "CIDR blocks logins with the secret ID must come from; within the role's secret_id_bound_cidrs." },
  token_bound_cidrs: { type: 'comma-string-list', description: "CIDR blocks the tokens of its logins are limited to; within the role's token_bound_cidrs." },
  num_uses: { type: 'int', description: "Logins the secret ID allows; default the role's secret_id_num_uses, and never more." },
  ttl: { type: 'duration', description: "Lifetime of the secret ID; default the role's secret_id_ttl, and never longer." },
} as const;

export interface IssueInput {
  readonly role_name: string;
  readonly metadata?: string | undefined;
  readonly cidr_list?: string[] | undefined;
  readonly token_bound_cidrs?: string[] | undefined;
  readonly num_uses?: number | undefined;
  readonly ttl?: number | undefined;
}

export async function issueSecretId(ctx: AppRoleContext, req: LogicalRequest, input: IssueInput, secretId: string): Promise<LogicalResponse> {
  const role = await readRole(ctx, input.role_name);
  if (!role) throw new NotFoundError(`role "${input.role_name.toLowerCase()}" does not exist`);
  if (!role.bind_secret_id) throw new BadRequestError('bind_secret_id is not set on the role');

  const cidrList = input.cidr_list ?? [];
  checkCidrs(cidrList, 'cidr_list');
  if (!cidrsWithin(cidrList, role.secret_id_bound_cidrs)) {
    throw new BadRequestError(`cidr_list ${JSON.stringify(cidrList)} is not within the role's secret_id_bound_cidrs ${JSON.stringify(role.secret_id_bound_cidrs)}`);
  }
  const tokenCidrs = input.token_bound_cidrs ?? [];
  checkCidrs(tokenCidrs, 'token_bound_cidrs');
  if (!cidrsWithin(tokenCidrs, role.token_bound_cidrs)) {
    throw new BadRequestError(`token_bound_cidrs ${JSON.stringify(tokenCidrs)} is not within the role's token_bound_cidrs ${JSON.stringify(role.token_bound_cidrs)}`);
  }

  let numUses = role.secret_id_num_uses;
  if (input.num_uses !== undefined) {
    if (input.num_uses < 0) throw new BadRequestError('num_uses cannot be negative');
    if (role.secret_id_num_uses > 0 && (input.num_uses === 0 || input.num_uses > role.secret_id_num_uses)) {
      throw new BadRequestError("num_uses cannot be higher than the role's secret_id_num_uses");
    }
    numUses = input.num_uses;
  }
  let ttl = role.secret_id_ttl;
  const givenTtl = input.ttl ?? (req.data.ttl === '' ? 0 : undefined);
  if (givenTtl !== undefined) {
    if (role.secret_id_ttl > 0 && (givenTtl === 0 || givenTtl > role.secret_id_ttl)) throw new BadRequestError("ttl cannot be longer than the role's secret_id_ttl");
    ttl = givenTtl;
  }
  const metadata = parseMetadata(input.metadata);

  const entry = await registerSecretId(ctx, role, secretId, { numUses, ttl, metadata, cidrList, tokenBoundCidrs: tokenCidrs });
  return {
    data: {
      secret_id: secretId,
      secret_id_accessor: entry.secret_id_accessor,
      secret_id_ttl: effectiveTtl(ctx, entry.secret_id_ttl),
      secret_id_num_uses: entry.secret_id_num_uses,
    },
  };
}
