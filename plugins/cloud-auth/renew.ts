/**
 * Renewal of tokens from this method. An iam token renews only while its role exists, its
 * principal is still bound and — when the role now infers instances — its instance still runs.
 * The TTLs come from the role as it is now. Inputs come from the token's internal data (not its
 * visible metadata, which the operator may have trimmed through config/identity).
 */
import { BadRequestError, UpstreamError } from '../../core/errors.js';
import type { AuthResult } from '../../core/framework/index.js';
import { ArnError, parseIamArn } from './arn.js';
import type { CloudAuthContext } from './context.js';
import { EC2_ENTITY_TYPE, readRole } from './role.js';
import { principalMatches } from './login-iam.js';
import { describeRunningInstance, InstanceCheckError } from './instance-checks.js';
import { ProviderUnavailableError } from './provider/types.js';
import { isProviderError } from './failures.js';

export async function renewLogin(ctx: CloudAuthContext, auth: AuthResult): Promise<AuthResult> {
  const internal = auth.internalData ?? {};
  const authType = internal.auth_type ?? auth.metadata?.auth_type;
  if (authType === 'iam') return renewIam(ctx, auth, internal);
  throw refuse(`unsupported auth_type "${String(authType)}"`);
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

/** Renewal refused: 400 with Vault's prefix, or 502 when the provider could not answer; anything unexpected is rethrown (500). */
function refuse(why: string, cause?: unknown): Error {
  if (cause !== undefined && !(cause instanceof InstanceCheckError) && !isProviderError(cause)) return cause instanceof Error ? cause : new Error(String(cause));
  const message = `failed to renew entry: ${why}`;
  return cause instanceof ProviderUnavailableError ? new UpstreamError(message) : new BadRequestError(message);
}
