/** `oidc/callback`: completes an OIDC login with the code the provider's redirect brought back. */
import { BadRequestError, checkLoginAddress, definePath, type AnyPathDefinition, type FieldSpecs } from '../../../sdk/index.js';
import { isOidcFlow } from '../config.js';
import type { JwtAuthContext } from '../context.js';
import { KeysUnavailableError, unavailable } from '../keys.js';
import { loginResponse } from '../login-result.js';
import { ExchangeError, checkIdToken, exchangeCode } from '../oidc-flow.js';
import { readRole } from '../role.js';
import { TokenInvalidError } from '../validate.js';

const FIELDS = {
  state: { type: 'string', description: 'The state of the login, as the provider handed it back.', sensitive: true },
  code: { type: 'string', description: 'The authorization code the provider handed back.', sensitive: true },
  client_nonce: { type: 'string', description: 'The client_nonce given to oidc/auth_url, if one was.', sensitive: true },
  error: { type: 'string', description: 'The provider\'s error code, when it refused the login (RFC 6749 §4.1.2.1).' },
  error_description: { type: 'string', description: 'The provider\'s description of its error.' },
  error_uri: { type: 'string', description: 'The provider\'s page about its error.' },
} as const satisfies FieldSpecs;

/** Every refusal of this path starts so: Vault's UI and CLI look for these words. */
const FAILED = 'Vault login failed.';

/** The provider errors of RFC 6749 §4.1.2.1, repeated to the client; any other is not. */
const KNOWN_ERRORS = new Set(['invalid_request', 'unauthorized_client', 'access_denied', 'unsupported_response_type', 'invalid_scope', 'server_error', 'temporarily_unavailable']);

export function oidcCallbackPath(ctx: JwtAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'oidc/callback',
    fields: FIELDS,
    refusedFields: { id_token: 'the implicit flow (an id_token handed to the callback) is not supported here: use the code flow' },
    unauthenticated: true,
    operations: {
      read: {
        summary: 'Complete an OIDC login.',
        handler: async (req, input) => {
          const keys = await ctx.keys.get();
          if (!keys || !isOidcFlow(keys.config)) throw new BadRequestError(`${FAILED} Could not load configuration`);
          const login = input.state ? ctx.pending.take(input.state) : undefined;
          if (!login) throw new BadRequestError(`${FAILED} Expired or missing OAuth state.`);
          const role = await readRole(ctx.storage, login.role);
          if (!role) throw new BadRequestError(`${FAILED} Role could not be found`);
          const providerError = (input.error ?? '').trim().toLowerCase();
          if (providerError !== '') {
            ctx.logger.warn({ error: providerError, error_description: input.error_description ?? '', error_uri: input.error_uri ?? '' }, 'jwt: the OIDC provider refused a login');
            throw new BadRequestError(`${FAILED} ${KNOWN_ERRORS.has(providerError) ? providerError : 'An unknown error occurred during OIDC authentication. Check server logs for details'}`);
          }
          if (login.clientNonce !== '' && input.client_nonce !== login.clientNonce) throw new BadRequestError('invalid client_nonce');
          checkLoginAddress(role.token, req);
          if (!input.code) throw new BadRequestError(`${FAILED} No code or id_token received.`);

          let claims;
          try {
            const provider = await keys.provider();
            const idToken = await exchangeCode(provider, keys.config, input.code, login, ctx.timeoutMs);
            claims = await checkIdToken(keys, provider, idToken, role, login, ctx.clock.now());
          } catch (err) {
            if (err instanceof KeysUnavailableError) throw unavailable(`${FAILED} `, err);
            if (err instanceof ExchangeError) throw new BadRequestError(`${FAILED} Error exchanging oidc code: "${err.message}".`);
            if (err instanceof TokenInvalidError) throw new BadRequestError(`${FAILED} Token verification failed. ${err.message}`);
            throw err;
          }
          if (role.bound_subject !== '' && claims.sub !== role.bound_subject) throw new BadRequestError(`${FAILED} sub claim does not match bound subject`);
          return loginResponse(claims, login.role, role, `${FAILED} `);
        },
      },
    },
    synopsis: 'Complete an OIDC login.',
    description:
      'The provider redirects the browser to the client\'s redirect_uri with a state and a code; the client passes them ' +
      'here (with its client_nonce). The code is exchanged, with the login\'s PKCE verifier, for an ID token, which must ' +
      'carry the login\'s nonce and pass the role\'s bounds. A state completes one login only.',
  });
}
