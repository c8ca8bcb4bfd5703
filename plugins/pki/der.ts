/**
 * The ASN.1 the engine writes and reads: X.509 certificates and CRLs (RFC 5280,
 * https://www.rfc-editor.org/rfc/rfc5280) and PKCS#10 requests (RFC 2986). forge builds and parses
 * the DER; node:crypto signs and verifies, because forge signs only with RSA keys.
 */
import { X509Certificate, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { BadRequestError } from '../../sdk/index.js';
import { signatureAlgorithmOf, type SignatureAlgorithm } from './keys.js';

type Asn1 = forge.asn1.Asn1;
const { asn1 } = forge;
const U = asn1.Class.UNIVERSAL;
const T = asn1.Type;

export const OID = {
  commonName: '2.5.4.3',
  country: '2.5.4.6',
  locality: '2.5.4.7',
  province: '2.5.4.8',
  streetAddress: '2.5.4.9',
  organization: '2.5.4.10',
  organizationalUnit: '2.5.4.11',
  postalCode: '2.5.4.17',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  crlNumber: '2.5.29.20',
  crlDistributionPoints: '2.5.29.31',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  caIssuers: '1.3.6.1.5.5.7.48.2',
  ocsp: '1.3.6.1.5.5.7.48.1',
  extensionRequest: '1.2.840.113549.1.9.14',
} as const;

export const EXT_KEY_USAGE = {
  ServerAuth: '1.3.6.1.5.5.7.3.1',
  ClientAuth: '1.3.6.1.5.5.7.3.2',
  CodeSigning: '1.3.6.1.5.5.7.3.3',
  EmailProtection: '1.3.6.1.5.5.7.3.4',
} as const;

/** Key usage bits by Vault's names (RFC 5280 section 4.2.1.3). */
export const KEY_USAGE_BITS: Readonly<Record<string, number>> = {
  digitalsignature: 0,
  contentcommitment: 1,
  keyencipherment: 2,
  dataencipherment: 3,
  keyagreement: 4,
  certsign: 5,
  crlsign: 6,
  encipheronly: 7,
  decipheronly: 8,
};

/** A subject's attributes, in the order they are written. */
export interface SubjectFields {
  readonly commonName: string;
  readonly organizationalUnit?: readonly string[];
  readonly organization?: readonly string[];
  readonly country?: readonly string[];
  readonly locality?: readonly string[];
  readonly province?: readonly string[];
  readonly streetAddress?: readonly string[];
  readonly postalCode?: readonly string[];
}

export interface Extension {
  readonly oid: string;
  readonly critical: boolean;
  readonly value: Asn1;
}

const seq = (items: Asn1[]) => asn1.create(U, T.SEQUENCE, true, items);
const set = (items: Asn1[]) => asn1.create(U, T.SET, true, items);
const oid = (value: string) => asn1.create(U, T.OID, false, asn1.oidToDer(value).getBytes());
const octets = (bytes: Buffer) => asn1.create(U, T.OCTETSTRING, false, bytes.toString('binary'));
const bits = (bytes: Buffer) => asn1.create(U, T.BITSTRING, false, `\x00${bytes.toString('binary')}`);
const bool = (value: boolean) => asn1.create(U, T.BOOLEAN, false, value ? '\xff' : '\x00');
const explicit = (tag: number, item: Asn1) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, tag, true, [item]);
const implicit = (tag: number, text: string) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, tag, false, text);

/** A positive INTEGER from big-endian bytes (a leading zero byte where the top bit is set). */
function integer(bytes: Buffer): Asn1 {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  const value = trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed;
  return asn1.create(U, T.INTEGER, false, value.toString('binary'));
}

export function toDer(item: Asn1): Buffer {
  return Buffer.from(asn1.toDer(item).getBytes(), 'binary');
}

/** forge's fromDer takes an options object; its type declarations only know the boolean form. */
const fromDerWithOptions = asn1.fromDer as unknown as (bytes: forge.util.ByteBuffer, options: { strict: boolean; parseAllBytes: boolean; decodeBitStrings: boolean }) => Asn1;

/** Parses DER strictly; BIT STRINGs stay bytes (a signature or a key is not to be read as ASN.1). */
export function fromDer(bytes: Buffer): Asn1 {
  return fromDerWithOptions(forge.util.createBuffer(bytes.toString('binary')), { strict: true, parseAllBytes: true, decodeBitStrings: false });
}

function children(item: Asn1 | undefined): Asn1[] {
  return item && Array.isArray(item.value) ? (item.value as Asn1[]) : [];
}

/** A primitive item's content as forge holds it (a binary string); '' for a constructed or missing one. */
function contentOf(item: Asn1 | undefined): string {
  return typeof item?.value === 'string' ? item.value : '';
}

function oidOf(item: Asn1 | undefined): string {
  return asn1.derToOid(forge.util.createBuffer(contentOf(item)));
}

/** PrintableString where the text fits it (as Go writes names), UTF8String otherwise. */
function directoryString(text: string): Asn1 {
  return asn1.create(U, /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(text) ? T.PRINTABLESTRING : T.UTF8, false, /^[\x20-\x7e]*$/.test(text) ? text : forge.util.encodeUtf8(text));
}

export function nameOf(subject: SubjectFields): Asn1 {
  const rdns: Asn1[] = [];
  const add = (type: string, values: readonly string[] | undefined) => {
    for (const value of values ?? []) if (value !== '') rdns.push(set([seq([oid(type), directoryString(value)])]));
  };
  add(OID.country, subject.country);
  add(OID.organization, subject.organization);
  add(OID.organizationalUnit, subject.organizationalUnit);
  add(OID.locality, subject.locality);
  add(OID.province, subject.province);
  add(OID.streetAddress, subject.streetAddress);
  add(OID.postalCode, subject.postalCode);
  add(OID.commonName, subject.commonName === '' ? [] : [subject.commonName]);
  return seq(rdns);
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 section 4.1.2.5). */
function time(date: Date): Asn1 {
  return date.getUTCFullYear() < 2050
    ? asn1.create(U, T.UTCTIME, false, asn1.dateToUtcTime(date))
    : asn1.create(U, T.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(date));
}

function algorithmIdentifier(algorithm: SignatureAlgorithm): Asn1 {
  return seq([oid(algorithm.oid), ...(algorithm.nullParameters ? [asn1.create(U, T.NULL, false, '')] : [])]);
}

function extensions(list: readonly Extension[]): Asn1 {
  return seq(list.map((e) => seq([oid(e.oid), ...(e.critical ? [bool(true)] : []), octets(toDer(e.value))])));
}

// ---- Extensions ----

export function basicConstraints(ca: boolean, maxPathLength: number): Extension {
  const items: Asn1[] = ca ? [bool(true)] : [];
  if (ca && maxPathLength >= 0) items.push(asn1.create(U, T.INTEGER, false, asn1.integerToDer(maxPathLength).getBytes()));
  return { oid: OID.basicConstraints, critical: true, value: seq(items) };
}

/** `usages` are lower-case names of KEY_USAGE_BITS; written as a minimal BIT STRING. */
export function keyUsage(usages: readonly string[]): Extension | undefined {
  const set = usages.map((u) => KEY_USAGE_BITS[u]).filter((b): b is number => b !== undefined);
  if (set.length === 0) return undefined;
  const highest = Math.max(...set);
  const bytes = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const bit of set) bytes[bit >> 3]! |= 0x80 >> (bit & 7);
  const unused = 7 - (highest % 8);
  return { oid: OID.keyUsage, critical: true, value: asn1.create(U, T.BITSTRING, false, String.fromCharCode(unused) + bytes.toString('binary')) };
}

export function extKeyUsage(oids: readonly string[]): Extension | undefined {
  return oids.length === 0 ? undefined : { oid: OID.extKeyUsage, critical: false, value: seq(oids.map(oid)) };
}

/** DNS names, IP addresses (as 4 or 16 bytes) and e-mail addresses. */
export function subjectAltName(dns: readonly string[], ips: readonly Buffer[], emails: readonly string[]): Extension | undefined {
  const names = [
    ...emails.map((e) => implicit(1, e)),
    ...dns.map((d) => implicit(2, d)),
    ...ips.map((ip) => implicit(7, ip.toString('binary'))),
  ];
  return names.length === 0 ? undefined : { oid: OID.subjectAltName, critical: false, value: seq(names) };
}

export function subjectKeyIdentifier(id: Buffer): Extension {
  return { oid: OID.subjectKeyIdentifier, critical: false, value: octets(id) };
}

export function authorityKeyIdentifier(id: Buffer): Extension {
  return { oid: OID.authorityKeyIdentifier, critical: false, value: seq([implicit(0, id.toString('binary'))]) };
}

export function authorityInfoAccess(issuers: readonly string[], ocsp: readonly string[]): Extension | undefined {
  const entries = [...ocsp.map((u) => seq([oid(OID.ocsp), implicit(6, u)])), ...issuers.map((u) => seq([oid(OID.caIssuers), implicit(6, u)]))];
  return entries.length === 0 ? undefined : { oid: OID.authorityInfoAccess, critical: false, value: seq(entries) };
}

export function crlDistributionPoints(urls: readonly string[]): Extension | undefined {
  if (urls.length === 0) return undefined;
  // DistributionPoint { distributionPoint [0] { fullName [0] GeneralNames } }
  const points = urls.map((u) => seq([asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [implicit(6, u)])])]));
  return { oid: OID.crlDistributionPoints, critical: false, value: seq(points) };
}

// ---- Certificates and CRLs ----

export interface CertificateTemplate {
  readonly serial: Buffer;
  /** The issuer's subject, DER, exactly as in the issuer's certificate (a chain matches names byte for byte). */
  readonly issuer: Buffer;
  readonly subject: Asn1 | Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** SubjectPublicKeyInfo, DER. */
  readonly publicKey: Buffer;
  readonly extensions: readonly (Extension | undefined)[];
}

/** A v3 certificate signed by `signer`; DER. */
export function signCertificate(template: CertificateTemplate, signer: KeyObject): Buffer {
  const algorithm = signatureAlgorithmOf(signer);
  const tbs = seq([
    explicit(0, asn1.create(U, T.INTEGER, false, asn1.integerToDer(2).getBytes())),
    integer(template.serial),
    algorithmIdentifier(algorithm),
    fromDer(template.issuer),
    seq([time(template.notBefore), time(template.notAfter)]),
    Buffer.isBuffer(template.subject) ? fromDer(template.subject) : template.subject,
    fromDer(template.publicKey),
    explicit(3, extensions(template.extensions.filter((e): e is Extension => e !== undefined))),
  ]);
  return signed(tbs, algorithm, signer);
}

export interface RevokedEntry {
  readonly serial: Buffer;
  readonly revokedAt: Date;
}

/** A v2 CRL of `revoked`, signed by the issuer; DER. */
export function signCrl(issuer: X509Certificate, signer: KeyObject, revoked: readonly RevokedEntry[], number: number, thisUpdate: Date, nextUpdate: Date): Buffer {
  const algorithm = signatureAlgorithmOf(signer);
  const entries = revoked.map((r) => seq([integer(r.serial), time(r.revokedAt)]));
  const crlNumber = asn1.create(U, T.INTEGER, false, asn1.integerToDer(number).getBytes());
  const tbs = seq([
    asn1.create(U, T.INTEGER, false, asn1.integerToDer(1).getBytes()),
    algorithmIdentifier(algorithm),
    fromDer(subjectNameDer(issuer)),
    time(thisUpdate),
    time(nextUpdate),
    ...(entries.length > 0 ? [seq(entries)] : []),
    explicit(0, extensions([authorityKeyIdentifier(keyIdentifier(issuer.publicKey)), { oid: OID.crlNumber, critical: false, value: crlNumber }])),
  ]);
  return signed(tbs, algorithm, signer);
}

function signed(tbs: Asn1, algorithm: SignatureAlgorithm, signer: KeyObject): Buffer {
  const signature = sign(algorithm.hash, toDer(tbs), signer);
  return toDer(seq([tbs, algorithmIdentifier(algorithm), bits(signature)]));
}

/** The subject of a certificate, DER, as written in it. */
export function subjectNameDer(cert: X509Certificate): Buffer {
  const tbs = children(fromDer(cert.raw))[0];
  const fields = children(tbs);
  // With the explicit version first, the subject is the sixth field of the TBSCertificate.
  const subject = fields[0]?.tagClass === asn1.Class.CONTEXT_SPECIFIC ? fields[5] : fields[4];
  if (!subject) throw new Error('the certificate has no subject');
  return toDer(subject);
}

/** The key identifier of a public key: SHA-1 of its subjectPublicKey bits (RFC 5280 section 4.2.1.2, method 1). */
export function keyIdentifier(key: KeyObject): Buffer {
  const spki = children(fromDer(key.export({ type: 'spki', format: 'der' })));
  const bitString = spki[1];
  const raw = Buffer.from(contentOf(bitString), 'binary').subarray(1);
  return Buffer.from(forge.md.sha1.create().update(raw.toString('binary')).digest().getBytes(), 'binary');
}

// ---- PKCS#10 ----

export interface ParsedCsr {
  readonly publicKey: KeyObject;
  readonly commonName: string;
  readonly dnsNames: string[];
  readonly emails: string[];
  readonly ips: string[];
  /** The request's subject, DER, kept as the certificate's subject when the role takes it. */
  readonly subject: Buffer;
}

/**
 * Reads a PEM certification request and checks its signature with the key it carries.
 * @throws BadRequestError for anything that is not a validly signed PKCS#10 request.
 */
export function parseCsr(pem: string): ParsedCsr {
  const match = /-----BEGIN (?:NEW )?CERTIFICATE REQUEST-----([\s\S]*?)-----END (?:NEW )?CERTIFICATE REQUEST-----/.exec(pem);
  if (!match) throw new BadRequestError('csr: no CERTIFICATE REQUEST PEM block found');
  let info: Asn1 | undefined;
  let algorithm: string;
  let signature: Buffer;
  let publicKey: KeyObject;
  let infoFields: Asn1[];
  try {
    const [requestInfo, algorithmId, sig] = children(fromDer(Buffer.from(match[1]!.replace(/\s+/g, ''), 'base64')));
    info = requestInfo;
    infoFields = children(info);
    algorithm = oidOf(children(algorithmId)[0]);
    signature = Buffer.from(contentOf(sig), 'binary').subarray(1);
    publicKey = createPublicKey({ key: toDer(infoFields[2]!), format: 'der', type: 'spki' });
  } catch {
    throw new BadRequestError('csr: could not parse the certificate request');
  }
  const hash = SIGNATURE_HASHES[algorithm];
  if (hash === undefined) throw new BadRequestError(`csr: unsupported signature algorithm ${algorithm}`);
  if (!verify(hash, toDer(info!), publicKey, signature)) throw new BadRequestError('csr: the request\'s signature does not verify');
  const subject = infoFields[1]!;
  let commonName = '';
  for (const rdn of children(subject)) {
    for (const attribute of children(rdn)) {
      const [type, value] = children(attribute);
      if (type && oidOf(type) === OID.commonName) commonName = forge.util.decodeUtf8(contentOf(value));
    }
  }
  const sans = { dnsNames: [] as string[], emails: [] as string[], ips: [] as string[] };
  for (const attribute of children(infoFields[3])) {
    const [type, values] = children(attribute);
    if (!type || oidOf(type) !== OID.extensionRequest) continue;
    for (const extension of children(children(values)[0])) {
      const parts = children(extension);
      if (oidOf(parts[0]) !== OID.subjectAltName) continue;
      const names = fromDer(Buffer.from(contentOf(parts[parts.length - 1]), 'binary'));
      for (const name of children(names)) {
        const text = contentOf(name);
        const tag = name.type as number;
        if (tag === 1) sans.emails.push(text);
        else if (tag === 2) sans.dnsNames.push(text);
        else if (tag === 7) sans.ips.push(ipText(Buffer.from(text, 'binary')));
      }
    }
  }
  return { publicKey, commonName, ...sans, subject: toDer(subject) };
}

/** The hash each signature algorithm of a request uses (null: Ed25519 hashes itself). */
const SIGNATURE_HASHES: Readonly<Record<string, string | null>> = {
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null,
};

function ipText(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  const groups: string[] = [];
  for (let i = 0; i < bytes.length; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}

// ---- PEM ----

export function pem(type: string, der: Buffer): string {
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${type}-----\n${body}\n-----END ${type}-----`;
}
