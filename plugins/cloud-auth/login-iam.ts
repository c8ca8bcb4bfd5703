/**
 * iam login: the client's signed GetCallerIdentity request is checked, forwarded to STS, and the
 * principal STS names is matched against the role; with inferencing, the EC2 instance behind the
 * principal is checked too. The order of the checks: docs/cloud-auth.md, "An iam login, step by
 * step".
 */
import { BadRequestError, PermissionDeniedError, type AuthResult, type LogicalRequest, cidrAllows, globbedStringsMatch, tokenAuth } from '../../sdk/index.js';
import { ArnError, canonicalArn, displayNameOf, parseIamArn, type IamEntity } from './arn.js';
import type { CloudAuthContext } from './context.js';
import { readClientConfig } from './client-config.js';
import { checkAllowedHeaders, checkServerIdHeader, parseLoginRequest, stsEndpointFor, type IamLoginFields } from './iam-request.js';
import { submitCallerIdentityRequest } from './sts.js';
import { EC2_ENTITY_TYPE, readRole, type RoleEntry } from './role.js';
import { effectiveMetadataFields, readIdentityConfig, selectMetadata } from './identity-config.js';
import { describeRunningInstance, InstanceCheckError, unmetInstanceConstraint } from './instance-checks.js';
import { fullArnOf } from './principals.js';
import { providerFailure } from './failures.js';

/** Vault's retry count for STS calls when config/client leaves max_retries at -1. */
const DEFAULT_STS_RETRIES = 3;

/** What renewal needs from the login, kept in the token's internal data (never shown). */
export interface IamInternalData {
  readonly auth_type: 'iam';
  readonly role_name: string;
  readonly role_id: string;
  readonly canonical_arn: string;
  readonly client_user_id: string;
  readonly inferred_entity_id: string;
  readonly inferred_cloud_region: string;
  readonly account_id: string;
}

export async function loginIam(ctx: CloudAuthContext, req: LogicalRequest, input: IamLoginFields & { role?: string | undefined }): Promise<AuthResult> {
  const request = parseLoginRequest(input);
  const config = await readClientConfig(ctx.storage);
  if (config?.iam_server_id_header_value) checkServerIdHeader(request, config.iam_server_id_header_value);
  // Checked with or without config/client (Vault skips it without one): the allow-list is a security fix.
  checkAllowedHeaders(request, config?.allowed_sts_header_values ?? []);
  const endpoint = stsEndpointFor(config, request);
  const caller = await submitCallerIdentityRequest(endpoint, request, {
    maxRetries: config && config.max_retries >= 0 ? config.max_retries : DEFAULT_STS_RETRIES,
    timeoutMs: ctx.timeoutMs,
  });

  let entity: IamEntity;
  try {
    entity = parseIamArn(caller.arn);
  } catch (err) {
    if (err instanceof ArnError) throw new BadRequestError(`error parsing arn "${caller.arn}": ${err.message}`);
    throw err;
  }
  const roleName = input.role ?? entity.friendlyName;
  const role = await readRole(ctx.storage, roleName);
  if (!role) throw new BadRequestError(`entry for role ${roleName} not found`);
  if (!cidrAllows(role.token_bound_cidrs, req.connection.remoteAddress)) throw new PermissionDeniedError();
  if (role.auth_type !== 'iam') throw new BadRequestError(`auth method iam not allowed for role ${roleName}`);

  // An assumed role's UserId is `AROA…:<session>`; the role's unique ID is the part before the colon.
  const callerUniqueId = caller.userId.split(':')[0]!;
  const bound = await principalMatches(ctx, role, entity, callerUniqueId).catch((err) => {
    throw providerFailure(`error looking up full ARN of entity ${canonicalArn(entity)} when attempting login for role "${roleName}"`, err);
  });
  if (!bound) throw new BadRequestError(`IAM Principal "${caller.arn}" does not belong to the role "${roleName}"`);

  let inferredEntityId = '';
  if (role.inferred_entity_type === EC2_ENTITY_TYPE) {
    await checkInferredInstance(ctx, role, roleName, entity, caller.account);
    inferredEntityId = entity.sessionName;
  }

  const identity = await readIdentityConfig(ctx.storage);
  const metadata = selectMetadata(effectiveMetadataFields(identity.iam_metadata), {
    account_id: entity.accountId,
    auth_type: 'iam',
    canonical_arn: canonicalArn(entity),
    client_arn: caller.arn,
    client_user_id: callerUniqueId,
    inferred_cloud_region: inferredEntityId ? role.inferred_cloud_region : '',
    inferred_entity_id: inferredEntityId,
    inferred_entity_type: inferredEntityId ? EC2_ENTITY_TYPE : '',
  });
  const aliasName = identity.iam_alias === 'unique_id' ? callerUniqueId : identity.iam_alias === 'full_arn' ? caller.arn : role.role_id;
  const internalData: IamInternalData = {
    auth_type: 'iam',
    role_name: roleName.toLowerCase(),
    role_id: role.role_id,
    canonical_arn: canonicalArn(entity),
    client_user_id: callerUniqueId,
    inferred_entity_id: inferredEntityId,
    inferred_cloud_region: inferredEntityId ? role.inferred_cloud_region : '',
    account_id: entity.accountId,
  };
  return {
    ...tokenAuth(role),
    displayName: displayNameOf(entity),
    metadata: { role_id: role.role_id, ...metadata },
    alias: { name: aliasName, metadata },
    internalData: { ...internalData },
  };
}

/**
 * Whether the caller is one of the role's principals: by unique ID; by canonical ARN when the role
 * does not resolve IDs; or by its full ARN (path included, looked up once and cached) against a
 * wildcard binding. A role without principal bindings (inference only) has no principal check.
 */
export async function principalMatches(ctx: CloudAuthContext, role: RoleEntry, entity: IamEntity, callerUniqueId: string): Promise<boolean> {
  if (role.bound_iam_principal_arn.length === 0) return true;
  if (callerUniqueId && role.bound_iam_principal_id.includes(callerUniqueId)) return true;
  if (!role.resolve_cloud_unique_ids && role.bound_iam_principal_arn.includes(canonicalArn(entity))) return true;
  const wildcards = role.bound_iam_principal_arn.filter((arn) => arn.endsWith('*'));
  if (wildcards.length === 0) return false;
  let fullArn = callerUniqueId ? ctx.arnCache.get(callerUniqueId) : undefined;
  if (!fullArn) {
    fullArn = await fullArnOf(ctx, entity);
    ctx.arnCache.set(callerUniqueId, fullArn);
  }
  const arn = fullArn;
  return wildcards.some((pattern) => globbedStringsMatch(pattern, arn));
}

/** Inferencing: the session name is the instance ID; it must run in the inferred region and meet the instance constraints. */
async function checkInferredInstance(ctx: CloudAuthContext, role: RoleEntry, roleName: string, entity: IamEntity, accountId: string): Promise<void> {
  const instanceId = entity.sessionName;
  const region = role.inferred_cloud_region;
  const prefix = `failed to verify ${instanceId} as a valid EC2 instance in region ${region}`;
  if (entity.type !== 'assumed-role') {
    throw new BadRequestError(`${prefix}: the caller is an IAM ${entity.type}, not an instance's assumed role, so no instance can be inferred`);
  }
  let instance;
  try {
    instance = await describeRunningInstance(ctx, instanceId, region, accountId);
  } catch (err) {
    if (err instanceof InstanceCheckError) throw new BadRequestError(`${prefix}: ${err.message}`);
    throw providerFailure(prefix, err);
  }
  const unmet = await unmetInstanceConstraint(ctx, instance, { instanceId, accountId, region }, role, roleName).catch((err) => {
    throw providerFailure('error validating instance', err);
  });
  if (unmet) throw new BadRequestError(`error validating instance: ${unmet}`);
}
