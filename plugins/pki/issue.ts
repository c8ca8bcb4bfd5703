/**
 * Issuing a leaf certificate from a role, for `issue/:role` (a key made here) and `sign/:role`
 * (the key of a CSR): Vault's TTL rules (the request's, else the role's, else the mount's default;
 * capped by the role's max_ttl, else the mount's, with a warning; never past the issuer's own
 * expiry), names checked against the role, the usages it sets, the URLs of `config/urls`, storage
 * unless `no_store`, and a lease when `generate_lease`.
 */
import { X509Certificate, randomBytes, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { BadRequestError, goDuration, type LogicalResponse } from '../../sdk/index.js';
import type { PkiContext } from './context.js';
import {
  EXT_KEY_USAGE,
  authorityInfoAccess,
  authorityKeyIdentifier,
  basicConstraints,
  crlDistributionPoints,
  extKeyUsage,
  keyIdentifier,
  keyUsage,
  nameOf,
  pem,
  signCertificate,
  subjectAltName,
  subjectKeyIdentifier,
  subjectNameDer,
} from './der.js';
import { checkNames, type Role } from './role.js';
import { serialOf, type Issuer } from './store.js';

/** The secret type of an issued certificate's lease (Vault's `pki`). */
export const CERT_SECRET_TYPE = 'pki';

export interface LeafRequest {
  readonly commonName: string;
  readonly altNames: readonly string[];
  readonly ipSans: readonly string[];
  readonly ttl: number;
  readonly excludeCnFromSans: boolean;
  readonly publicKey: KeyObject;
  /** A CSR's subject, DER, used as it is when the role keeps the CSR's names. */
  readonly subject?: Buffer;
}

/** A random positive 20-byte serial (RFC 5280 section 4.1.2.2: at most 20 octets). */
export function newSerial(): Buffer {
  const serial = randomBytes(20);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  return serial;
}

/** @throws BadRequestError when the mount has no issuer yet, with Vault's words. */
export async function requireIssuer(ctx: PkiContext): Promise<Issuer> {
  const issuer = await ctx.store.issuer();
  if (!issuer) throw new BadRequestError('no default issuer currently configured: generate a root first (root/generate/internal)');
  return issuer;
}

/** Splits a list of names into e-mail addresses and DNS names. */
function splitNames(names: readonly string[]): { dns: string[]; emails: string[] } {
  return { dns: names.filter((n) => !n.includes('@')), emails: names.filter((n) => n.includes('@')) };
}

export async function issueLeaf(ctx: PkiContext, role: Role, request: LeafRequest): Promise<{ response: LogicalResponse; cert: X509Certificate }> {
  const issuer = await requireIssuer(ctx);
  if (role.require_cn && request.commonName === '') throw new BadRequestError('the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, unless "require_cn" is set to false');
  const { dns, emails } = splitNames(request.altNames);
  checkNames(role, request.commonName, dns, emails, request.ipSans);
  // The common name is a SAN too (a DNS name, or an e-mail address), unless excluded, as in Vault.
  if (request.commonName !== '' && !request.excludeCnFromSans) {
    if (request.commonName.includes('@')) emails.unshift(request.commonName);
    else if (isIP(request.commonName) === 0) dns.unshift(request.commonName);
  }

  const warnings: string[] = [];
  const now = ctx.clock.now();
  const maxTtl = role.max_ttl > 0 ? role.max_ttl : ctx.system.maxLeaseTtl();
  let ttl = request.ttl > 0 ? request.ttl : role.ttl > 0 ? role.ttl : ctx.system.defaultLeaseTtl();
  if (ttl > maxTtl) {
    warnings.push(`TTL "${goDuration(ttl)}" is longer than permitted maxTTL "${goDuration(maxTtl)}", so maxTTL is being used`);
    ttl = maxTtl;
  }
  const notAfter = new Date(Math.floor(now.getTime() / 1000) * 1000 + ttl * 1000);
  const caNotAfter = new Date(issuer.cert.validTo);
  if (notAfter.getTime() > caNotAfter.getTime()) {
    throw new BadRequestError(`cannot satisfy request, as TTL would result in notAfter of ${notAfter.toISOString()} that is beyond the expiration of the CA certificate at ${caNotAfter.toISOString()}`);
  }
  const urls = await ctx.store.urls();
  const usages = [
    ...(role.server_flag ? [EXT_KEY_USAGE.ServerAuth] : []),
    ...(role.client_flag ? [EXT_KEY_USAGE.ClientAuth] : []),
    ...(role.code_signing_flag ? [EXT_KEY_USAGE.CodeSigning] : []),
    ...(role.email_protection_flag ? [EXT_KEY_USAGE.EmailProtection] : []),
  ];
  const der = signCertificate(
    {
      serial: newSerial(),
      issuer: subjectNameDer(issuer.cert),
      subject: request.subject ?? nameOf({
        commonName: request.commonName,
        organizationalUnit: role.ou,
        organization: role.organization,
        country: role.country,
        locality: role.locality,
        province: role.province,
        streetAddress: role.street_address,
        postalCode: role.postal_code,
      }),
      notBefore: new Date(now.getTime() - role.not_before_duration * 1000),
      notAfter,
      publicKey: request.publicKey.export({ type: 'spki', format: 'der' }),
      extensions: [
        keyUsage(role.key_usage.map((u) => u.toLowerCase())),
        extKeyUsage(usages),
        ...(role.basic_constraints_valid_for_non_ca ? [basicConstraints(false, -1)] : []),
        subjectKeyIdentifier(keyIdentifier(request.publicKey)),
        authorityKeyIdentifier(keyIdentifier(issuer.cert.publicKey)),
        subjectAltName(dns, request.ipSans.map(ipBytes), emails),
        authorityInfoAccess(urls.issuing_certificates, urls.ocsp_servers),
        crlDistributionPoints(urls.crl_distribution_points),
      ],
    },
    issuer.key,
  );
  const cert = new X509Certificate(der);
  const serial = serialOf(cert);
  if (!role.no_store) await ctx.store.putCert(serial, { certificate: pem('CERTIFICATE', der) });
  const expiration = Math.floor(notAfter.getTime() / 1000);
  const response: LogicalResponse = {
    data: {
      certificate: pem('CERTIFICATE', der),
      issuing_ca: issuer.certificate,
      ca_chain: [issuer.certificate],
      serial_number: serial,
      expiration,
    },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  if (role.generate_lease) {
    // As in Vault, the lease lasts as long as the certificate and is not renewable; revoking it
    // revokes the certificate.
    const left = Math.max(expiration - Math.floor(now.getTime() / 1000), 1);
    response.secret = { type: CERT_SECRET_TYPE, ttl: left, maxTtl: left, renewable: false, internalData: { serial_number: serial } };
  }
  return { response, cert };
}

/** An IP address as a SAN holds it: 4 or 16 bytes. @throws BadRequestError for an IPv6 address with an IPv4 tail. */
export function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 6 && ip.includes('.')) throw new BadRequestError(`IP SAN ${ip}: write an IPv4-mapped address in hexadecimal groups`);
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::') as [string, string?];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const front = part(head);
  const back = part(tail);
  const groups = ip.includes('::') ? [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back] : front;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}
