/**
 * Format cross-checks (issue acceptance): HMACs and signatures made through the paths verify with an
 * independent node:crypto computation from the stored key material, and ones made independently
 * verify through the paths — every signing type, PSS and PKCS#1 v1.5, asn1 and jws, prehashed and
 * `none`. The hand-written prehashed code (EMSA-PSS, DigestInfo, ECDSA over a digest) is also held
 * to published vectors and to the curve constants node itself uses.
 */
import {
  constants,
  createECDH,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  hkdfSync,
  publicDecrypt,
  randomBytes,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { expect } from 'chai';
import { TransitHarness } from './harness.js';
import { KeyStore } from '../../../plugins/transit/keys/key-store.js';
import type { KeyVersion } from '../../../plugins/transit/keys/key-version.js';
import { curveOf, ecdsaSignDigest, ecdsaVerifyDigest, toBigInt, toBytes } from '../../../plugins/transit/crypto/signing.js';

const b64 = (bytes: string | Buffer): string => Buffer.from(bytes).toString('base64');
/** The bytes after `vault:v<N>:`, decoded as the marshaling says. */
const sigBytes = (signature: string, marshaling = 'asn1'): Buffer =>
  Buffer.from(signature.slice(signature.indexOf(':', 'vault:v'.length) + 1), marshaling === 'jws' ? 'base64url' : 'base64');
const textOf = (bytes: Buffer, marshaling = 'asn1'): string => `vault:v1:${bytes.toString(marshaling === 'jws' ? 'base64url' : 'base64')}`;

const NODE_HASH: Record<string, string> = {
  sha1: 'sha1',
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-224': 'sha3-224',
  'sha3-256': 'sha3-256',
  'sha3-384': 'sha3-384',
  'sha3-512': 'sha3-512',
};

/** DigestInfo prefixes from RFC 8017 §9.2 note 1 (and the NIST OIDs for SHA-3), written out independently. */
const DIGEST_INFO_PREFIX: Record<string, string> = {
  sha1: '3021300906052b0e03021a05000414',
  'sha2-256': '3031300d060960864801650304020105000420',
  'sha2-512': '3051300d060960864801650304020305000440',
  'sha3-256': '3031300d060960864801650304020805000420',
};

describe('transit signature and HMAC formats', function () {
  this.timeout(120_000);
  let t: TransitHarness;
  const message = Buffer.from('the quick brown fox jumps over the lazy dog');

  before(async () => {
    t = await TransitHarness.create();
    for (const type of ['aes256-gcm96', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519', 'rsa-2048']) {
      expect((await t.write(`keys/${type}`, { type })).status).to.equal(200);
    }
    expect((await t.write('keys/hmac-64', { type: 'hmac', key_size: 64 })).status).to.equal(200);
    expect((await t.write('keys/ed-derived', { type: 'ed25519', derived: true })).status).to.equal(200);
  });

  /** A version's stored material, read through the key store as the backend reads it. */
  async function versionOf(name: string, version?: number): Promise<KeyVersion> {
    const policy = (await new KeyStore(t.storage, 0).get(name))!;
    return policy.versions.get(version ?? policy.settings.latestVersion)!;
  }

  async function signHere(key: string, options: Record<string, unknown>, input: Buffer = message): Promise<string> {
    const res = await t.write(`sign/${key}`, { input: b64(input), ...options });
    expect(res.status, res.error).to.equal(200);
    return res.data.signature;
  }

  async function verifyHere(key: string, signature: string, options: Record<string, unknown>, input: Buffer = message): Promise<boolean> {
    const res = await t.write(`verify/${key}`, { input: b64(input), signature, ...options });
    expect(res.status, res.error).to.equal(200);
    return res.data.valid;
  }

  describe('HMAC', () => {
    for (const [algorithm, node] of Object.entries(NODE_HASH)) {
      it(`${algorithm}: equals node's HMAC under the version's own HMAC key, and node's HMAC verifies`, async () => {
        const v = await versionOf('aes256-gcm96');
        expect(v.hmacKey).to.have.length(32);
        expect(v.hmacKey.equals(v.key!)).to.equal(false);
        const expected = createHmac(node, v.hmacKey).update(message).digest();
        const made = await t.write(`hmac/aes256-gcm96/${algorithm}`, { input: b64(message) });
        expect(made.data.hmac).to.equal(`vault:v1:${expected.toString('base64')}`);
        const verified = await t.write(`verify/aes256-gcm96/${algorithm}`, { input: b64(message), hmac: `vault:v1:${expected.toString('base64')}` });
        expect(verified.data.valid).to.equal(true);
      });
    }

    it('uses the key itself for hmac keys (key_size bytes)', async () => {
      const v = await versionOf('hmac-64');
      expect(v.key).to.have.length(64);
      const made = await t.write('hmac/hmac-64/sha2-512', { input: b64(message) });
      expect(made.data.hmac).to.equal(`vault:v1:${createHmac('sha512', v.key!).update(message).digest('base64')}`);
    });

    it('uses each version its own HMAC key', async () => {
      await t.write('keys/aes256-gcm96/rotate');
      const [v1, v2] = [await versionOf('aes256-gcm96', 1), await versionOf('aes256-gcm96', 2)];
      expect(v1.hmacKey.equals(v2.hmacKey)).to.equal(false);
      const made = await t.write('hmac/aes256-gcm96', { input: b64(message) });
      expect(made.data.hmac).to.equal(`vault:v2:${createHmac('sha256', v2.hmacKey).update(message).digest('base64')}`);
      const old = await t.write('hmac/aes256-gcm96', { input: b64(message), key_version: 1 });
      expect(old.data.hmac).to.equal(`vault:v1:${createHmac('sha256', v1.hmacKey).update(message).digest('base64')}`);
    });

    it('batches of every size equal node item by item (the WASM batch path)', async () => {
      const v = await versionOf('hmac-64');
      const inputs = [0, 1, 63, 64, 65, 127, 128, 129, 1000, 5000, ...Array.from({ length: 90 }, (_, i) => i * 13)].map((n) => randomBytes(n));
      for (const algorithm of ['sha2-256', 'sha2-384', 'sha2-512', 'sha2-224', 'sha3-256']) {
        const res = await t.write(`hmac/hmac-64/${algorithm}`, { batch_input: inputs.map((input) => ({ input: b64(input) })) });
        inputs.forEach((input, i) => {
          expect(res.data.batch_results[i].hmac, `${algorithm} #${i}`).to.equal(`vault:v1:${createHmac(NODE_HASH[algorithm]!, v.key!).update(input).digest('base64')}`);
        });
      }
    });
  });

  describe('ECDSA', () => {
    const curves: [string, number][] = [
      ['ecdsa-p256', 32],
      ['ecdsa-p384', 48],
      ['ecdsa-p521', 66],
    ];
    for (const [type, size] of curves) {
      it(`${type}: signatures made here verify with node (asn1 as DER, jws as r‖s), and node's verify here`, async () => {
        const v = await versionOf(type);
        for (const hash of ['sha1', 'sha2-256', 'sha2-512', 'sha3-384']) {
          const asn1 = await signHere(type, { hash_algorithm: hash });
          expect(verify(NODE_HASH[hash]!, message, { key: v.publicKey!, dsaEncoding: 'der' }, sigBytes(asn1)), hash).to.equal(true);
          const jws = await signHere(type, { hash_algorithm: hash, marshaling_algorithm: 'jws' });
          expect(sigBytes(jws, 'jws')).to.have.length(2 * size);
          expect(verify(NODE_HASH[hash]!, message, { key: v.publicKey!, dsaEncoding: 'ieee-p1363' }, sigBytes(jws, 'jws')), hash).to.equal(true);

          const der = sign(NODE_HASH[hash]!, message, { key: v.privateKey!, dsaEncoding: 'der' });
          expect(await verifyHere(type, textOf(der), { hash_algorithm: hash }), hash).to.equal(true);
          const p1363 = sign(NODE_HASH[hash]!, message, { key: v.privateKey!, dsaEncoding: 'ieee-p1363' });
          expect(await verifyHere(type, textOf(p1363, 'jws'), { hash_algorithm: hash, marshaling_algorithm: 'jws' }), hash).to.equal(true);
        }
      });

      it(`${type}: prehashed digests signed here verify with node over the message, and node's verify here as digests`, async () => {
        const v = await versionOf(type);
        for (const hash of ['sha1', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-512']) {
          const digest = createHash(NODE_HASH[hash]!).update(message).digest();
          for (const marshaling of ['asn1', 'jws']) {
            const made = await signHere(type, { prehashed: true, marshaling_algorithm: marshaling }, digest);
            const encoding = marshaling === 'jws' ? 'ieee-p1363' : 'der';
            expect(verify(NODE_HASH[hash]!, message, { key: v.publicKey!, dsaEncoding: encoding }, sigBytes(made, marshaling)), `${hash} ${marshaling}`).to.equal(true);
            const independent = sign(NODE_HASH[hash]!, message, { key: v.privateKey!, dsaEncoding: encoding });
            expect(await verifyHere(type, textOf(independent, marshaling), { prehashed: true, marshaling_algorithm: marshaling }, digest)).to.equal(true);
            const otherDigest = createHash(NODE_HASH[hash]!).update('other').digest();
            expect(await verifyHere(type, textOf(independent, marshaling), { prehashed: true, marshaling_algorithm: marshaling }, otherDigest)).to.equal(false);
          }
        }
      });
    }

    it('signs a digest as RFC 6979 A.2.5 says when given its k (P-256, SHA-256, "sample")', () => {
      const jwk = (hex: string) => Buffer.from(hex, 'hex').toString('base64url');
      const key = createPrivateKey({
        format: 'jwk',
        key: {
          kty: 'EC',
          crv: 'P-256',
          d: jwk('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721'),
          x: jwk('60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6'),
          y: jwk('7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299'),
        },
      });
      const curve = curveOf(key);
      const digest = createHash('sha256').update('sample').digest();
      const k = BigInt('0xa6e3c57dd01abe90086538398355dd4c3b17aa873382b0f24d6129493d8aad60');
      const { r, s } = ecdsaSignDigest(curve, BigInt('0xc9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721'), digest, k);
      expect(r.toString(16)).to.equal('efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716');
      expect(s.toString(16)).to.equal('f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8');
      const q = { x: BigInt('0x60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6'), y: BigInt('0x7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299') };
      expect(ecdsaVerifyDigest(curve, q, digest, r, s)).to.equal(true);
      expect(ecdsaVerifyDigest(curve, q, digest, r, s + 1n)).to.equal(false);
      expect(verify('sha256', Buffer.from('sample'), { key: createPublicKey(key), dsaEncoding: 'ieee-p1363' }, Buffer.concat([toBytes(r, 32), toBytes(s, 32)]))).to.equal(true);
    });

    it("holds the curve order and prime node uses: (n - 1)·G = -G on every curve", async () => {
      for (const type of ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521']) {
        const curve = curveOf((await versionOf(type)).publicKey!);
        const point = (k: bigint): { x: bigint; y: bigint } => {
          const ecdh = createECDH(curve.name);
          ecdh.setPrivateKey(toBytes(k, curve.size));
          const raw = ecdh.getPublicKey();
          return { x: toBigInt(raw.subarray(1, 1 + curve.size)), y: toBigInt(raw.subarray(1 + curve.size)) };
        };
        const g = point(1n);
        const minusG = point(curve.n - 1n);
        expect(minusG.x, type).to.equal(g.x);
        expect(minusG.y, type).to.equal(curve.p - g.y);
        expect(() => point(curve.n), type).to.throw();
      }
    });
  });

  describe('Ed25519', () => {
    it('signatures made here verify with node and node signatures verify here, in asn1 and jws text', async () => {
      const v = await versionOf('ed25519');
      for (const marshaling of ['asn1', 'jws']) {
        const made = await signHere('ed25519', { marshaling_algorithm: marshaling });
        expect(verify(null, message, v.publicKey!, sigBytes(made, marshaling))).to.equal(true);
        const independent = sign(null, message, v.privateKey!);
        expect(await verifyHere('ed25519', textOf(independent, marshaling), { marshaling_algorithm: marshaling })).to.equal(true);
      }
    });

    it('derives the key for a context as HKDF-SHA-256(seed ‖ public key, context) and returns its public key', async () => {
      const v = await versionOf('ed-derived');
      const context = Buffer.from('customer 42');
      const jwk = v.privateKey!.export({ format: 'jwk' });
      const ikm = Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]);
      const seed = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), context, 32));
      const derived = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
      const derivedPublic = createPublicKey(derived);
      const res = await t.write('sign/ed-derived', { input: b64(message), context: b64(context) });
      expect(res.data.public_key).to.equal(Buffer.from(derivedPublic.export({ format: 'jwk' }).x!, 'base64url').toString('base64'));
      expect(verify(null, message, derivedPublic, sigBytes(res.data.signature))).to.equal(true);
      expect(await verifyHere('ed-derived', textOf(sign(null, message, derived)), { context: b64(context) })).to.equal(true);
    });
  });

  describe('RSA', () => {
    let v: KeyVersion;
    before(async () => {
      v = await versionOf('rsa-2048');
    });

    /** node's PSS verification with an explicit salt length. */
    const nodePss = (key: KeyObject, hash: string, signature: Buffer, saltLength: number, data: Buffer = message): boolean =>
      verify(NODE_HASH[hash]!, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }, signature);

    for (const prehashed of [false, true]) {
      it(`PSS${prehashed ? ' over a prehashed digest' : ''}: auto is the largest salt, hash the hash length, a number itself — node agrees`, async () => {
        for (const hash of ['sha1', 'sha2-224', 'sha2-256', 'sha2-512', 'sha3-256']) {
          const hashSize = createHash(NODE_HASH[hash]!).digest().length;
          const input = prehashed ? createHash(NODE_HASH[hash]!).update(message).digest() : message;
          const options = { hash_algorithm: hash, prehashed };
          const auto = sigBytes(await signHere('rsa-2048', options, input));
          expect(nodePss(v.publicKey!, hash, auto, 256 - 2 - hashSize), `${hash} auto`).to.equal(true);
          const byHash = sigBytes(await signHere('rsa-2048', { ...options, salt_length: 'hash' }, input));
          expect(nodePss(v.publicKey!, hash, byHash, constants.RSA_PSS_SALTLEN_DIGEST), `${hash} hash`).to.equal(true);
          const twenty = sigBytes(await signHere('rsa-2048', { ...options, salt_length: 20 }, input));
          expect(nodePss(v.publicKey!, hash, twenty, 20), `${hash} 20`).to.equal(true);
          expect(nodePss(v.publicKey!, hash, twenty, 21), `${hash} 20 is not 21`).to.equal(false);
        }
      });

      it(`PSS${prehashed ? ' over a prehashed digest' : ''}: node's signatures with any salt verify here with auto, and with their own length`, async () => {
        for (const hash of ['sha1', 'sha2-256', 'sha2-384', 'sha3-512']) {
          const input = prehashed ? createHash(NODE_HASH[hash]!).update(message).digest() : message;
          for (const saltLength of [0, 16, constants.RSA_PSS_SALTLEN_DIGEST, constants.RSA_PSS_SALTLEN_MAX_SIGN]) {
            const independent = sign(NODE_HASH[hash]!, message, { key: v.privateKey!, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength });
            expect(await verifyHere('rsa-2048', textOf(independent), { hash_algorithm: hash, prehashed }, input), `${hash} ${saltLength}`).to.equal(true);
          }
          const sixteen = sign(NODE_HASH[hash]!, message, { key: v.privateKey!, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 16 });
          expect(await verifyHere('rsa-2048', textOf(sixteen), { hash_algorithm: hash, prehashed, salt_length: 16 }, input)).to.equal(true);
          expect(await verifyHere('rsa-2048', textOf(sixteen), { hash_algorithm: hash, prehashed, salt_length: 17 }, input)).to.equal(false);
          const other = prehashed ? createHash(NODE_HASH[hash]!).update('other').digest() : Buffer.from('other');
          expect(await verifyHere('rsa-2048', textOf(sixteen), { hash_algorithm: hash, prehashed }, other)).to.equal(false);
        }
      });
    }

    it('PKCS#1 v1.5: every hash gives node’s exact signature, from the message and from its digest (the DigestInfo is right)', async () => {
      for (const [hash, node] of Object.entries(NODE_HASH)) {
        const expected = sign(node, message, { key: v.privateKey!, padding: constants.RSA_PKCS1_PADDING });
        const fromMessage = await signHere('rsa-2048', { hash_algorithm: hash, signature_algorithm: 'pkcs1v15' });
        expect(sigBytes(fromMessage).equals(expected), hash).to.equal(true);
        const digest = createHash(node).update(message).digest();
        const fromDigest = await signHere('rsa-2048', { hash_algorithm: hash, signature_algorithm: 'pkcs1v15', prehashed: true }, digest);
        expect(sigBytes(fromDigest).equals(expected), `${hash} prehashed`).to.equal(true);
        expect(await verifyHere('rsa-2048', textOf(expected), { hash_algorithm: hash, signature_algorithm: 'pkcs1v15', prehashed: true }, digest)).to.equal(true);
        if (DIGEST_INFO_PREFIX[hash]) {
          expect(publicDecrypt({ key: v.publicKey!, padding: constants.RSA_PKCS1_PADDING }, sigBytes(fromDigest)).toString('hex')).to.equal(DIGEST_INFO_PREFIX[hash] + digest.toString('hex'));
        }
      }
    });

    it('hash none: PKCS#1 v1.5 over the given bytes with no OID', async () => {
      const options = { hash_algorithm: 'none', prehashed: true, signature_algorithm: 'pkcs1v15' };
      const raw = Buffer.from('raw bytes, no DigestInfo');
      const made = sigBytes(await signHere('rsa-2048', options, raw));
      expect(publicDecrypt({ key: v.publicKey!, padding: constants.RSA_PKCS1_PADDING }, made).equals(raw)).to.equal(true);
      // A caller that builds the DigestInfo itself gets the ordinary sha2-256 signature.
      const digestInfo = Buffer.from(DIGEST_INFO_PREFIX['sha2-256']! + createHash('sha256').update(message).digest('hex'), 'hex');
      const viaNone = sigBytes(await signHere('rsa-2048', options, digestInfo));
      expect(viaNone.equals(sign('sha256', message, { key: v.privateKey!, padding: constants.RSA_PKCS1_PADDING }))).to.equal(true);
      expect(await verifyHere('rsa-2048', textOf(viaNone), options, digestInfo)).to.equal(true);
      expect(await verifyHere('rsa-2048', textOf(viaNone), { signature_algorithm: 'pkcs1v15' })).to.equal(true);
    });

    it('jws marshaling is the same signature in unpadded base64url', async () => {
      const made = await signHere('rsa-2048', { marshaling_algorithm: 'jws', signature_algorithm: 'pkcs1v15' });
      expect(made).to.match(/^vault:v1:[A-Za-z0-9_-]+$/);
      expect(verify('sha256', message, { key: v.publicKey!, padding: constants.RSA_PKCS1_PADDING }, sigBytes(made, 'jws'))).to.equal(true);
      const pss = sign('sha256', message, { key: v.privateKey!, padding: constants.RSA_PKCS1_PSS_PADDING });
      expect(await verifyHere('rsa-2048', textOf(pss, 'jws'), { marshaling_algorithm: 'jws' })).to.equal(true);
    });

    for (const type of ['rsa-3072', 'rsa-4096']) {
      it(`${type}: PSS (also prehashed) verifies with node, PKCS#1 v1.5 equals node's`, async () => {
        await t.write(`keys/${type}`, { type });
        const key = await versionOf(type);
        const bytes = key.publicKey!.asymmetricKeyDetails!.modulusLength! / 8;
        expect(nodePss(key.publicKey!, 'sha2-384', sigBytes(await signHere(type, { hash_algorithm: 'sha2-384' })), bytes - 2 - 48)).to.equal(true);
        const digest = createHash('sha384').update(message).digest();
        expect(nodePss(key.publicKey!, 'sha2-384', sigBytes(await signHere(type, { hash_algorithm: 'sha2-384', prehashed: true }, digest)), bytes - 2 - 48)).to.equal(true);
        const expected = sign('sha512', message, { key: key.privateKey!, padding: constants.RSA_PKCS1_PADDING });
        expect(sigBytes(await signHere(type, { hash_algorithm: 'sha2-512', signature_algorithm: 'pkcs1v15' })).equals(expected)).to.equal(true);
        const independent = sign('sha256', message, { key: key.privateKey!, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
        expect(await verifyHere(type, textOf(independent), { prehashed: true }, createHash('sha256').update(message).digest())).to.equal(true);
      });
    }
  });
});
