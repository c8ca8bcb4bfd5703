/**
 * A certificate authority made on the spot, for TLS and mutual TLS tests: keys from node:crypto,
 * certificates from node-forge, each with the serial number the test chose.
 */
import { generateKeyPairSync } from 'node:crypto';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import forge from 'node-forge';

export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface TestCa extends IssuedCertificate {
  /** A server certificate (for 127.0.0.1 and localhost) or a client certificate, signed by this CA. */
  issue(options: { readonly commonName: string; readonly usage: 'server' | 'client'; readonly serial: string }): IssuedCertificate;
}

function keyPair(): { keyPem: string; publicKey: forge.pki.PublicKey } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
}

function certificate(subject: string, serial: string, publicKey: forge.pki.PublicKey): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  return cert;
}

export function createTestCa(commonName: string): TestCa {
  const { keyPem, publicKey } = keyPair();
  const signingKey = forge.pki.privateKeyFromPem(keyPem);
  const caCert = certificate(commonName, '01', publicKey);
  caCert.setIssuer(caCert.subject.attributes);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true },
  ]);
  caCert.sign(signingKey, forge.md.sha256.create());
  return {
    certPem: forge.pki.certificateToPem(caCert),
    keyPem,
    issue: ({ commonName: name, usage, serial }) => {
      const leaf = keyPair();
      const cert = certificate(name, serial, leaf.publicKey);
      cert.setIssuer(caCert.subject.attributes);
      cert.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        usage === 'server' ? { name: 'extKeyUsage', serverAuth: true } : { name: 'extKeyUsage', clientAuth: true },
        ...(usage === 'server' ? [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] }] : []),
      ]);
      cert.sign(signingKey, forge.md.sha256.create());
      return { certPem: forge.pki.certificateToPem(cert), keyPem: leaf.keyPem };
    },
  };
}

export interface TlsAnswer {
  readonly status: number;
  readonly text: string;
  /** The serial number of the certificate the server presented, upper-case hex as Node reports it. */
  readonly serverSerial: string;
}

/**
 * One HTTPS request on a fresh connection, trusting `ca`, presenting `cert`/`key` when given.
 * Rejects when the handshake or the connection fails (a refused client certificate, for one).
 */
export function tlsRequest(
  baseUrl: string,
  path: string,
  options: { readonly ca: string; readonly cert?: string; readonly key?: string; readonly maxVersion?: 'TLSv1.2' | 'TLSv1.3' },
): Promise<TlsAnswer> {
  const base = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: base.hostname,
        port: base.port,
        path,
        method: 'GET',
        agent: false,
        ca: options.ca,
        ...(options.cert ? { cert: options.cert, key: options.key } : {}),
        ...(options.maxVersion ? { maxVersion: options.maxVersion } : {}),
      },
      (res) => {
        const serverSerial = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), serverSerial }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
