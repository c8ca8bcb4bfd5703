/**
 * The proof of an ec2 login: a signed instance identity document, sent either as PKCS#7 (`pkcs7`,
 * from the metadata service's `pkcs7` or `rsa2048` document) or as the document with its RSA
 * SHA-256 signature (`identity` + `signature`). Decoding, verification against the trusted
 * certificates, and the document fields a login uses.
 */
import { BadRequestError } from '../../sdk/index.js';
import type { CloudAuthContext } from './context.js';
import { decodeBase64 } from './iam-request.js';
import { SignatureError, decodePkcs7Text, verifyIdentitySignature, verifyPkcs7 } from './pkcs7.js';
import { trustedCertificates } from './trusted-certificates.js';

/** The fields of an identity document a login reads (the provider's names). */
export interface IdentityDocument {
  readonly instanceId: string;
  /** The AMI ID: the default role name. */
  readonly imageId: string;
  readonly accountId: string;
  readonly region: string;
  /** RFC 3339, as the provider wrote it; changes when the instance is stopped and started (migration). */
  readonly pendingTime: string;
}

export interface Ec2Proof {
  readonly pkcs7?: string | undefined;
  readonly identity?: string | undefined;
  readonly signature?: string | undefined;
}

/** Decodes and verifies the proof; every failure is a 400 that names it. */
export async function verifiedIdentityDocument(ctx: CloudAuthContext, proof: Ec2Proof): Promise<IdentityDocument> {
  const pkcs7 = proof.pkcs7 ?? '';
  const identity = proof.identity ?? '';
  const signature = proof.signature ?? '';
  if (pkcs7 === '' && (identity === '' || signature === '')) {
    throw new BadRequestError('either pkcs7 or a tuple containing the instance identity document and its SHA256 RSA signature needs to be provided');
  }
  if (pkcs7 !== '' && (identity !== '' || signature !== '')) {
    throw new BadRequestError('both pkcs7 and a tuple containing the instance identity document and its SHA256 RSA signature is supplied; provide only one');
  }

  let document: Buffer;
  if (pkcs7 !== '') {
    const der = decodePkcs7Text(pkcs7);
    if (!der) throw new BadRequestError('failed to decode the PEM encoded PKCS#7 signature: not base64');
    try {
      document = verifyPkcs7(der, await trustedCertificates(ctx.storage, 'pkcs7'), { allowSha1: ctx.allowSha1Signatures, now: ctx.clock.now() }).content;
    } catch (err) {
      if (err instanceof SignatureError) throw new BadRequestError(`failed to verify the signature: ${err.message}`);
      throw err;
    }
  } else {
    const doc = decodeBase64(identity);
    if (!doc || doc.length === 0) throw new BadRequestError('failed to base64 decode the instance identity document');
    const sig = decodeBase64(signature.replace(/\s+/g, ''));
    if (!sig || sig.length === 0) throw new BadRequestError('failed to base64 decode the SHA256 RSA signature of the instance identity document');
    verifyIdentitySignature(doc, sig, await trustedCertificates(ctx.storage, 'identity'), ctx.clock.now());
    document = doc;
  }
  return parseIdentityDocument(document);
}

/** The document's JSON; the fields a login needs must be strings. */
export function parseIdentityDocument(bytes: Buffer): IdentityDocument {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new BadRequestError('the signed instance identity document is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new BadRequestError('the signed instance identity document is not a JSON object');
  const doc = parsed as Record<string, unknown>;
  const text = (name: string, required: boolean): string => {
    const value = doc[name];
    if (typeof value === 'string' && value !== '') return value;
    if (value === undefined || value === null) {
      if (!required) return '';
      throw new BadRequestError(`the instance identity document has no ${name}`);
    }
    throw new BadRequestError(`the instance identity document's ${name} is not a string`);
  };
  return {
    instanceId: text('instanceId', true),
    imageId: text('imageId', false),
    accountId: text('accountId', true),
    region: text('region', true),
    pendingTime: text('pendingTime', true),
  };
}
