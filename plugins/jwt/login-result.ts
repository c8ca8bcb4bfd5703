/**
 * The end of every login of this method, a JWT login or an OIDC callback: the identity the
 * claims give, the role's bound claims, and the auth result the host mints the token from.
 */
import { BadRequestError, tokenAuth, type LogicalResponse } from '../../sdk/index.js';
import { ClaimError, checkBoundClaims, identityOf } from './claims.js';
import type { JwtRole } from './role.js';
import type { Claims } from './validate.js';

/** The login's answer; `prefix` starts every refusal's message (the OIDC callback's "Vault login failed."). */
export function loginResponse(claims: Claims, roleName: string, role: JwtRole, prefix = ''): LogicalResponse {
  const identity = refusing(prefix, () => identityOf(claims, roleName, role));
  refusing(`${prefix}error validating claims: `, () => checkBoundClaims(role.bound_claims_type, role.bound_claims, claims));
  return {
    auth: {
      ...tokenAuth(role.token),
      displayName: identity.name,
      alias: { name: identity.name, metadata: identity.metadata },
      ...(identity.groups.length > 0 ? { groupAliases: identity.groups.map((name) => ({ name })) } : {}),
      metadata: identity.metadata,
      internalData: { role: roleName },
    },
  };
}

/** `check`'s result; a ClaimError it throws becomes a 400 whose message starts with `prefix`. */
function refusing<T>(prefix: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ClaimError) throw new BadRequestError(`${prefix}${err.message}`);
    throw err;
  }
}
