/** Test certificates made on the spot: the key from node:crypto, the certificate from node-forge. */
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';

export interface TestCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A self-signed RSA certificate; a server certificate for 127.0.0.1 and localhost unless `signer` is set. */
export function selfSignedCertificate(commonName = 'keywarden.test', usage: 'server' | 'signer' = 'server'): TestCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const name = [{ name: 'commonName', value: commonName }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions(
    usage === 'server'
      ? [
          { name: 'basicConstraints', cA: false },
          { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
          { name: 'extKeyUsage', serverAuth: true },
          { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
        ]
      : [{ name: 'keyUsage', digitalSignature: true }],
  );
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}
