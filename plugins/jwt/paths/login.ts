/** `login`: log in with a signed JWT against a jwt role. */
import { BadRequestError, checkLoginAddress, definePath, type AnyPathDefinition, type FieldSpecs } from '../../../sdk/index.js';
import { acceptedAlgorithms } from '../config.js';
import type { JwtAuthContext } from '../context.js';
import { KeysUnavailableError, unavailable } from '../keys.js';
import { loginResponse } from '../login-result.js';
import { readRole } from '../role.js';
import { TokenInvalidError, audiencesOf, validateToken } from '../validate.js';

const FIELDS = {
  role: { type: 'lowercase-string', description: 'The role to log in against; default_role when omitted.' },
  jwt: { type: 'string', description: 'The signed JWT.', sensitive: true },
} as const satisfies FieldSpecs;

export function loginPath(ctx: JwtAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'login',
    fields: FIELDS,
    unauthenticated: true,
    operations: {
      update: {
        summary: 'Log in with a JWT.',
        handler: async (req, input) => {
          const keys = await ctx.keys.get();
          if (!keys) throw new BadRequestError('could not load configuration');
          const roleName = input.role || keys.config.default_role;
          if (!roleName) throw new BadRequestError('missing role');
          const role = await readRole(ctx.storage, roleName);
          if (!role) throw new BadRequestError(`role "${roleName}" could not be found`);
          if (role.role_type === 'oidc') throw new BadRequestError('role with oidc role_type is not allowed');
          if (!input.jwt) throw new BadRequestError('missing token');
          checkLoginAddress(role.token, req);

          let claims;
          try {
            claims = await validateToken(keys, input.jwt, {
              issuer: keys.config.bound_issuer,
              subject: role.bound_subject,
              audiences: role.bound_audiences,
              algorithms: acceptedAlgorithms(keys.config, false),
              expirationLeeway: role.expiration_leeway,
              notBeforeLeeway: role.not_before_leeway,
              clockSkewLeeway: role.clock_skew_leeway,
              now: ctx.clock.now(),
            });
          } catch (err) {
            if (err instanceof KeysUnavailableError) throw unavailable('error validating token: ', err);
            if (err instanceof TokenInvalidError) throw new BadRequestError(`error validating token: ${err.message}`);
            throw err;
          }
          // A token meant for some audience is not for a role that names none (Vault's rule).
          if (audiencesOf(claims).length > 0 && role.bound_audiences.length === 0) throw new BadRequestError('audience claim found in JWT but no audiences bound to the role');
          return loginResponse(claims, roleName, role);
        },
      },
    },
    synopsis: 'Log in with a JWT.',
    description:
      'The token is verified with the configured keys and checked against the role: bound issuer, subject, audiences and ' +
      'claims, and its validity period with the role\'s leeways. The user claim names the entity alias; the groups claim ' +
      'gives the group aliases; claim_mappings become metadata.',
  });
}
