/** `config/urls`: the URLs written into every certificate issued afterwards (AIA and CRL distribution points). */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';

export function configUrlsPath(ctx: PkiContext): AnyPathDefinition {
  return definePath({
    pattern: 'config/urls',
    fields: {
      issuing_certificates: { type: 'comma-string-list', description: 'Where the issuing CA certificate can be fetched (AIA caIssuers).' },
      crl_distribution_points: { type: 'comma-string-list', description: 'Where the CRL can be fetched.' },
      ocsp_servers: { type: 'comma-string-list', description: 'OCSP responders (AIA).' },
    },
    refusedFields: { enable_templating: 'URL templating is not supported by Keywarden\'s pki engine' },
    operations: {
      read: {
        summary: 'Read the URLs.',
        handler: async () => ({ data: { ...(await ctx.store.urls()), enable_templating: false } }),
      },
      update: {
        summary: 'Set the URLs.',
        handler: async (_req, input) => {
          const current = await ctx.store.urls();
          const urls = {
            issuing_certificates: input.issuing_certificates ?? current.issuing_certificates,
            crl_distribution_points: input.crl_distribution_points ?? current.crl_distribution_points,
            ocsp_servers: input.ocsp_servers ?? current.ocsp_servers,
          };
          for (const url of [...urls.issuing_certificates, ...urls.crl_distribution_points, ...urls.ocsp_servers]) {
            if (!URL.canParse(url)) throw new BadRequestError(`invalid URL: ${url}`);
          }
          await ctx.store.putUrls(urls);
          return { data: { ...urls, enable_templating: false } };
        },
      },
    },
    synopsis: 'The URLs written into certificates.',
    description: 'Each field is a list (or comma-separated); a field left out keeps its value.',
  });
}
