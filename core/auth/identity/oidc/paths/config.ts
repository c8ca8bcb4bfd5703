/** `oidc/config`: the issuer of identity tokens (https://developer.hashicorp.com/vault/api-docs/secret/identity/tokens#configure-the-identity-tokens-backend). */
import { definePath, type AnyPathDefinition } from '../../../../framework/index.js';
import { BadRequestError } from '../../../../errors.js';
import type { IssuerDeps } from '../id-tokens.js';

/** A scheme (http or https), a host and an optional port, nothing more: the issuer is compared as a string. */
function validIssuer(issuer: string): boolean {
  try {
    const url = new URL(issuer);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '' && `${url.protocol}//${url.host}` === issuer;
  } catch {
    return false;
  }
}

export function oidcConfigPath(deps: IssuerDeps): AnyPathDefinition {
  return definePath({
    pattern: 'oidc/config',
    fields: { issuer: { type: 'string', description: 'The address tokens name as their issuer (scheme, host and port); empty: the server\'s api_addr.' } },
    operations: {
      read: {
        summary: 'Read the identity token configuration.',
        handler: async () => {
          const { issuer } = await deps.oidc.config();
          const warnings = issuer === '' && deps.apiAddr() === '' ? ['Both "issuer" and Keywarden\'s "api_addr" are empty. The issuer claim in generated tokens will not be network reachable.'] : [];
          return { data: { issuer }, ...(warnings.length > 0 ? { warnings } : {}) };
        },
      },
      update: {
        summary: 'Set the issuer of identity tokens.',
        handler: async (req, input) => {
          // An issuer sent empty resets it to the default; one not sent leaves it alone.
          if (!Object.hasOwn(req.data, 'issuer')) return null;
          const issuer = input.issuer ?? '';
          if (issuer !== '' && !validIssuer(issuer)) {
            throw new BadRequestError('invalid issuer, which must include only a scheme, host, and optional port (e.g. https://example.com:8200)');
          }
          await deps.oidc.writeConfig({ issuer });
          if (issuer === '') return null;
          return {
            warnings: [
              'If "issuer" is set explicitly, all tokens must be validated against that address. Setting issuer to "" restores the default: the server\'s api_addr.',
            ],
          };
        },
      },
    },
    synopsis: 'Configure identity tokens.',
    description: 'Tokens carry "<issuer>/v1/identity/oidc" as their iss; verifiers fetch the keys from there.',
  });
}
