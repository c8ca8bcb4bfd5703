/**
 * A throwaway certificate authority for TLS tests: a CA certificate and the server or client
 * certificates it signs, written as PEM files. Keys from node:crypto, certificates from node-forge.
 */
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import forge from 'node-forge';

export interface PemFiles {
  readonly certPem: string;
  readonly keyPem: string;
  /** Where the certificate and key were written. */
  readonly certFile: string;
  readonly keyFile: string;
}

export interface IssueOptions {
  readonly commonName: string;
  /** `server` certificates name `dnsNames` and `ips`; `client` ones are for TLS client authentication. */
  readonly usage: 'server' | 'client';
  readonly dnsNames?: readonly string[];
  readonly ips?: readonly string[];
}

export interface TestCa extends PemFiles {
  /** Signs a new key's certificate and writes both next to the CA's files as `<name>.pem` and `<name>-key.pem`. */
  issue(name: string, options: IssueOptions): Promise<PemFiles>;
}

let serial = 1;

function newKey(): { keyPem: string; publicKey: forge.pki.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { keyPem, publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()), privateKey: forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey };
}

function certificate(subject: string, publicKey: forge.pki.PublicKey): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = (serial++).toString(16).padStart(2, '0');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  return cert;
}

async function write(dir: string, name: string, certPem: string, keyPem: string): Promise<PemFiles> {
  const certFile = path.join(dir, `${name}.pem`);
  const keyFile = path.join(dir, `${name}-key.pem`);
  await writeFile(certFile, certPem);
  await writeFile(keyFile, keyPem, { mode: 0o600 });
  return { certPem, keyPem, certFile, keyFile };
}

/** A new CA whose files (and those of the certificates it issues) live in `dir`. */
export async function createTestCa(dir: string, name = 'ca'): Promise<TestCa> {
  const caKey = newKey();
  const caCert = certificate(`Keywarden test CA ${name}`, caKey.publicKey);
  caCert.setIssuer(caCert.subject.attributes);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  caCert.sign(caKey.privateKey, forge.md.sha256.create());
  const files = await write(dir, name, forge.pki.certificateToPem(caCert), caKey.keyPem);
  return {
    ...files,
    issue: async (leafName, options) => {
      const key = newKey();
      const cert = certificate(options.commonName, key.publicKey);
      cert.setIssuer(caCert.subject.attributes);
      const altNames = [...(options.dnsNames ?? []).map((value) => ({ type: 2, value })), ...(options.ips ?? []).map((ip) => ({ type: 7, ip }))];
      cert.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        options.usage === 'server' ? { name: 'extKeyUsage', serverAuth: true } : { name: 'extKeyUsage', clientAuth: true },
        ...(altNames.length > 0 ? [{ name: 'subjectAltName', altNames }] : []),
      ]);
      cert.sign(caKey.privateKey, forge.md.sha256.create());
      return write(dir, leafName, forge.pki.certificateToPem(cert), key.keyPem);
    },
  };
}
