/**
 * Certificate signing requests and certificate chains for a key version
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#sign-csr and
 * #set-certificate-chain). forge builds and reads the ASN.1; node:crypto signs, because forge can
 * sign only with RSA keys. A CSR is PKCS#10: CertificationRequestInfo {version 0, subject, the
 * version's SubjectPublicKeyInfo, attributes}, signed with RSA PKCS#1 v1.5 SHA-256, ECDSA with
 * SHA-256/384/512 by curve (as Go's x509 picks them), or Ed25519.
 */
import { X509Certificate, sign, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { BadRequestError } from '../../../sdk/index.js';
import type { KeyTypeInfo } from '../keys/key-types.js';

type Asn1 = forge.asn1.Asn1;
const { asn1 } = forge;
/** forge's fromDer takes an options object; its type declarations only know the boolean form. */
const fromDerWithOptions = asn1.fromDer as unknown as (bytes: forge.util.ByteBuffer, options: { strict: boolean; parseAllBytes: boolean; decodeBitStrings: boolean }) => Asn1;

/** What a CSR template contributes: its subject and its attributes (extension requests included), verbatim. */
export interface CsrTemplate {
  readonly subject: Asn1;
  readonly attributes?: Asn1;
}

/** One certificate of a chain, as set-certificate checks it. */
export interface ChainCertificate {
  readonly der: Buffer;
  readonly publicKey: KeyObject;
  /** The basicConstraints cA flag; undefined when the certificate has no basicConstraints. */
  readonly ca?: boolean;
}

const SIGNATURE_ALGORITHMS: Readonly<Record<string, { oid: string; hash: string | null; nullParameters: boolean }>> = {
  rsa: { oid: '1.2.840.113549.1.1.11', hash: 'sha256', nullParameters: true },
  'P-256': { oid: '1.2.840.10045.4.3.2', hash: 'sha256', nullParameters: false },
  'P-384': { oid: '1.2.840.10045.4.3.3', hash: 'sha384', nullParameters: false },
  'P-521': { oid: '1.2.840.10045.4.3.4', hash: 'sha512', nullParameters: false },
  ed25519: { oid: '1.3.101.112', hash: null, nullParameters: false },
};

const BASIC_CONSTRAINTS_OID = '2.5.29.19';

/** Reads the PEM CSR template a caller sends; its key and signature are ignored (replaced). */
export function parseCsrTemplate(pem: string): CsrTemplate {
  const block = pemBlocks(pem).find((b) => b.type === 'CERTIFICATE REQUEST' || b.type === 'NEW CERTIFICATE REQUEST');
  if (!block) throw new BadRequestError('could not decode PEM certificate request: no CERTIFICATE REQUEST block found');
  const root = fromDer(Buffer.from(block.body, 'binary'));
  const [info] = children(root);
  const [version, subject, publicKeyInfo, attributes] = children(info);
  if (!version || version.type !== asn1.Type.INTEGER || !subject || subject.type !== asn1.Type.SEQUENCE || !publicKeyInfo) {
    throw new BadRequestError('could not parse the CSR template: it is not a PKCS#10 certification request');
  }
  const hasAttributes = attributes && attributes.tagClass === asn1.Class.CONTEXT_SPECIFIC && (attributes.type as number) === 0;
  return { subject, ...(hasAttributes ? { attributes } : {}) };
}

/** A PEM CSR for the key version, signed by its private key; an empty subject without a template. */
export function createCsr(info: KeyTypeInfo, privateKey: KeyObject, publicKey: KeyObject, template?: CsrTemplate): string {
  const algorithm = SIGNATURE_ALGORITHMS[info.family === 'ecdsa' ? info.curve! : info.family];
  if (!algorithm && info.signing) throw new BadRequestError(`key type '${info.name}' cannot sign a CSR here: only ECDSA, Ed25519 and RSA keys do`);
  if (!algorithm) throw new BadRequestError(`key type '${info.name}' does not support signing`);
  const requestInfo = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(0).getBytes()),
    template?.subject ?? asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, []),
    fromDer(publicKey.export({ type: 'spki', format: 'der' })),
    template?.attributes ?? asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, []),
  ]);
  const toBeSigned = Buffer.from(asn1.toDer(requestInfo).getBytes(), 'binary');
  const signature = sign(algorithm.hash, toBeSigned, privateKey);
  const request = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    requestInfo,
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(algorithm.oid).getBytes()),
      ...(algorithm.nullParameters ? [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')] : []),
    ]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\x00${signature.toString('binary')}`),
  ]);
  const pem = forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: asn1.toDer(request).getBytes() }, { maxline: 64 });
  // forge ends lines with CRLF; Go's encoder (and so Vault) uses LF.
  return pem.replace(/\r\n/g, '\n');
}

/** The certificates of a PEM chain, end-entity first; other PEM blocks are ignored, as in Vault. */
export function parseCertificateChain(text: string): ChainCertificate[] {
  const blocks = pemBlocks(text).filter((b) => b.type === 'CERTIFICATE' || b.type === 'X509 CERTIFICATE');
  if (blocks.length === 0) throw new BadRequestError('provided certificate chain did not contain any valid PEM certificate');
  return blocks.map((block, i) => {
    const der = Buffer.from(block.body, 'binary');
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(der);
    } catch (err) {
      throw new BadRequestError(`failed to parse certificate ${i + 1} in certificate chain: ${(err as Error).message}`);
    }
    const ca = basicConstraintsCa(der);
    return { der, publicKey: certificate.publicKey, ...(ca === undefined ? {} : { ca }) };
  });
}

/**
 * Checks a chain for a key version: a leaf first (not a CA), no second leaf, and the leaf's public
 * key is the version's.
 */
export function checkChainForVersion(info: KeyTypeInfo, versionPublicKey: KeyObject, chain: readonly ChainCertificate[]): void {
  const [leaf, ...rest] = chain;
  if (!leaf) throw new BadRequestError('expected at least one certificate in the parsed certificate chain');
  if (leaf.ca === true) throw new BadRequestError('certificate in the first position is not a leaf certificate');
  if (rest.some((cert) => cert.ca === false)) throw new BadRequestError('provided certificate chain contains more than one leaf certificate');
  const expected = info.family === 'ecdsa' ? 'ec' : info.family;
  const actual = leaf.publicKey.asymmetricKeyType ?? 'unknown';
  if (actual !== expected) {
    throw new BadRequestError(`provided leaf certificate public key algorithm '${actual}' does not match the transit key type '${info.name}'`);
  }
  if (!leaf.publicKey.equals(versionPublicKey)) throw new BadRequestError('leaf certificate public key does not match the key version selected');
}

function pemBlocks(text: string): forge.pem.ObjectPEM[] {
  // forge throws when there is no PEM block at all; that is "nothing found" to the callers.
  if (!text.includes('-----BEGIN ')) return [];
  try {
    return forge.pem.decode(text);
  } catch (err) {
    throw new BadRequestError(`could not decode PEM block: ${(err as Error).message}`);
  }
}

function fromDer(der: Buffer): Asn1 {
  try {
    // BIT STRING contents stay opaque (the signature, the public key), so re-encoding keeps them byte for byte.
    return fromDerWithOptions(forge.util.createBuffer(der.toString('binary')), { strict: true, parseAllBytes: true, decodeBitStrings: false });
  } catch (err) {
    throw new BadRequestError(`could not parse DER: ${(err as Error).message}`);
  }
}

function children(node: Asn1 | undefined): Asn1[] {
  return node && Array.isArray(node.value) ? node.value : [];
}

/** The cA flag of a certificate's basicConstraints extension, or undefined without one. */
function basicConstraintsCa(der: Buffer): boolean | undefined {
  const [tbs] = children(fromDer(der));
  const extensions = children(tbs).find((node) => node.tagClass === asn1.Class.CONTEXT_SPECIFIC && (node.type as number) === 3);
  for (const extension of children(children(extensions)[0])) {
    const [oid, ...rest] = children(extension);
    if (!oid || typeof oid.value !== 'string' || asn1.derToOid(forge.util.createBuffer(oid.value)) !== BASIC_CONSTRAINTS_OID) continue;
    const octets = rest[rest.length - 1];
    if (!octets || typeof octets.value !== 'string') return undefined;
    const [first] = children(fromDer(Buffer.from(octets.value, 'binary')));
    return first?.type === asn1.Type.BOOLEAN && typeof first.value === 'string' && first.value !== '\x00';
  }
  return undefined;
}
