/** `oidc/auth_url`: the provider's authorization URL that starts an OIDC login. */
import { BadRequestError, definePath, type AnyPathDefinition, type FieldSpecs } from '../../../sdk/index.js';
import { isOidcFlow } from '../config.js';
import type { JwtAuthContext } from '../context.js';
import { KeysUnavailableError } from '../keys.js';
import { authorizationUrl, randomValue, validRedirect } from '../oidc-flow.js';
import { readRole } from '../role.js';

const FIELDS = {
  role: { type: 'lowercase-string', description: 'The role to log in against; default_role when omitted.' },
  redirect_uri: { type: 'string', description: 'Where the provider sends the browser back: one of the role\'s allowed_redirect_uris.' },
  client_nonce: { type: 'string', description: 'A value of the client\'s own that the callback must present again (the CLI sends one).', sensitive: true },
} as const satisfies FieldSpecs;

export function oidcAuthUrlPath(ctx: JwtAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'oidc/auth_url',
    fields: FIELDS,
    unauthenticated: true,
    operations: {
      update: {
        summary: 'Start an OIDC login: get the authorization URL.',
        handler: async (_req, input) => {
          const keys = await ctx.keys.get();
          if (!keys) throw new BadRequestError('could not load configuration');
          if (!isOidcFlow(keys.config)) throw new BadRequestError('OIDC login is not configured for this mount');
          const roleName = input.role || keys.config.default_role;
          if (!roleName) throw new BadRequestError('missing role');
          const redirectUri = input.redirect_uri ?? '';
          if (!redirectUri) throw new BadRequestError('missing redirect_uri');
          const role = await readRole(ctx.storage, roleName);
          if (!role) throw new BadRequestError(`role "${roleName}" could not be found`);
          // Like Vault, this unauthenticated path answers an empty URL rather than say what is wrong.
          const none = { data: { auth_url: '' } };
          if (!validRedirect(redirectUri, role.allowed_redirect_uris)) {
            ctx.logger.warn({ role: roleName, redirect_uri: redirectUri }, 'jwt: oidc/auth_url asked for a redirect_uri the role does not allow');
            return none;
          }
          let provider;
          try {
            provider = await keys.provider();
          } catch (err) {
            if (!(err instanceof KeysUnavailableError)) throw err;
            ctx.logger.warn({ err: err.message }, 'jwt: the OIDC provider could not be asked for its metadata');
            return none;
          }
          const state = randomValue();
          const login = { role: roleName, redirectUri, nonce: randomValue(), codeVerifier: randomValue(), clientNonce: input.client_nonce ?? '' };
          let url: string;
          try {
            url = authorizationUrl(provider, keys.config, role, state, login);
          } catch (err) {
            if (!(err instanceof KeysUnavailableError)) throw err;
            ctx.logger.warn({ err: err.message }, 'jwt: the OIDC provider has no authorization endpoint');
            return none;
          }
          ctx.pending.add(state, login);
          return { data: { auth_url: url } };
        },
      },
    },
    synopsis: 'Start an OIDC login.',
    description:
      'Answers the URL of the provider\'s authorization endpoint for the role, with a fresh state, nonce and PKCE ' +
      'challenge. The login completes at oidc/callback within ten minutes. A redirect_uri the role does not allow ' +
      'gets an empty auth_url.',
  });
}
