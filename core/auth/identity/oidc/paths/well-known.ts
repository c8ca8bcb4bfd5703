/**
 * `oidc/.well-known/openid-configuration` and `oidc/.well-known/keys`: what a verifier of
 * identity tokens fetches, served without a token as Vault does
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/tokens#read-well-known-configurations).
 */
import { definePath, type AnyPathDefinition } from '../../../../framework/index.js';
import { issuerOf, type IssuerDeps } from '../id-tokens.js';
import { ALGORITHMS } from '../oidc-store.js';

export function wellKnownPaths(deps: IssuerDeps): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'oidc/.well-known/openid-configuration',
      fields: {},
      unauthenticated: true,
      operations: {
        read: {
          summary: 'Read the discovery document.',
          handler: async () => {
            const issuer = await issuerOf(deps);
            return {
              raw: {
                status: 200,
                body: {
                  issuer,
                  jwks_uri: `${issuer}/.well-known/keys`,
                  response_types_supported: ['id_token'],
                  subject_types_supported: ['public'],
                  id_token_signing_alg_values_supported: [...ALGORITHMS],
                },
              },
            };
          },
        },
      },
      synopsis: 'OpenID discovery document of identity tokens.',
      description: 'The issuer and where its keys are.',
    }),
    definePath({
      pattern: 'oidc/.well-known/keys',
      fields: {},
      unauthenticated: true,
      operations: {
        read: {
          summary: 'Read the public keys.',
          handler: async () => ({ raw: { status: 200, body: { keys: await deps.oidc.publicKeys() } } }),
        },
      },
      synopsis: 'Public keys of identity tokens.',
      description: 'A JSON Web Key Set: every named key\'s current public key and those rotated out within their verification TTL.',
    }),
  ];
}
