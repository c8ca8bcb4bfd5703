/**
 * `ca`, `ca/pem`, `ca_chain`, `crl`, `crl/pem` and `crl/rotate`: the issuer's certificate and the
 * CRL as files, without a token, as clients and TLS stacks fetch them from the URLs of config/urls.
 * The DER forms are `application/pkix-cert` and `application/pkix-crl`, the PEM ones text.
 */
import { definePath, type AnyPathDefinition, type LogicalResponse } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';
import { currentCrl, rebuildCrl } from '../crl.js';
import { pem } from '../der.js';

const PEM_TYPE = 'application/pem-file';

export function caPaths(ctx: PkiContext): AnyPathDefinition[] {
  /** An empty 204 when there is nothing yet (no issuer), as Vault answers these raw paths. */
  const file = async (kind: 'ca-der' | 'ca-pem' | 'crl-der' | 'crl-pem'): Promise<LogicalResponse> => {
    if (kind === 'ca-der' || kind === 'ca-pem') {
      const issuer = await ctx.store.issuer();
      if (!issuer) return { raw: { status: 204 } };
      return kind === 'ca-der' ? { raw: { status: 200, body: issuer.cert.raw, contentType: 'application/pkix-cert' } } : { raw: { status: 200, body: issuer.certificate, contentType: PEM_TYPE } };
    }
    const crl = await currentCrl(ctx);
    if (!crl) return { raw: { status: 204 } };
    return kind === 'crl-der' ? { raw: { status: 200, body: crl, contentType: 'application/pkix-crl' } } : { raw: { status: 200, body: pem('X509 CRL', crl), contentType: PEM_TYPE } };
  };
  const raw = (pattern: string, kind: Parameters<typeof file>[0], what: string) =>
    definePath({
      pattern,
      unauthenticated: true,
      fields: {},
      operations: { read: { summary: `Fetch ${what}.`, handler: async () => file(kind) } },
      synopsis: `Fetch ${what}.`,
      description: `${what[0]!.toUpperCase()}${what.slice(1)}, as a file (no envelope), without a token.`,
    });

  const rotate = definePath({
    pattern: 'crl/rotate',
    fields: {},
    operations: {
      read: {
        summary: 'Build the CRL again.',
        handler: async () => {
          const built = await ctx.locks.run('crl', () => rebuildCrl(ctx));
          return { data: { success: built !== undefined } };
        },
      },
    },
    synopsis: 'Rebuild the CRL.',
    description: 'Signs a new CRL now (a fresh next update time); the CRL is also rebuilt on every revocation.',
  });

  return [
    raw('ca', 'ca-der', 'the CA certificate (DER)'),
    raw('ca/pem', 'ca-pem', 'the CA certificate (PEM)'),
    raw('ca_chain', 'ca-pem', 'the CA chain (PEM)'),
    raw('crl', 'crl-der', 'the CRL (DER)'),
    raw('crl/pem', 'crl-pem', 'the CRL (PEM)'),
    rotate,
  ];
}
