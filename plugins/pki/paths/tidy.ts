/**
 * `tidy`: drops the certificates (and revocation records) that expired more than `safety_buffer`
 * ago, and builds the CRL again without them. Done before the answer, which is Vault's 202.
 */
import { X509Certificate } from 'node:crypto';
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';
import { rebuildCrl } from '../crl.js';

export function tidyPath(ctx: PkiContext): AnyPathDefinition {
  return definePath({
    pattern: 'tidy',
    fields: {
      tidy_cert_store: { type: 'bool', description: 'Drop expired certificates.', default: false },
      tidy_revoked_certs: { type: 'bool', description: 'Drop the revocation records of expired certificates.', default: false },
      safety_buffer: { type: 'duration', description: 'How long after expiry a certificate is kept.', default: 72 * 3600 },
    },
    refusedFields: {
      tidy_revoked_cert_issuer_associations: 'one issuer per mount: nothing to associate',
      tidy_expired_issuers: 'one issuer per mount',
      tidy_move_legacy_ca_bundle: 'there is no legacy bundle',
      tidy_acme: 'ACME is not supported',
      tidy_cross_cluster_revoked_certs: 'there is no cross-cluster revocation',
      tidy_revocation_queue: 'there is no revocation queue',
    },
    operations: {
      update: {
        summary: 'Drop expired certificates.',
        handler: async (_req, input) => {
          const cutoff = ctx.clock.now().getTime() - input.safety_buffer * 1000;
          const expired = (pemText: string) => new Date(new X509Certificate(pemText).validTo).getTime() < cutoff;
          let certs = 0;
          let revoked = 0;
          await ctx.locks.run('crl', async () => {
            if (input.tidy_cert_store) {
              for (const serial of await ctx.store.certSerials()) {
                const stored = await ctx.store.cert(serial);
                if (stored && expired(stored.certificate)) {
                  await ctx.store.deleteCert(serial);
                  certs++;
                }
              }
            }
            if (input.tidy_revoked_certs) {
              for (const serial of await ctx.store.revokedSerials()) {
                const entry = await ctx.store.revoked(serial);
                if (entry && expired(entry.certificate)) {
                  await ctx.store.deleteCert(serial);
                  revoked++;
                }
              }
              await rebuildCrl(ctx);
            }
          });
          return { status: 202, warnings: [`Tidy operation done: ${certs} expired certificates and ${revoked} expired revoked certificates removed.`] };
        },
      },
    },
    synopsis: 'Tidy the certificate store.',
    description: 'Removes certificates expired for longer than safety_buffer (tidy_cert_store) and their revocation records (tidy_revoked_certs).',
  });
}
