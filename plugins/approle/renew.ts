/**
 * Renewal of AppRole tokens, with Vault's check: the role still exists; the TTLs come from the
 * role as it is now. The token's bound CIDRs are checked by the host whenever the token is used.
 */
import { BadRequestError, type AuthResult } from '../../sdk/index.js';
import type { AppRoleContext } from './context.js';
import { readRole } from './role.js';

export async function renewLogin(ctx: AppRoleContext, auth: AuthResult): Promise<AuthResult> {
  const roleName = auth.internalData?.role_name;
  if (typeof roleName !== 'string' || roleName === '') throw new BadRequestError('failed to fetch role_name during renewal');
  const role = await readRole(ctx, roleName);
  if (!role) throw new BadRequestError(`role "${roleName}" does not exist during renewal`);
  return { ...auth, ttl: role.token_ttl, maxTtl: role.token_max_ttl, period: role.token_period };
}
