/**
 * `root/generate/:exported` and `root`: the mount's self-signed CA. One issuer per mount: a second
 * root is refused until `DELETE root` removes the first (Vault's multi-issuer API is out of scope,
 * docs/pki.md). `exported` answers the private key once; `internal` never does.
 */
import { X509Certificate, randomUUID } from 'node:crypto';
import { BadRequestError, definePath, goDuration, type AnyPathDefinition } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';
import { authorityInfoAccess, basicConstraints, crlDistributionPoints, keyIdentifier, keyUsage, nameOf, pem, signCertificate, subjectAltName, subjectKeyIdentifier, toDer } from '../der.js';
import { checkKey, generateKey, privateKeyPem } from '../keys.js';
import { ipBytes, newSerial } from '../issue.js';
import { serialOf } from '../store.js';
import { isIP } from 'node:net';

const SUBJECT_FIELDS = {
  ou: { type: 'comma-string-list', description: 'The OU (OrganizationalUnit) values of the subject.' },
  organization: { type: 'comma-string-list', description: 'The O (Organization) values of the subject.' },
  country: { type: 'comma-string-list', description: 'The C (Country) values of the subject.' },
  locality: { type: 'comma-string-list', description: 'The L (Locality) values of the subject.' },
  province: { type: 'comma-string-list', description: 'The ST (Province) values of the subject.' },
  street_address: { type: 'comma-string-list', description: 'The street address values of the subject.' },
  postal_code: { type: 'comma-string-list', description: 'The postal code values of the subject.' },
} as const;

export function rootPaths(ctx: PkiContext): AnyPathDefinition[] {
  const generate = definePath({
    pattern: 'root/generate/:exported',
    fields: {
      exported: { type: 'string', description: '`internal` keeps the key; `exported` answers it once.', required: true, allowedValues: ['internal', 'exported', 'existing', 'kms'] },
      common_name: { type: 'string', description: 'The CN of the CA certificate.', required: true },
      alt_names: { type: 'comma-string-list', description: 'DNS and e-mail subject alternative names.', default: [] },
      ip_sans: { type: 'comma-string-list', description: 'IP subject alternative names.', default: [] },
      ttl: { type: 'duration', description: 'The CA certificate\'s lifetime; the mount\'s default when unset, never beyond its max TTL.', default: 0 },
      key_type: { type: 'string', description: '`rsa`, `ec` or `ed25519`.', default: 'rsa' },
      key_bits: { type: 'int', description: 'RSA modulus or EC curve size; 0 picks 2048 or 256.', default: 0 },
      max_path_length: { type: 'int', description: 'The CA\'s path length constraint; -1 for none.', default: -1 },
      exclude_cn_from_sans: { type: 'bool', description: 'Leave the CN out of the SANs.', default: false },
      format: { type: 'string', description: 'Only `pem`.', default: 'pem', allowedValues: ['pem'] },
      private_key_format: { type: 'string', description: '`der` (PKCS#1 or SEC 1 in PEM, the default) or `pkcs8`.', default: 'der', allowedValues: ['', 'der', 'pem', 'pkcs8'] },
      issuer_name: { type: 'string', description: 'A name for the issuer.', default: '' },
      key_name: { type: 'string', description: 'A name for the key.', default: '' },
      ...SUBJECT_FIELDS,
    },
    refusedFields: {
      uri_sans: 'URI SANs are not supported by Keywarden\'s pki engine',
      other_sans: 'other SANs are not supported by Keywarden\'s pki engine',
      permitted_dns_domains: 'name constraints are not supported by Keywarden\'s pki engine',
      not_after: 'set ttl instead',
      key_ref: 'the multi-issuer API is not supported: one issuer per mount',
      managed_key_name: 'managed keys are not supported',
      managed_key_id: 'managed keys are not supported',
    },
    operations: {
      update: {
        summary: 'Generate the mount\'s root CA.',
        handler: async (_req, input) => {
          if (input.exported === 'existing' || input.exported === 'kms') {
            throw new BadRequestError(`root/generate/${input.exported} is not supported: Keywarden's pki engine makes its key with the root (internal or exported)`);
          }
          const key = checkKey(input.key_type, input.key_bits);
          return ctx.locks.run('issuer', async () => {
            if (await ctx.store.issuer()) {
              throw new BadRequestError('this mount already has an issuer: Keywarden\'s pki engine serves one issuer per mount; DELETE root first to replace it');
            }
            const warnings: string[] = [];
            const max = ctx.system.maxLeaseTtl();
            let ttl = input.ttl > 0 ? input.ttl : ctx.system.defaultLeaseTtl();
            if (ttl > max) {
              warnings.push(`TTL "${goDuration(ttl)}" is longer than permitted maxTTL "${goDuration(max)}", so maxTTL is being used`);
              ttl = max;
            }
            const { privateKey, publicKey } = await generateKey(key.type, key.bits);
            const now = ctx.clock.now();
            const subject = toDer(nameOf({
              commonName: input.common_name,
              organizationalUnit: input.ou ?? [],
              organization: input.organization ?? [],
              country: input.country ?? [],
              locality: input.locality ?? [],
              province: input.province ?? [],
              streetAddress: input.street_address ?? [],
              postalCode: input.postal_code ?? [],
            }));
            const dns = [...(input.exclude_cn_from_sans || isIP(input.common_name) !== 0 ? [] : [input.common_name]), ...input.alt_names];
            for (const ip of input.ip_sans) if (isIP(ip) === 0) throw new BadRequestError(`the value "${ip}" is not a valid IP address`);
            const urls = await ctx.store.urls();
            const der = signCertificate(
              {
                serial: newSerial(),
                issuer: subject,
                subject,
                notBefore: new Date(now.getTime() - 30_000),
                notAfter: new Date(Math.floor(now.getTime() / 1000) * 1000 + ttl * 1000),
                publicKey: publicKey.export({ type: 'spki', format: 'der' }),
                extensions: [
                  basicConstraints(true, input.max_path_length),
                  keyUsage(['certsign', 'crlsign']),
                  subjectKeyIdentifier(keyIdentifier(publicKey)),
                  subjectAltName(dns.filter((n) => !n.includes('@')), input.ip_sans.map(ipBytes), dns.filter((n) => n.includes('@'))),
                  authorityInfoAccess(urls.issuing_certificates, urls.ocsp_servers),
                  crlDistributionPoints(urls.crl_distribution_points),
                ],
              },
              privateKey,
            );
            const cert = new X509Certificate(der);
            const certificate = pem('CERTIFICATE', der);
            const stored = {
              certificate,
              privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
              issuerId: randomUUID(),
              keyId: randomUUID(),
              issuerName: input.issuer_name,
              keyName: input.key_name,
            };
            await ctx.store.putIssuer(stored);
            const data: Record<string, unknown> = {
              certificate,
              issuing_ca: certificate,
              serial_number: serialOf(cert),
              expiration: Math.floor(new Date(cert.validTo).getTime() / 1000),
              issuer_id: stored.issuerId,
              issuer_name: stored.issuerName,
              key_id: stored.keyId,
              key_name: stored.keyName,
            };
            if (input.exported === 'exported') {
              data.private_key = privateKeyPem(privateKey, input.private_key_format);
              data.private_key_type = key.type;
            }
            return { data, ...(warnings.length > 0 ? { warnings } : {}) };
          });
        },
      },
    },
    synopsis: 'Generate the mount\'s root CA.',
    description: 'Makes a key and a self-signed CA certificate with it: the mount\'s one issuer. `exported` answers the private key, once.',
  });

  const root = definePath({
    pattern: 'root',
    fields: {},
    operations: {
      delete: {
        summary: 'Delete the mount\'s issuer and its key.',
        handler: async () => {
          await ctx.locks.run('issuer', () => ctx.locks.run('crl', () => ctx.store.deleteIssuer()));
          return null;
        },
      },
    },
    synopsis: 'The mount\'s issuer.',
    description: 'DELETE removes the CA certificate, its key and its CRL; issued certificates stay readable until tidied.',
  });

  return [generate, root];
}
