/** `revoke`: revokes an issued certificate by serial; it appears in the CRL at once. */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';
import { revokeCertificate } from '../crl.js';

export function revokePath(ctx: PkiContext): AnyPathDefinition {
  return definePath({
    pattern: 'revoke',
    fields: {
      serial_number: { type: 'string', description: 'The serial of the certificate to revoke (`3b:1a:…` or `3b-1a-…`).', default: '' },
    },
    refusedFields: { certificate: 'revoke by serial_number' },
    operations: {
      update: {
        summary: 'Revoke a certificate.',
        handler: async (_req, input) => {
          if (input.serial_number === '') throw new BadRequestError('the serial_number field is required');
          const { revocation_time } = await revokeCertificate(ctx, input.serial_number);
          return { data: { revocation_time, revocation_time_rfc3339: new Date(revocation_time * 1000).toISOString(), state: 'revoked' } };
        },
      },
    },
    synopsis: 'Revoke a certificate.',
    description: 'Records the revocation and signs a new CRL before the answer. Revoking a revoked certificate answers its first revocation time.',
  });
}
