/**
 * The parts of Vault's pki API this engine does not serve, answered with a 400 that says why
 * rather than a bare 404 (docs/pki.md): the multi-issuer API (one issuer per mount here),
 * intermediates, ACME, cross-signing, and configuration of what is not there.
 */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';

const REFUSED: readonly { readonly pattern: string; readonly why: string }[] = [
  { pattern: 'issuer/:rest*', why: 'the multi-issuer API is not supported: Keywarden\'s pki engine serves one issuer per mount (ca, cert/ca, root)' },
  { pattern: 'issuers/', why: 'the multi-issuer API is not supported: Keywarden\'s pki engine serves one issuer per mount (ca, cert/ca, root)' },
  { pattern: 'issuers/:rest*', why: 'the multi-issuer API is not supported: Keywarden\'s pki engine serves one issuer per mount (ca, cert/ca, root)' },
  { pattern: 'key/:rest*', why: 'the multi-issuer API is not supported: the issuer\'s key is generated with root/generate' },
  { pattern: 'keys/', why: 'the multi-issuer API is not supported: the issuer\'s key is generated with root/generate' },
  { pattern: 'keys/:rest*', why: 'the multi-issuer API is not supported: the issuer\'s key is generated with root/generate' },
  { pattern: 'config/issuers', why: 'the multi-issuer API is not supported: one issuer per mount' },
  { pattern: 'config/keys', why: 'the multi-issuer API is not supported: one issuer per mount' },
  { pattern: 'config/ca', why: 'importing a CA bundle is not supported: generate the root with root/generate' },
  { pattern: 'intermediate/:rest*', why: 'intermediate CAs are not supported: the mount\'s issuer is a root' },
  { pattern: 'root/sign-intermediate', why: 'signing intermediate CAs is not supported' },
  { pattern: 'root/sign-self-issued', why: 'signing self-issued certificates is not supported' },
  { pattern: 'root/rotate/:rest*', why: 'root rotation is not supported: DELETE root, then generate a new one' },
  { pattern: 'root/replace', why: 'the multi-issuer API is not supported: one issuer per mount' },
  { pattern: 'acme/:rest*', why: 'ACME is not supported' },
  { pattern: 'config/acme', why: 'ACME is not supported' },
  { pattern: 'ocsp/:rest*', why: 'OCSP is not supported: fetch the CRL' },
  { pattern: 'unified-crl/:rest*', why: 'there is no cross-cluster revocation' },
  { pattern: 'sign-verbatim/:rest*', why: 'sign-verbatim is not supported: sign through a role' },
];

export function refusedPaths(): AnyPathDefinition[] {
  return REFUSED.map(({ pattern, why }) => {
    const refuse = async (): Promise<never> => {
      throw new BadRequestError(why);
    };
    const params = [...pattern.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    return definePath({
      pattern,
      fields: Object.fromEntries(params.map((p) => [p, { type: 'string', description: 'Not served.' }])),
      operations: {
        read: { summary: 'Not served.', handler: refuse },
        update: { summary: 'Not served.', handler: refuse },
        delete: { summary: 'Not served.', handler: refuse },
        list: { summary: 'Not served.', handler: refuse },
      },
      synopsis: 'Not served by Keywarden\'s pki engine.',
      description: why,
    });
  });
}
