/**
 * Public certificates registered through `config/certificate/:cert_name`, used (with the built-in
 * ones) to verify ec2 identity documents: `pkcs7` for PKCS#7 signatures, `identity` for the RSA
 * signature of the plain document.
 */
import { X509Certificate } from 'node:crypto';
import { BadRequestError, createError, errorMessage, type Storage } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';

export type CertificateType = 'pkcs7' | 'identity';
export const CERTIFICATE_TYPES: readonly CertificateType[] = ['pkcs7', 'identity'];

export interface RegisteredCertificate {
  /** The PEM text, decoded if it was given base64-encoded. */
  cloud_public_cert: string;
  type: CertificateType;
}

/** Why a certificate was refused: the caller's to fix. */
export const CertificateError = createError('CertificateError', 'KW_CLOUD_CERTIFICATE', 400, { parent: BadRequestError });
export type CertificateError = InstanceType<typeof CertificateError>;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/**
 * The PEM text of a certificate given as PEM or as base64 of PEM; it must be exactly one
 * CERTIFICATE block that parses as X.509.
 */
export function parseCertificateInput(value: string): { pem: string; certificate: X509Certificate } {
  const decoded = /^[A-Za-z0-9+/\s]+=*\s*$/.test(value) ? Buffer.from(value, 'base64').toString('utf8') : value;
  const pem = decoded.includes('-----BEGIN') ? decoded : value;
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  const outside = pem.replace(PEM_BLOCK, '').trim();
  if (blocks.length !== 1 || outside !== '') throw new CertificateError('invalid certificate; should be one PEM block only');
  if (blocks[0]![1] !== 'CERTIFICATE') throw new CertificateError(`invalid certificate; the PEM block is a ${blocks[0]![1]}, not a CERTIFICATE`);
  try {
    return { pem, certificate: new X509Certificate(blocks[0]![0]) };
  } catch (err) {
    throw new CertificateError(`invalid certificate; failed to decode and parse certificate: ${errorMessage(err)}`);
  }
}

export async function readCertificate(storage: Storage, name: string): Promise<RegisteredCertificate | undefined> {
  return readJson<RegisteredCertificate>(storage, STORAGE_KEYS.certificatePrefix + name);
}

export async function writeCertificate(storage: Storage, name: string, entry: RegisteredCertificate): Promise<void> {
  await writeJson(storage, STORAGE_KEYS.certificatePrefix + name, entry);
}

export async function listCertificateNames(storage: Storage): Promise<string[]> {
  return (await storage.list(STORAGE_KEYS.certificatePrefix)).filter((key) => !key.endsWith('/'));
}

/** Every registered certificate of one type, with its name (for signature verification). */
export async function registeredCertificates(storage: Storage, type: CertificateType): Promise<(RegisteredCertificate & { name: string })[]> {
  const out: (RegisteredCertificate & { name: string })[] = [];
  for (const name of await listCertificateNames(storage)) {
    const entry = await readCertificate(storage, name);
    if (entry?.type === type) out.push({ ...entry, name });
  }
  return out;
}
