/**
 * `cert/:serial` (also `ca`, `crl` and `ca_chain` as serials, as in Vault), `certs/` and
 * `certs/revoked/`. Reading a certificate needs no token: certificates are public.
 */
import { definePath, listResponse, type AnyPathDefinition } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';
import { currentCrl } from '../crl.js';
import { pem } from '../der.js';
import { normalizeSerial } from '../store.js';

export function certPaths(ctx: PkiContext): AnyPathDefinition[] {
  const cert = definePath({
    pattern: 'cert/:serial',
    unauthenticated: true,
    fields: { serial: { type: 'string', description: 'The serial (`3b:1a:…` or `3b-1a-…`), or `ca`, `ca_chain` or `crl`.', required: true } },
    operations: {
      read: {
        summary: 'Read a certificate.',
        handler: async (_req, input) => {
          const issuer = await ctx.store.issuer();
          const special = input.serial.toLowerCase();
          if (special === 'ca' || special === 'ca_chain') {
            if (!issuer) return null;
            return { data: { certificate: issuer.certificate, ca_chain: [issuer.certificate], issuer_id: issuer.issuerId, revocation_time: 0, revocation_time_rfc3339: '' } };
          }
          if (special === 'crl') {
            const crl = await currentCrl(ctx);
            return crl ? { data: { certificate: pem('X509 CRL', crl), revocation_time: 0, revocation_time_rfc3339: '' } } : null;
          }
          const serial = normalizeSerial(input.serial);
          const stored = await ctx.store.cert(serial);
          if (!stored) return null;
          const revoked = await ctx.store.revoked(serial);
          const time = revoked?.revocation_time ?? 0;
          return {
            data: {
              certificate: stored.certificate,
              revocation_time: time,
              revocation_time_rfc3339: time ? new Date(time * 1000).toISOString() : '',
              issuer_id: issuer?.issuerId ?? '',
            },
          };
        },
      },
    },
    synopsis: 'A certificate by serial.',
    description: 'PEM, with its revocation time (0 when not revoked). `ca`, `ca_chain` and `crl` read those.',
  });

  const certs = definePath({
    pattern: 'certs/',
    fields: {},
    operations: { list: { summary: 'List the certificates.', handler: async () => listResponse(await ctx.store.certSerials()) } },
    synopsis: 'The stored certificates.',
    description: 'Their serials; a role with no_store leaves its certificates out.',
  });

  const revoked = definePath({
    pattern: 'certs/revoked/',
    fields: {},
    operations: { list: { summary: 'List the revoked certificates.', handler: async () => listResponse(await ctx.store.revokedSerials()) } },
    synopsis: 'The revoked certificates.',
    description: 'Their serials, until tidy drops expired ones.',
  });

  return [cert, certs, revoked];
}
