/**
 * The real provider-signed documents and certificates of test/fixtures/cloud/vectors (their
 * provenance is in the README there), read from the source tree at run time: tsc does not copy them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** This file runs from dist/test/plugins/cloud-auth/; the repository root is four levels up. */
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const VECTORS_DIR = path.join(REPO_ROOT, 'test/fixtures/cloud/vectors');

export function vectorText(relative: string): string {
  return readFileSync(path.join(VECTORS_DIR, relative), 'utf8');
}

/** A PKCS#7 vector as the login's `pkcs7` field carries it: the base64 body on one line. */
export function pkcs7Vector(file: string): string {
  return vectorText(`documents/${file}`).replace(/-----(BEGIN|END) PKCS7-----/g, '').replace(/\s+/g, '');
}

export const VECTORS = {
  rsa2048: 'pkcs7-rsa2048-2026-ap-southeast-2-i-0c5541936caf78c12.b64',
  dsa: ['pkcs7-dsa-2016-us-east-1-i-f79fe56c.pem', 'pkcs7-dsa-2019-us-east-1-i-06a91ac746b572ef4.b64', 'pkcs7-dsa-2020-ap-southeast-2-i-02c8559ebebf6ad0b.b64'],
  identity: ['identity-2026-ap-southeast-2-i-0c5541936caf78c12', 'identity-2025-ap-southeast-2-i-050c2e3dd07033e9e'],
} as const;

/** An identity vector: the exact document bytes and the signature's base64 (newlines removed). */
export function identityVector(name: string): { document: Buffer; signature: string } {
  return {
    document: Buffer.from(vectorText(`documents/${name}.document.json`), 'utf8'),
    signature: vectorText(`documents/${name}.signature.b64`).replace(/\s+/g, ''),
  };
}
