/** `config/certificate/:cert_name` and `LIST config/certificates`: public certificates for ec2 signatures. */
import { definePath, listResponse, type AnyPathDefinition, BadRequestError } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import {
  CERTIFICATE_TYPES,
  listCertificateNames,
  parseCertificateInput,
  readCertificate,
  writeCertificate,
  type CertificateType,
} from '../certificates.js';
import { STORAGE_KEYS } from '../storage.js';

export function configCertificatePaths(ctx: CloudAuthContext): AnyPathDefinition[] {
  const certificate = definePath({
    pattern: 'config/certificate/:cert_name',
    fields: {
      cert_name: { type: 'name', description: 'Name of the certificate.', required: true },
      cloud_public_cert: { type: 'string', description: 'The public certificate, PEM or base64 of PEM: one CERTIFICATE block.' },
      aws_public_cert: { type: 'string', description: 'Alias of cloud_public_cert, as Vault clients send it.', deprecated: true },
      type: { type: 'lowercase-string', description: 'pkcs7 (PKCS#7 signatures, default) or identity (RSA signatures of the document).' },
    },
    existenceCheck: async (_req, input) => (await readCertificate(ctx.storage, input.cert_name)) !== undefined,
    operations: {
      read: {
        summary: 'Read a certificate.',
        handler: async (_req, input) => {
          const entry = await readCertificate(ctx.storage, input.cert_name);
          return entry ? { data: { cloud_public_cert: entry.cloud_public_cert, aws_public_cert: entry.cloud_public_cert, type: entry.type } } : null;
        },
      },
      create: { summary: 'Register a certificate.', handler: (_req, input) => write(input) },
      update: { summary: 'Replace a certificate.', handler: (_req, input) => write(input) },
      delete: {
        summary: 'Remove a certificate.',
        handler: async (_req, input) => {
          await ctx.storage.delete(STORAGE_KEYS.certificatePrefix + input.cert_name);
          return null;
        },
      },
    },
    synopsis: 'Register a public certificate for verifying ec2 identity documents.',
    description:
      'The certificate is given as PEM text or base64 of it, one CERTIFICATE block. type pkcs7 serves PKCS#7 signatures ' +
      '(the pkcs7 and rsa2048 metadata endpoints); type identity serves RSA signatures of the plain document. A certificate ' +
      'verifies logins only while it is valid by the server clock, and for 24h past its notAfter (the grace for provider ' +
      'certificate rollover): register the successor before then.',
  });

  async function write(input: { cert_name: string; cloud_public_cert?: string | undefined; aws_public_cert?: string | undefined; type?: string | undefined }) {
    const existing = await readCertificate(ctx.storage, input.cert_name);
    const type = input.type ?? existing?.type ?? 'pkcs7';
    if (!(CERTIFICATE_TYPES as readonly string[]).includes(type)) throw new BadRequestError(`invalid certificate type "${type}"`);
    const given = input.cloud_public_cert ?? input.aws_public_cert;
    if (given === undefined) throw new BadRequestError('missing cloud_public_cert');
    const { pem } = parseCertificateInput(given);
    await writeCertificate(ctx.storage, input.cert_name, { cloud_public_cert: pem, type: type as CertificateType });
    return null;
  }

  const list = definePath({
    pattern: 'config/certificates/',
    fields: {},
    operations: {
      list: { summary: 'List certificate names.', handler: async () => listResponse(await listCertificateNames(ctx.storage)) },
    },
    synopsis: 'List the registered certificates.',
    description: 'Names of the certificates registered through config/certificate/:cert_name.',
  });
  return [certificate, list];
}
