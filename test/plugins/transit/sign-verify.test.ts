/** Transit sign and verify at the request level (docs/transit.md, "Ciphertexts, signatures and HMACs" and "Batches"). */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { TransitHarness } from './harness.js';
import { KeyStore } from '../../../plugins/transit/keys/key-store.js';
import { MISSING_CONTEXT } from '../../../plugins/transit/crypto/derive.js';

const b64 = (text: string | Buffer): string => Buffer.from(text).toString('base64');
const digest = (alg: string, text: string): string => createHash(alg).update(text).digest('base64');

const SIGNING_TYPES = ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519', 'rsa-2048', 'rsa-3072', 'rsa-4096'];
const HASHES = ['sha1', 'sha2-224', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'];

describe('transit sign and verify', function () {
  this.timeout(120_000);
  let t: TransitHarness;

  before(async () => {
    t = await TransitHarness.create();
    for (const type of SIGNING_TYPES) {
      const res = await t.write(`keys/${type}`, { type });
      expect(res.status, res.error).to.equal(200);
    }
  });

  /** Signs and verifies with the same options; returns the signature and the verdict. */
  async function roundTrip(key: string, options: Record<string, unknown>, input = b64('message')) {
    const signed = await t.write(`sign/${key}`, { input, ...options });
    expect(signed.status, signed.error).to.equal(200);
    const verified = await t.write(`verify/${key}`, { input, signature: signed.data.signature, ...options });
    expect(verified.status, verified.error).to.equal(200);
    return { signature: signed.data.signature as string, valid: verified.data.valid as boolean, data: signed.data };
  }

  describe('every signing type', () => {
    for (const type of SIGNING_TYPES) {
      it(`${type}: signs as vault:v1:…, with key_version, and verifies only the signed input`, async () => {
        const { signature, valid, data } = await roundTrip(type, {});
        expect(signature).to.match(/^vault:v1:[A-Za-z0-9+/]+={0,2}$/);
        expect(data).to.deep.equal({ signature, key_version: 1 });
        expect(valid).to.equal(true);
        const other = await t.write(`verify/${type}`, { input: b64('messagE'), signature });
        expect(other.data).to.deep.equal({ valid: false });
      });
    }

    it('signs an empty input when input is omitted', async () => {
      const signed = await t.write('sign/ecdsa-p256', {});
      expect(signed.status, signed.error).to.equal(200);
      expect((await t.write('verify/ecdsa-p256', { input: '', signature: signed.data.signature })).data.valid).to.equal(true);
      expect((await t.write('verify/ecdsa-p256', { signature: signed.data.signature })).data.valid).to.equal(true);
    });
  });

  describe('refusals', () => {
    it('answers a missing key with signing key not found / signature verification key not found', async () => {
      expect(await t.write('sign/nope', { input: b64('x') })).to.include({ status: 400, error: 'signing key not found' });
      expect(await t.write('verify/nope', { input: b64('x'), signature: 'vault:v1:AAAA' })).to.include({
        status: 400,
        error: 'signature verification key not found',
      });
    });

    it('refuses keys that cannot sign', async () => {
      for (const type of ['aes256-gcm96', 'chacha20-poly1305', 'hmac']) {
        await t.write(`keys/nosign-${type}`, { type });
        expect(await t.write(`sign/nosign-${type}`, { input: b64('x') })).to.include({ status: 400, error: `key type ${type} does not support signing` });
        expect(await t.write(`verify/nosign-${type}`, { input: b64('x'), signature: 'vault:v1:AAAA' })).to.include({
          status: 400,
          error: `key type ${type} does not support verification`,
        });
      }
    });

    it('refuses bad base64 input and context, naming the field', async () => {
      const input = await t.write('sign/ecdsa-p256', { input: 'no!' });
      expect(input.status).to.equal(400);
      expect(input.error).to.match(/^unable to decode input as base64/);
      const sig = (await t.write('sign/ecdsa-p256', { input: b64('x') })).data.signature;
      const verify = await t.write('verify/ecdsa-p256', { input: 'no!', signature: sig });
      expect(verify.status).to.equal(400);
      expect(verify.error).to.match(/^unable to decode input as base64/);
      await t.write('keys/derived-ed', { type: 'ed25519', derived: true });
      const context = await t.write('sign/derived-ed', { input: b64('x'), context: 'no!' });
      expect(context.status).to.equal(400);
      expect(context.error).to.match(/^unable to decode context as base64/);
    });

    it('refuses unknown hash, marshaling, signature and salt settings with Vault texts', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ hash_algorithm: 'md5' }, 'invalid hash algorithm "md5"'],
        [{ marshaling_algorithm: 'pem' }, 'invalid marshaling type "pem"'],
        [{ salt_length: 'most' }, "salt length neither 'auto', 'hash', nor an int: most"],
        [{ salt_length: '-2' }, 'salt length is invalid: -2'],
        [{ signature_algorithm: 'pkcs1' }, 'unsupported signature_algorithm "pkcs1"; must be "pss" or "pkcs1v15"'],
      ];
      for (const [options, error] of cases) {
        expect(await t.write('sign/rsa-2048', { input: b64('x'), ...options })).to.include({ status: 400, error });
        expect(await t.write('verify/rsa-2048', { input: b64('x'), signature: 'vault:v1:AAAA', ...options })).to.include({ status: 400, error });
      }
      expect(await t.write('sign/rsa-2048/md5', { input: b64('x') })).to.include({ status: 400, error: 'invalid hash algorithm "md5"' });
    });
  });

  describe('hash algorithms', () => {
    for (const type of ['ecdsa-p256', 'rsa-2048']) {
      it(`${type}: signs with every hash, from the URL or the body, and verifies only with the same hash`, async () => {
        for (const hash of HASHES) {
          const url = await t.write(`sign/${type}/${hash}`, { input: b64('m') });
          expect(url.status, `${hash}: ${url.error}`).to.equal(200);
          expect((await t.write(`verify/${type}`, { input: b64('m'), signature: url.data.signature, hash_algorithm: hash })).data.valid, hash).to.equal(true);
          const body = await t.write(`sign/${type}`, { input: b64('m'), hash_algorithm: hash });
          expect((await t.write(`verify/${type}/${hash}`, { input: b64('m'), signature: body.data.signature })).data.valid, hash).to.equal(true);
        }
        const sha512 = await t.write(`sign/${type}/sha2-512`, { input: b64('m') });
        expect((await t.write(`verify/${type}/sha2-256`, { input: b64('m'), signature: sha512.data.signature })).data.valid).to.equal(false);
      });
    }

    it('lets the URL hash win over the body and honours the deprecated algorithm field', async () => {
      const signed = await t.write('sign/ecdsa-p256/sha2-384', { input: b64('m'), hash_algorithm: 'sha2-256' });
      expect((await t.write('verify/ecdsa-p256/sha2-384', { input: b64('m'), signature: signed.data.signature })).data.valid).to.equal(true);
      expect((await t.write('verify/ecdsa-p256', { input: b64('m'), signature: signed.data.signature, algorithm: 'sha2-384' })).data.valid).to.equal(true);
    });

    it('ignores the hash for ed25519 keys', async () => {
      const a = (await t.write('sign/ed25519/sha2-384', { input: b64('m') })).data.signature;
      const b = (await t.write('sign/ed25519', { input: b64('m') })).data.signature;
      expect(a).to.equal(b);
      expect((await t.write('verify/ed25519/sha1', { input: b64('m'), signature: a })).data.valid).to.equal(true);
    });

    it('takes hash none only with prehashed=true and signature_algorithm=pkcs1v15', async () => {
      const error = 'hash_algorithm=none requires both prehashed=true and signature_algorithm=pkcs1v15';
      for (const options of [{}, { prehashed: true }, { signature_algorithm: 'pkcs1v15' }, { prehashed: true, signature_algorithm: 'pss' }]) {
        expect(await t.write('sign/rsa-2048/none', { input: b64('m'), ...options })).to.include({ status: 400, error });
        expect(await t.write('verify/rsa-2048/none', { input: b64('m'), signature: 'vault:v1:AAAA', ...options })).to.include({ status: 400, error });
      }
      const { valid } = await roundTrip('rsa-2048', { hash_algorithm: 'none', prehashed: true, signature_algorithm: 'pkcs1v15' }, digest('sha256', 'm'));
      expect(valid).to.equal(true);
    });
  });

  describe('RSA schemes', () => {
    it('signs with PSS by default and with PKCS#1 v1.5 on request; each verifies only under its own scheme', async () => {
      const pss = await roundTrip('rsa-2048', {});
      const pkcs = await roundTrip('rsa-2048', { signature_algorithm: 'pkcs1v15' });
      expect(pss.valid && pkcs.valid).to.equal(true);
      expect((await t.write('verify/rsa-2048', { input: b64('message'), signature: pss.signature, signature_algorithm: 'pkcs1v15' })).data.valid).to.equal(false);
      expect((await t.write('verify/rsa-2048', { input: b64('message'), signature: pkcs.signature })).data.valid).to.equal(false);
      // PKCS#1 v1.5 is deterministic, PSS is salted.
      expect((await roundTrip('rsa-2048', { signature_algorithm: 'pkcs1v15' })).signature).to.equal(pkcs.signature);
      expect((await roundTrip('rsa-2048', {})).signature).to.not.equal(pss.signature);
    });

    it('takes salt_length auto, hash or a number; auto verifies any, a number only itself', async () => {
      const hash = await roundTrip('rsa-2048', { salt_length: 'hash' });
      const twenty = await roundTrip('rsa-2048', { salt_length: '20' });
      const upper = await roundTrip('rsa-2048', { salt_length: 'HASH' });
      expect(hash.valid && twenty.valid && upper.valid).to.equal(true);
      for (const signature of [hash.signature, twenty.signature]) {
        expect((await t.write('verify/rsa-2048', { input: b64('message'), signature })).data.valid).to.equal(true);
      }
      expect((await t.write('verify/rsa-2048', { input: b64('message'), signature: twenty.signature, salt_length: '21' })).data.valid).to.equal(false);
      expect((await t.write('verify/rsa-2048', { input: b64('message'), signature: hash.signature, salt_length: '32' })).data.valid).to.equal(true);
    });

    it('refuses a salt length the key and hash cannot hold', async () => {
      // rsa-2048 with sha2-256: at most 256 - 2 - 32 = 222 bytes.
      expect((await roundTrip('rsa-2048', { salt_length: 222 })).valid).to.equal(true);
      expect(await t.write('sign/rsa-2048', { input: b64('m'), salt_length: 223 })).to.include({ status: 400, error: 'requested salt length 223 is invalid' });
      expect(await t.write('verify/rsa-2048', { input: b64('m'), signature: 'vault:v1:AAAA', salt_length: 223 })).to.include({
        status: 400,
        error: 'requested salt length 223 is invalid',
      });
      expect(await t.write('sign/rsa-2048/sha2-512', { input: b64('m'), salt_length: 191 })).to.include({ status: 400, error: 'requested salt length 191 is invalid' });
    });

    it('signs prehashed digests with both schemes and refuses a digest of the wrong length', async () => {
      for (const scheme of ['pss', 'pkcs1v15']) {
        expect((await roundTrip('rsa-2048', { prehashed: true, signature_algorithm: scheme }, digest('sha256', 'm'))).valid).to.equal(true);
        expect((await roundTrip('rsa-2048', { prehashed: true, signature_algorithm: scheme, hash_algorithm: 'sha3-384' }, digest('sha3-384', 'm'))).valid).to.equal(true);
        const wrong = await t.write('sign/rsa-2048', { prehashed: true, signature_algorithm: scheme, input: digest('sha1', 'm') });
        expect(wrong).to.include({ status: 400, error: 'prehashed input must be a 32-byte sha2-256 digest, got 20 bytes' });
      }
    });

    it('refuses a none input longer than the key can sign', async () => {
      const res = await t.write('sign/rsa-2048/none', { prehashed: true, signature_algorithm: 'pkcs1v15', input: b64(Buffer.alloc(250)) });
      expect(res).to.include({ status: 400, error: 'input is too long for the RSA key size' });
    });
  });

  describe('ECDSA', () => {
    it('marshals as DER by default and as fixed-width r‖s in unpadded base64url with jws', async () => {
      for (const [type, size] of [['ecdsa-p256', 32], ['ecdsa-p384', 48], ['ecdsa-p521', 66]] as const) {
        const asn1 = await roundTrip(type, {});
        expect(Buffer.from(asn1.signature.split(':')[2]!, 'base64')[0]).to.equal(0x30);
        const jws = await roundTrip(type, { marshaling_algorithm: 'jws' });
        expect(jws.valid).to.equal(true);
        const text = jws.signature.split(':')[2]!;
        expect(text).to.match(/^[A-Za-z0-9_-]+$/);
        expect(Buffer.from(text, 'base64url')).to.have.length(2 * size);
        // Read as asn1, a jws signature is not standard base64 or not DER: a 400, never a 500.
        expect((await t.write(`verify/${type}`, { input: b64('message'), signature: jws.signature })).status).to.equal(400);
      }
    });

    it('signs prehashed input of any length, as Go does', async () => {
      for (const input of [digest('sha256', 'm'), digest('sha512', 'm'), b64(Buffer.alloc(10, 1))]) {
        expect((await roundTrip('ecdsa-p384', { prehashed: true }, input)).valid).to.equal(true);
      }
      const signed = await t.write('sign/ecdsa-p256', { prehashed: true, input: digest('sha256', 'm') });
      expect((await t.write('verify/ecdsa-p256', { input: b64('m'), signature: signed.data.signature })).data.valid).to.equal(true);
    });

    it('answers malformed DER as Vault does', async () => {
      const good = Buffer.from((await t.write('sign/ecdsa-p256', { input: b64('m') })).data.signature.split(':')[2], 'base64');
      const extra = `vault:v1:${Buffer.concat([good, Buffer.from([0])]).toString('base64')}`;
      expect(await t.write('verify/ecdsa-p256', { input: b64('m'), signature: extra })).to.include({ status: 400, error: 'supplied signature contains extra data' });
      for (const bytes of [Buffer.from([0x30, 0x02, 0x02, 0x00]), Buffer.from('garbage'), good.subarray(0, 10)]) {
        expect(await t.write('verify/ecdsa-p256', { input: b64('m'), signature: `vault:v1:${bytes.toString('base64')}` })).to.include({
          status: 400,
          error: 'supplied signature is invalid',
        });
      }
    });
  });

  describe('signature texts and versions', () => {
    it('answers malformed signatures with Vault texts', async () => {
      const cases: [string, string, Record<string, unknown>?][] = [
        ['abc', 'invalid signature: no prefix'],
        ['vault:v1', 'invalid signature: wrong number of fields'],
        ['vault:vone:AAAA', 'invalid signature: version number could not be decoded'],
        ['vault:v1:AA*A', 'invalid base64 signature value'],
        ['vault:v1:AA-_', 'invalid base64 signature value'],
        ['vault:v1:AA+/', 'invalid base64 signature value', { marshaling_algorithm: 'jws' }],
      ];
      for (const [signature, error, options] of cases) {
        expect(await t.write('verify/ed25519', { input: b64('m'), signature, ...options })).to.include({ status: 400, error });
      }
    });

    it('signs with older versions by key_version and refuses bad ones with a 400', async () => {
      await t.write('keys/versioned', { type: 'ecdsa-p256' });
      await t.write('keys/versioned/rotate');
      const v1 = await t.write('sign/versioned', { input: b64('m'), key_version: 1 });
      expect(v1.data.signature).to.match(/^vault:v1:/);
      expect(v1.data.key_version).to.equal(1);
      expect((await t.write('sign/versioned', { input: b64('m') })).data.key_version).to.equal(2);
      expect((await t.write('verify/versioned', { input: b64('m'), signature: v1.data.signature })).data.valid).to.equal(true);
      expect(await t.write('sign/versioned', { input: b64('m'), key_version: -1 })).to.include({ status: 400, error: 'requested version for signing is negative' });
      expect(await t.write('sign/versioned', { input: b64('m'), key_version: 3 })).to.include({
        status: 400,
        error: 'requested version for signing is higher than the latest key version',
      });
      await t.write('keys/versioned/config', { min_encryption_version: 2 });
      expect(await t.write('sign/versioned', { input: b64('m'), key_version: 1 })).to.include({
        status: 400,
        error: 'requested version for signing is less than the minimum encryption key version',
      });
    });

    it('refuses signatures of versions below min_decryption_version and above the latest', async () => {
      await t.write('keys/aging', { type: 'ed25519' });
      const v1 = (await t.write('sign/aging', { input: b64('m') })).data.signature;
      await t.write('keys/aging/rotate');
      await t.write('keys/aging/config', { min_decryption_version: 2 });
      expect(await t.write('verify/aging', { input: b64('m'), signature: v1 })).to.include({
        status: 400,
        error: 'ciphertext or signature version is disallowed by policy (too old)',
      });
      expect(await t.write('verify/aging', { input: b64('m'), signature: v1.replace('vault:v1:', 'vault:v3:') })).to.include({
        status: 400,
        error: 'invalid signature: version is too new',
      });
      expect(await t.write('sign/aging', { input: b64('m'), key_version: 1 })).to.include({
        status: 400,
        error: 'requested version for signing is less than the minimum decryption key version',
      });
    });

    it('refuses to sign with a version that holds only a public key, and still verifies with it', async () => {
      await t.write('keys/public-only', { type: 'ecdsa-p256' });
      const signature = (await t.write('sign/public-only', { input: b64('m') })).data.signature;
      const store = new KeyStore(t.storage, 0);
      const policy = (await store.get('public-only'))!;
      const { privateKey: _dropped, ...publicOnly } = policy.versions.get(1)!;
      await store.save(policy.with({}, new Map([[1, publicOnly]])), [publicOnly]);
      await t.reload();
      expect(await t.write('sign/public-only', { input: b64('m') })).to.include({
        status: 400,
        error: 'requested version for signing does not contain a private part',
      });
      expect((await t.write('verify/public-only', { input: b64('m'), signature })).data.valid).to.equal(true);
    });
  });

  describe('derived ed25519', () => {
    const ctxA = b64('tenant-a');
    const ctxB = b64('tenant-b');

    it('needs a context to sign and to verify', async () => {
      expect(await t.write('sign/derived-ed', { input: b64('m') })).to.include({ status: 400, error: MISSING_CONTEXT });
      const signature = (await t.write('sign/derived-ed', { input: b64('m'), context: ctxA })).data.signature;
      expect(await t.write('verify/derived-ed', { input: b64('m'), signature })).to.include({ status: 400, error: MISSING_CONTEXT });
    });

    it('returns the derived public key, the same for the same context, and verifies only under that context', async () => {
      const a1 = await t.write('sign/derived-ed', { input: b64('m'), context: ctxA });
      const a2 = await t.write('sign/derived-ed', { input: b64('n'), context: ctxA });
      const b = await t.write('sign/derived-ed', { input: b64('m'), context: ctxB });
      expect(a1.data.public_key).to.be.a('string');
      expect(Buffer.from(a1.data.public_key, 'base64')).to.have.length(32);
      expect(a1.data.public_key).to.equal(a2.data.public_key);
      expect(b.data.public_key).to.not.equal(a1.data.public_key);
      const read = await t.read('keys/derived-ed', { context: ctxA });
      expect(read.data.keys['1'].public_key).to.equal(a1.data.public_key);
      expect((await t.write('verify/derived-ed', { input: b64('m'), signature: a1.data.signature, context: ctxA })).data.valid).to.equal(true);
      expect((await t.write('verify/derived-ed', { input: b64('m'), signature: a1.data.signature, context: ctxB })).data.valid).to.equal(false);
    });

    it('derives per batch item and returns publickey in each result', async () => {
      const res = await t.write('sign/derived-ed', {
        batch_input: [
          { input: b64('m'), context: ctxA, reference: 'a' },
          { input: b64('m'), context: ctxB, reference: 'b' },
          { input: b64('m'), reference: 'none' },
        ],
      });
      expect(res.status, res.error).to.equal(200);
      const [a, b, none] = res.data.batch_results;
      expect(a.publickey).to.equal((await t.write('sign/derived-ed', { input: b64('x'), context: ctxA })).data.public_key);
      expect(b.publickey).to.not.equal(a.publickey);
      expect(none).to.deep.equal({ key_version: 0, error: MISSING_CONTEXT, reference: 'none' });
      const verified = await t.write('verify/derived-ed', {
        batch_input: [
          { input: b64('m'), signature: a.signature, context: ctxA },
          { input: b64('m'), signature: b.signature, context: ctxA },
        ],
      });
      expect(verified.data.batch_results).to.deep.equal([
        { valid: true, reference: '' },
        { valid: false, reference: '' },
      ]);
    });

    it('ignores a context on a key that is not derived', async () => {
      const signed = await t.write('sign/ed25519', { input: b64('m'), context: ctxA });
      expect(signed.data).to.not.have.property('public_key');
      expect((await t.write('verify/ed25519', { input: b64('m'), signature: signed.data.signature })).data.valid).to.equal(true);
    });
  });

  describe('batches', () => {
    it('signs items in order with key_version and reference, reporting bad items per item with 200', async () => {
      const res = await t.write('sign/ecdsa-p256/sha2-384', {
        reference: 'req',
        batch_input: [{ input: b64('one'), reference: 'r1' }, { input: 'bad!' }, { reference: 'r3' }, { input: b64('four') }],
      });
      expect(res.status, res.error).to.equal(200);
      const [one, bad, missing, four] = res.data.batch_results;
      expect(one).to.have.all.keys('signature', 'key_version', 'reference');
      expect(one).to.include({ key_version: 1, reference: 'r1' });
      expect(bad.key_version).to.equal(0);
      expect(bad.error).to.match(/^unable to decode input as base64/);
      expect(bad.reference).to.equal('req');
      expect(missing).to.deep.equal({ key_version: 0, error: 'missing input', reference: 'r3' });
      const verified = await t.write('verify/ecdsa-p256/sha2-384', {
        batch_input: [
          { input: b64('one'), signature: one.signature, reference: 'v1' },
          { input: b64('four'), signature: one.signature },
          { input: b64('four'), signature: four.signature },
          { input: b64('four'), signature: 'garbage' },
          { signature: four.signature },
        ],
      });
      expect(verified.status, verified.error).to.equal(200);
      expect(verified.data.batch_results).to.deep.equal([
        { valid: true, reference: 'v1' },
        { valid: false, reference: '' },
        { valid: true, reference: '' },
        { valid: false, error: 'invalid signature: no prefix', reference: '' },
        { valid: false, error: 'missing input', reference: '' },
      ]);
    });

    it('reports a bad key_version in every item of a batch, with 200', async () => {
      const res = await t.write('sign/rsa-2048', { key_version: 9, batch_input: [{ input: b64('a') }, { input: 'bad!' }] });
      expect(res.status, res.error).to.equal(200);
      expect(res.data.batch_results[0]).to.deep.equal({
        key_version: 0,
        error: 'requested version for signing is higher than the latest key version',
        reference: '',
      });
      expect(res.data.batch_results[1].error).to.match(/^unable to decode input as base64/);
    });

    it('ignores the top-level input and context when batch_input is given', async () => {
      const res = await t.write('sign/ed25519', { input: b64('top'), batch_input: [{ input: b64('item') }] });
      expect((await t.write('verify/ed25519', { input: b64('item'), signature: res.data.batch_results[0].signature })).data.valid).to.equal(true);
    });

    it('refuses an empty batch', async () => {
      expect(await t.write('sign/ed25519', { batch_input: [] })).to.include({ status: 400, error: 'missing batch input to process' });
      expect(await t.write('verify/ed25519', { batch_input: [] })).to.include({ status: 400, error: 'missing batch input to process' });
    });
  });
});
