/**
 * Renewal of tokens from this method. An iam token renews only while its role exists, its
 * principal is still bound and — when the role now infers instances — its instance still runs.
 * An ec2 token renews only while its instance runs, its access-list entry is there and the role
 * of that entry exists; the entry's expiry moves with it. The TTLs come from the role as it is
 * now. Inputs come from the token's internal data (not its visible metadata, which the operator
 * may have trimmed through config/identity).
 */
import { inspect } from 'node:util';
import { BadRequestError, UpstreamError, afterDuration, type AuthResult } from '../../sdk/index.js';
import { ArnError, parseIamArn } from './arn.js';
import type { CloudAuthContext } from './context.js';
import { EC2_ENTITY_TYPE, readRole } from './role.js';
import { principalMatches } from './login-iam.js';
import { describeRunningInstance, InstanceCheckError } from './instance-checks.js';
import { ProviderUnavailableError } from './provider/types.js';
import { isProviderError } from './failures.js';
import { readAccessListEntry, writeAccessListEntry } from './access-list.js';
import { maxTtls } from './login-ec2.js';

export async function renewLogin(ctx: CloudAuthContext, auth: AuthResult): Promise<AuthResult> {
  const internal = auth.internalData ?? {};
  const authType = internal.auth_type ?? auth.metadata?.auth_type;
  if (authType === 'iam') return renewIam(ctx, auth, internal);
  if (authType === 'ec2') return renewEc2(ctx, auth, internal);
  throw refuse(`unsupported auth_type "${typeof authType === 'string' ? authType : inspect(authType)}"`);
}

async function renewIam(ctx: CloudAuthContext, auth: AuthResult, internal: Readonly<Record<string, unknown>>): Promise<AuthResult> {
  const text = (name: string) => (typeof internal[name] === 'string' ? (internal[name] as string) : '');
  const roleName = text('role_name');
  if (!roleName) throw refuse('error retrieving role_name during renewal');
  const role = await readRole(ctx.storage, roleName);
  if (!role) throw refuse('role entry not found');

  if (role.inferred_entity_type === EC2_ENTITY_TYPE) {
    const instanceId = text('inferred_entity_id');
    if (!instanceId) throw refuse(`the token was issued before role "${roleName}" inferred ${EC2_ENTITY_TYPE} entities; log in again`);
    try {
      await describeRunningInstance(ctx, instanceId, text('inferred_cloud_region'), text('account_id'));
    } catch (err) {
      throw refuse(`failed to verify instance ID "${instanceId}": ${(err as Error).message}`, err);
    }
  }

  if (role.bound_iam_principal_arn.length > 0) {
    const canonical = text('canonical_arn');
    let bound: boolean;
    try {
      bound = await principalMatches(ctx, role, parseIamArn(canonical), text('client_user_id'));
    } catch (err) {
      if (err instanceof ArnError) throw refuse(`error parsing ARN "${canonical}": ${err.message}`);
      throw refuse(`error looking up full ARN of "${canonical}": ${(err as Error).message}`, err);
    }
    if (!bound) throw refuse(`role "${roleName}" no longer bound to ARN "${canonical}"`);
  }

  return { ...auth, ttl: role.token_ttl, maxTtl: role.token_max_ttl, period: role.token_period };
}

async function renewEc2(ctx: CloudAuthContext, auth: AuthResult, internal: Readonly<Record<string, unknown>>): Promise<AuthResult> {
  const text = (name: string) => (typeof internal[name] === 'string' ? (internal[name] as string) : '');
  const instanceId = text('instance_id');
  if (!instanceId) throw refuse('unable to fetch the instance ID from the token');
  try {
    await describeRunningInstance(ctx, instanceId, text('region'), text('account_id'));
  } catch (err) {
    throw refuse(`failed to verify instance ID "${instanceId}": ${(err as Error).message}`, err);
  }
  const tagMaxTtl = typeof internal.role_tag_max_ttl === 'number' ? internal.role_tag_max_ttl : 0;

  return ctx.accessListLocks.run(instanceId, async () => {
    const entry = await readAccessListEntry(ctx.storage, instanceId);
    if (!entry) throw refuse(`failed to verify the access list identity entry for instance ID: "${instanceId}"`);
    const role = await readRole(ctx.storage, entry.role);
    if (!role) throw refuse('role entry not found');
    const ttls = maxTtls(ctx, role, tagMaxTtl);
    const now = ctx.clock.now();
    await writeAccessListEntry(ctx.storage, instanceId, {
      ...entry,
      last_updated_time: now.toISOString(),
      expiration_time: afterDuration(now, ttls.longest).toISOString(),
    });
    return { ...auth, ttl: role.token_ttl, maxTtl: ttls.shortest, period: role.token_period };
  });
}

/** Renewal refused: 400 with Vault's prefix, or 502 when the provider could not answer; anything unexpected is rethrown (500). */
function refuse(why: string, cause?: unknown): Error {
  if (cause !== undefined && !(cause instanceof InstanceCheckError) && !isProviderError(cause)) return cause instanceof Error ? cause : new Error(inspect(cause));
  const message = `failed to renew entry: ${why}`;
  return cause instanceof ProviderUnavailableError ? new UpstreamError(message) : new BadRequestError(message);
}
