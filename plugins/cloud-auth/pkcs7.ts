/**
 * PKCS#7 signed data as the instance metadata service makes it (the `pkcs7` and `rsa2048`
 * documents): parsed with node-forge's ASN.1 reader (BER indefinite lengths and chunked content
 * included), verified with node:crypto. Every signer must be one of the trusted certificates —
 * looked up by issuer and serial number, never taken from the message — and must have signed
 * the content: its messageDigest attribute must be the content's hash, its signature must verify
 * over the DER of the signed attributes, and its signing time must fall within the certificate's
 * validity. That signing time is the signer's own claim (and a message may have none), so the
 * certificate must also be valid now, by the server's clock, give or take CERTIFICATE_EXPIRY_GRACE_MS;
 * the same holds for the RSA signature of the plain document. SHA-1 (the DSA `pkcs7` document)
 * verifies only when the operator allows it.
 */
import { createHash, verify } from 'node:crypto';
import forge from 'node-forge';
import { BadRequestError, createError, errorMessage } from '../../sdk/index.js';
import { decodeBase64 } from './iam-request.js';
import { asn1Time, bytesOf, children, derOf, integerHex, readAsn1, type TrustedCertificate } from './trusted-certificates.js';

/** A signature that does not verify, or a message that cannot be read: a 400, its message for the client. */
export const SignatureError = createError('SignatureError', 'KW_CLOUD_SIGNATURE', 400, { parent: BadRequestError });
export type SignatureError = InstanceType<typeof SignatureError>;

/** Thrown when SHA-1 is needed but not allowed, so callers can say how to turn it on. */
export class Sha1NotAllowedError extends SignatureError {}

export type DigestName = 'sha1' | 'sha256' | 'sha384' | 'sha512';

export interface Pkcs7Options {
  /** Accept SHA-1 digests and signatures (the DSA-SHA1 `pkcs7` document); off unless the server config says so. */
  readonly allowSha1: boolean;
  /** The server's clock at login: the signer's certificate must be valid then (see CERTIFICATE_EXPIRY_GRACE_MS). */
  readonly now: Date;
}

/**
 * How long after its notAfter a trusted certificate still verifies a login. Not zero, because a
 * provider rolls its signing certificates over: for a while around the old certificate's expiry,
 * instances may still be served documents it signed, and operators need time to register the
 * successor through config/certificate; clocks also drift. A day covers that; far longer would let
 * a retired (perhaps compromised) key keep logging instances in.
 */
export const CERTIFICATE_EXPIRY_GRACE_MS = 24 * 3600 * 1000;

export interface VerifiedPkcs7 {
  /** The signed content: the identity document, byte for byte. */
  readonly content: Buffer;
  /** The certificate of each signer, in message order. */
  readonly signers: readonly TrustedCertificate[];
}

/** Instance identity signatures are a few KiB; anything far larger is not one and is not parsed. */
export const MAX_PKCS7_BYTES = 64 * 1024;

const OID = {
  signedData: '1.2.840.113549.1.7.2',
  data: '1.2.840.113549.1.7.1',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
} as const;

const DIGESTS: Readonly<Record<string, DigestName>> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** Signature algorithms: the key type they need and the hash they fix (none: the signer's digest algorithm). */
const SIGNATURES: Readonly<Record<string, { readonly name: string; readonly key: 'rsa' | 'dsa'; readonly hash?: DigestName }>> = {
  '1.2.840.113549.1.1.1': { name: 'rsaEncryption', key: 'rsa' },
  '1.2.840.113549.1.1.5': { name: 'sha1WithRSAEncryption', key: 'rsa', hash: 'sha1' },
  '1.2.840.113549.1.1.11': { name: 'sha256WithRSAEncryption', key: 'rsa', hash: 'sha256' },
  '1.2.840.113549.1.1.12': { name: 'sha384WithRSAEncryption', key: 'rsa', hash: 'sha384' },
  '1.2.840.113549.1.1.13': { name: 'sha512WithRSAEncryption', key: 'rsa', hash: 'sha512' },
  '1.2.840.10040.4.1': { name: 'dsa', key: 'dsa' },
  '1.2.840.10040.4.3': { name: 'dsaWithSHA1', key: 'dsa', hash: 'sha1' },
  '2.16.840.1.101.3.4.3.2': { name: 'dsaWithSHA256', key: 'dsa', hash: 'sha256' },
};

interface SignerInfo {
  readonly issuer: Buffer;
  readonly serial: string;
  readonly digestOid: string;
  readonly signatureOid: string;
  /** The signed attributes, when present. */
  readonly attributes?: readonly forge.asn1.Asn1[];
  readonly signature: Buffer;
}

interface SignedData {
  readonly contentType: string;
  readonly content: Buffer;
  readonly signers: readonly SignerInfo[];
}

/** The base64 body of a PKCS#7 signature, with or without PEM armour and line breaks; undefined if it is not base64. */
export function decodePkcs7Text(text: string): Buffer | undefined {
  const armoured = /^\s*-----BEGIN PKCS7-----([\s\S]*?)-----END PKCS7-----\s*$/.exec(text);
  const body = (armoured ? armoured[1]! : text).replace(/\s+/g, '');
  return body === '' ? undefined : decodeBase64(body);
}

/** Verifies a DER or BER PKCS#7 signed-data message against the trusted certificates; returns its content. */
export function verifyPkcs7(der: Buffer, trusted: readonly TrustedCertificate[], options: Pkcs7Options): VerifiedPkcs7 {
  const message = parseSignedData(der);
  if (message.content.length === 0) throw new SignatureError('instance identity document could not be found in the signature');
  if (message.signers.length === 0) throw new SignatureError('the PKCS#7 message has no signers');
  const signers = message.signers.map((signer) => verifySigner(message, signer, trusted, options));
  return { content: message.content, signers };
}

/**
 * RSA PKCS#1 v1.5 with SHA-256 over the exact document bytes (the `signature` document), tried
 * against every trusted RSA key; returns the certificate that verified it, which must be valid at `now`.
 */
export function verifyIdentitySignature(document: Buffer, signature: Buffer, trusted: readonly TrustedCertificate[], now: Date): TrustedCertificate {
  const rsa = trusted.filter((certificate) => certificate.publicKey.asymmetricKeyType === 'rsa');
  const certificate = firstVerifying(rsa, now, (c) => verifies('sha256', document, c, signature));
  if (!certificate) throw new SignatureError('instance identity verification using SHA256 RSA signature is unsuccessful');
  return validNow(certificate, now);
}

function verifySigner(message: SignedData, signer: SignerInfo, trusted: readonly TrustedCertificate[], options: Pkcs7Options): TrustedCertificate {
  const digest = DIGESTS[signer.digestOid];
  if (!digest) throw new SignatureError(`unsupported digest algorithm ${signer.digestOid}`);
  const algorithm = SIGNATURES[signer.signatureOid];
  if (!algorithm) throw new SignatureError(`unsupported signature algorithm ${signer.signatureOid}`);
  if (algorithm.hash && algorithm.hash !== digest) {
    throw new SignatureError(`signature algorithm ${algorithm.name} does not match the digest algorithm ${digest}`);
  }
  if (digest === 'sha1' && !options.allowSha1) {
    throw new Sha1NotAllowedError(
      `the signature uses SHA-1 (${algorithm.name}), which this server does not accept; send the rsa2048 document instead, ` +
        'or have the operator set cloud_auth.allow_sha1_signatures in the server configuration',
    );
  }

  const candidates = trusted.filter((c) => c.serial === signer.serial && c.issuer.equals(signer.issuer));
  if (candidates.length === 0) throw new SignatureError(`no trusted certificate for the signer (serial ${signer.serial.toUpperCase()})`);
  const usable = candidates.filter((c) => c.publicKey.asymmetricKeyType === algorithm.key);
  if (usable.length === 0) {
    throw new SignatureError(`the signer's certificate (${candidates[0]!.source}) has no ${algorithm.key.toUpperCase()} key for ${algorithm.name}`);
  }

  let signed = message.content;
  let signingTime: Date | undefined;
  if (signer.attributes) {
    const attributes = readAttributes(signer.attributes);
    const expected = attributes.get(OID.messageDigest);
    if (!expected || expected.type !== forge.asn1.Type.OCTETSTRING) throw new SignatureError('the signed attributes have no messageDigest');
    if (!bytesOf(expected).equals(createHash(digest).update(message.content).digest())) {
      throw new SignatureError('the message digest does not match the content: the document was altered');
    }
    const contentType = attributes.get(OID.contentType);
    if (contentType && oidOf(contentType) !== message.contentType) throw new SignatureError('the signed contentType does not match the content');
    const time = attributes.get(OID.signingTime);
    if (time) {
      signingTime = asn1Time(time);
      if (!signingTime) throw new SignatureError('the signingTime attribute is not a time');
    }
    // What was signed is the DER of the attributes as a SET (they travel [0]-tagged).
    signed = derOf(forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SET, true, [...signer.attributes]));
  }

  const certificate = firstVerifying(usable, options.now, (c) => verifies(digest, signed, c, signer.signature));
  if (!certificate) throw new SignatureError(`${algorithm.key.toUpperCase()} signature verification failed`);
  if (signingTime && (signingTime < certificate.notBefore || signingTime > certificate.notAfter)) {
    throw new SignatureError(
      `the signing time ${signingTime.toISOString()} is outside the validity of the signer's certificate ` +
        `(${certificate.notBefore.toISOString()} to ${certificate.notAfter.toISOString()})`,
    );
  }
  return validNow(certificate, options.now);
}

/**
 * The first certificate whose key verifies, trying those valid at `now` first: a renewed
 * certificate may keep its predecessor's key, and the expired one must not win then.
 */
function firstVerifying(certificates: readonly TrustedCertificate[], now: Date, verifiesWith: (c: TrustedCertificate) => boolean): TrustedCertificate | undefined {
  const valid = certificates.filter((c) => isValidAt(c, now));
  return valid.find(verifiesWith) ?? certificates.filter((c) => !valid.includes(c)).find(verifiesWith);
}

function isValidAt(certificate: TrustedCertificate, now: Date): boolean {
  return certificate.notBefore <= now && now.getTime() <= certificate.notAfter.getTime() + CERTIFICATE_EXPIRY_GRACE_MS;
}

/** The certificate, if valid at `now` (expiry grace included); else a SignatureError saying why not. */
function validNow(certificate: TrustedCertificate, now: Date): TrustedCertificate {
  if (isValidAt(certificate, now)) return certificate;
  throw new SignatureError(
    now < certificate.notBefore
      ? `the signer's certificate (${certificate.source}) is not valid before ${certificate.notBefore.toISOString()}`
      : `the signer's certificate (${certificate.source}) expired at ${certificate.notAfter.toISOString()}, more than ` +
          `${CERTIFICATE_EXPIRY_GRACE_MS / 3_600_000}h (the grace for certificate rollover) before this login at ${now.toISOString()}`,
  );
}

function verifies(digest: DigestName, data: Buffer, certificate: TrustedCertificate, signature: Buffer): boolean {
  try {
    return verify(digest, data, certificate.publicKey, signature);
  } catch {
    // A signature that is not even well-formed for the key (bad DER for DSA, wrong length for RSA).
    return false;
  }
}

/** ContentInfo → SignedData, with nothing taken on trust but the structure. */
function parseSignedData(der: Buffer): SignedData {
  if (der.length > MAX_PKCS7_BYTES) throw new SignatureError(`the PKCS#7 signature is larger than ${MAX_PKCS7_BYTES} bytes`);
  let root: forge.asn1.Asn1;
  try {
    root = readAsn1(der);
  } catch (err) {
    throw new SignatureError(`failed to parse the BER encoded PKCS#7 signature: ${errorMessage(err)}`);
  }
  const fail = (why: string): never => {
    throw new SignatureError(`failed to parse the BER encoded PKCS#7 signature: ${why}`);
  };
  const [type, explicit] = sequence(root, 'ContentInfo', fail);
  if (!type || oidOf(type) !== OID.signedData) fail('not a signed-data message');
  const signedData = explicit && isContext(explicit, 0) ? children(explicit)[0] : undefined;
  if (!signedData) return fail('signed data is missing');
  const fields = sequence(signedData, 'SignedData', fail);
  // version, digestAlgorithms, encapContentInfo, [0] certificates?, [1] crls?, signerInfos
  const encap = fields[2];
  const signerInfos = fields[fields.length - 1];
  if (!encap || !signerInfos || signerInfos.type !== forge.asn1.Type.SET) return fail('SignedData is incomplete');
  const [contentTypeNode, contentNode] = sequence(encap, 'EncapsulatedContentInfo', fail);
  if (!contentTypeNode) return fail('EncapsulatedContentInfo has no content type');
  const octets = contentNode && isContext(contentNode, 0) ? children(contentNode)[0] : undefined;
  return {
    contentType: oidOf(contentTypeNode),
    content: octets ? octetString(octets, fail) : Buffer.alloc(0),
    signers: children(signerInfos).map((node) => parseSignerInfo(node, fail)),
  };
}

function parseSignerInfo(node: forge.asn1.Asn1, fail: (why: string) => never): SignerInfo {
  const fields = sequence(node, 'SignerInfo', fail);
  // version, issuerAndSerialNumber, digestAlgorithm, [0] signedAttrs?, signatureAlgorithm, signature, [1] unsignedAttrs?
  const sid = fields[1];
  if (!sid || sid.type !== forge.asn1.Type.SEQUENCE) return fail('the signer is not named by issuer and serial number');
  const [issuer, serial] = children(sid);
  if (!issuer || !serial || serial.type !== forge.asn1.Type.INTEGER) return fail('the signer is not named by issuer and serial number');
  const digestAlgorithm = fields[2];
  let at = 3;
  let attributes: forge.asn1.Asn1[] | undefined;
  if (fields[at] && isContext(fields[at]!, 0)) attributes = children(fields[at++]!);
  const signatureAlgorithm = fields[at];
  const signature = fields[at + 1];
  if (!digestAlgorithm || !signatureAlgorithm || !signature || signature.type !== forge.asn1.Type.OCTETSTRING) return fail('SignerInfo is incomplete');
  return {
    issuer: derOf(issuer),
    serial: integerHex(serial),
    digestOid: algorithmOid(digestAlgorithm, fail),
    signatureOid: algorithmOid(signatureAlgorithm, fail),
    ...(attributes ? { attributes } : {}),
    signature: octetString(signature, fail),
  };
}

/** Signed attributes by type: each must be a SEQUENCE { type, SET { value } } with one value. */
function readAttributes(attributes: readonly forge.asn1.Asn1[]): Map<string, forge.asn1.Asn1> {
  const out = new Map<string, forge.asn1.Asn1>();
  for (const attribute of attributes) {
    const [type, values] = children(attribute);
    const value = values ? children(values) : [];
    if (!type || type.type !== forge.asn1.Type.OID || value.length !== 1) throw new SignatureError('a signed attribute is malformed');
    const oid = oidOf(type);
    if (out.has(oid)) throw new SignatureError(`the signed attribute ${oid} appears twice`);
    out.set(oid, value[0]!);
  }
  return out;
}

function sequence(node: forge.asn1.Asn1, what: string, fail: (why: string) => never): forge.asn1.Asn1[] {
  if (node.tagClass !== forge.asn1.Class.UNIVERSAL || node.type !== forge.asn1.Type.SEQUENCE || !Array.isArray(node.value)) {
    return fail(`${what} is not a SEQUENCE`);
  }
  return node.value;
}

function algorithmOid(node: forge.asn1.Asn1, fail: (why: string) => never): string {
  const oid = children(node)[0];
  if (!oid || oid.type !== forge.asn1.Type.OID) return fail('an AlgorithmIdentifier has no OID');
  return oidOf(oid);
}

function oidOf(node: forge.asn1.Asn1): string {
  return node.type === forge.asn1.Type.OID && typeof node.value === 'string' ? forge.asn1.derToOid(node.value) : '';
}

/** forge types every tag as a universal type; a context-specific tag is only its number. */
function isContext(node: forge.asn1.Asn1, tag: number): boolean {
  return node.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && (node.type as number) === tag && Array.isArray(node.value);
}

/** An OCTET STRING's bytes; BER may split it into nested chunks, which are joined. */
function octetString(node: forge.asn1.Asn1, fail: (why: string) => never): Buffer {
  if (node.type !== forge.asn1.Type.OCTETSTRING) return fail('expected an OCTET STRING');
  if (!Array.isArray(node.value)) return bytesOf(node);
  return Buffer.concat(node.value.map((chunk) => octetString(chunk, fail)));
}
