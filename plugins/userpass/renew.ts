/**
 * Renewal of userpass tokens, with Vault's checks: the user still exists and its policies are
 * still those the token was given (the default policy aside); the TTLs come from the user as it
 * is now. The token's bound CIDRs are checked by the host whenever the token is used.
 */
import { BadRequestError, type AuthResult } from '../../sdk/index.js';
import type { UserpassContext } from './context.js';
import { readUser } from './user.js';

export async function renewLogin(ctx: UserpassContext, auth: AuthResult): Promise<AuthResult> {
  const username = auth.internalData?.username;
  if (typeof username !== 'string' || username === '') throw new BadRequestError('failed to renew entry: the token names no user');
  const user = await readUser(ctx.storage, username);
  if (!user) throw new BadRequestError(`failed to renew entry: user "${username}" no longer exists`);
  if (!equivalentPolicies(user.token_policies, auth.policies)) throw new BadRequestError('policies have changed, not renewing');
  return { ...auth, ttl: user.token_ttl, maxTtl: user.token_max_ttl, period: user.token_period };
}

/** Vault's policyutil.EquivalentPolicies: the same set, the default policy aside. */
function equivalentPolicies(a: readonly string[], b: readonly string[]): boolean {
  const set = (list: readonly string[]) => new Set(list.filter((p) => p !== 'default'));
  const [x, y] = [set(a), set(b)];
  return x.size === y.size && [...x].every((p) => y.has(p));
}
