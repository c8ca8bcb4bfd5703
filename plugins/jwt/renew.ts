/**
 * Renewal of tokens from this method, as Vault re-checks it: the role the login used must still
 * exist, and its token settings as they are now give the TTLs.
 */
import { BadRequestError, type AuthResult, type Storage } from '../../sdk/index.js';
import { readRole } from './role.js';

export async function renewLogin(storage: Storage, auth: AuthResult): Promise<AuthResult> {
  const roleName = auth.internalData?.role;
  if (typeof roleName !== 'string' || roleName === '') throw new BadRequestError('failed to fetch role_name during renewal');
  const role = await readRole(storage, roleName);
  if (!role) throw new BadRequestError(`role ${roleName} does not exist during renewal`);
  return { ...auth, ttl: role.token.token_ttl, maxTtl: role.token.token_max_ttl, period: role.token.token_period };
}
