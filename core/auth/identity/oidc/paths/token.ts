/**
 * `oidc/token/:name`, an identity token for the caller's entity, and `oidc/introspect`
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/tokens#generate-a-signed-id-token).
 */
import { definePath, type AnyPathDefinition } from '../../../../framework/index.js';
import { introspect, issueIdToken, type IssuerDeps } from '../id-tokens.js';

export function oidcTokenPaths(deps: IssuerDeps): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'oidc/token/:name',
      fields: { name: { type: 'name', description: 'The role.', required: true } },
      operations: {
        read: {
          summary: 'Get an identity token for the calling token\'s entity.',
          handler: async (req, input) => ({ data: await issueIdToken(deps, input.name, req.auth?.entityId ?? '') }),
        },
      },
      synopsis: 'Generate an identity token.',
      description: 'A JWT whose sub is the caller\'s entity and whose aud is the role\'s client id, signed with the role\'s key.',
    }),
    definePath({
      pattern: 'oidc/introspect',
      fields: {
        token: { type: 'string', description: 'The identity token.', required: true, sensitive: true },
        client_id: { type: 'string', description: 'When given, the token\'s audience must include it.' },
      },
      operations: {
        update: {
          summary: 'Verify an identity token.',
          handler: async (_req, input) => ({ raw: { status: 200, body: await introspect(deps, input.token, input.client_id) } }),
        },
      },
      synopsis: 'Introspect an identity token.',
      description: 'Active when its signature, issuer, expiry and audience hold and its entity exists and is enabled; otherwise the reason.',
    }),
  ];
}
