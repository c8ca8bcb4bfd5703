/**
 * Ed25519ctx and Ed25519ph (signature_context; prehashed with sha2-512) on ed25519 keys: RFC
 * 8032's vectors through the crypto layer and through sign and verify on an imported key, the
 * prehash construction against @noble/curves' own ed25519ph (which hashes the message itself),
 * and the refusals of what does not fit.
 */
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ed25519ph } from '@noble/curves/ed25519.js';
import { ed25519FromSeed, ed25519RawPublic } from '../../../plugins/transit/crypto/derive.js';
import { signEd25519Variant, verifyEd25519Variant } from '../../../plugins/transit/crypto/ed25519-variants.js';
import { ok, wrapFor } from './byok-helpers.js';
import { TransitHarness } from './harness.js';

interface Vector {
  readonly secret: string;
  readonly public: string;
  readonly message: string;
  readonly context: string;
  readonly signature: string;
}

const vectors = JSON.parse(readFileSync(new URL('../../../../test/fixtures/transit-vectors/ed25519-ctx-ph.json', import.meta.url), 'utf8')) as {
  ed25519ctx: Vector[];
  ed25519ph: Vector[];
};
const hex = (text: string) => Buffer.from(text, 'hex');
const b64 = (bytes: string | Uint8Array) => Buffer.from(bytes).toString('base64');
const sha512 = (bytes: Uint8Array) => createHash('sha512').update(bytes).digest();
const sigOf = (value: string) => Buffer.from(value.split(':')[2]!, 'base64').toString('hex');

describe('Ed25519ctx and Ed25519ph', () => {
  it('sign the RFC 8032 vectors (7.2 Ed25519ctx, 7.3 Ed25519ph of the SHA-512 digest) and verify them', () => {
    for (const v of vectors.ed25519ctx) {
      const key = ed25519FromSeed(hex(v.secret));
      expect(ed25519RawPublic(key).toString('hex')).to.equal(v.public);
      const variant = { kind: 'ctx', context: hex(v.context) } as const;
      expect(signEd25519Variant(key, hex(v.message), variant).toString('hex')).to.equal(v.signature);
      expect(verifyEd25519Variant(key, hex(v.message), hex(v.signature), variant)).to.equal(true);
      expect(verifyEd25519Variant(key, hex(v.message), hex(v.signature), { kind: 'ctx', context: Buffer.from('other') })).to.equal(false);
    }
    for (const v of vectors.ed25519ph) {
      const key = ed25519FromSeed(hex(v.secret));
      const variant = { kind: 'ph', context: hex(v.context) } as const;
      expect(signEd25519Variant(key, sha512(hex(v.message)), variant).toString('hex')).to.equal(v.signature);
      expect(verifyEd25519Variant(key, sha512(hex(v.message)), hex(v.signature), variant)).to.equal(true);
    }
  });

  it('make Ed25519ph signatures of a digest that @noble/curves\' ed25519ph makes and checks from the message', () => {
    for (const context of [Buffer.alloc(0), randomBytes(1), randomBytes(255)]) {
      const seed = randomBytes(32);
      const key = ed25519FromSeed(seed);
      const message = randomBytes(100);
      const ours = signEd25519Variant(key, sha512(message), { kind: 'ph', context });
      expect(ours.equals(Buffer.from(ed25519ph.sign(message, seed, { context })))).to.equal(true);
      expect(ed25519ph.verify(ours, message, ed25519RawPublic(key), { context, zip215: false })).to.equal(true);
    }
  });
});

describe('signature_context and Ed25519ph through sign and verify', () => {
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
  });

  /** An ed25519 key named `name` holding a vector's secret key, imported as a client would (BYOK). */
  const importVectorKey = async (name: string, v: Vector) => ok(h.write(`keys/${name}/import`, { type: 'ed25519', ciphertext: await wrapFor(h, hex(v.secret)) }), 204);

  it('signs the RFC 8032 Ed25519ctx vectors with signature_context, single and in a batch, and verifies them', async () => {
    await importVectorKey('ctx', vectors.ed25519ctx[0]!);
    const [foo, bar] = vectors.ed25519ctx as [Vector, Vector];
    const single = await ok(h.write('sign/ctx', { input: b64(hex(foo.message)), signature_context: b64(hex(foo.context)) }));
    expect(sigOf(single.signature as string)).to.equal(foo.signature);

    const batch = (await ok(h.write('sign/ctx', { batch_input: [foo, bar].map((v) => ({ input: b64(hex(v.message)), signature_context: b64(hex(v.context)) })) }))).batch_results;
    expect(batch.map((r: { signature: string }) => sigOf(r.signature))).to.deep.equal([foo.signature, bar.signature]);

    const checks = [
      { input: b64(hex(foo.message)), signature: batch[0].signature, signature_context: b64(hex(foo.context)), reference: 'right' },
      { input: b64(hex(foo.message)), signature: batch[0].signature, signature_context: b64('bar'), reference: 'other context' },
      { input: b64(hex(foo.message)), signature: batch[0].signature, reference: 'as pure Ed25519' },
    ];
    const verified = (await ok(h.write('verify/ctx', { batch_input: checks }))).batch_results;
    expect(verified).to.deep.equal([
      { valid: true, reference: 'right' },
      { valid: false, reference: 'other context' },
      { valid: false, reference: 'as pure Ed25519' },
    ]);
    const pure = (await ok(h.write('sign/ctx', { input: b64(hex(foo.message)) }))).signature as string;
    expect((await ok(h.write('verify/ctx', { input: b64(hex(foo.message)), signature: pure, signature_context: b64(hex(foo.context)) }))).valid).to.equal(false);
  });

  it('signs the RFC 8032 Ed25519ph vector from its SHA-512 digest with prehashed and sha2-512, and verifies it', async () => {
    const v = vectors.ed25519ph[0]!;
    await importVectorKey('ph', v);
    const digest = b64(sha512(hex(v.message)));
    const signed = await ok(h.write('sign/ph/sha2-512', { input: digest, prehashed: true }));
    expect(sigOf(signed.signature as string)).to.equal(v.signature);
    expect((await ok(h.write('verify/ph', { input: digest, signature: signed.signature, prehashed: true, hash_algorithm: 'sha2-512' }))).valid).to.equal(true);
    const notDigest = await h.write('verify/ph/sha2-512', { input: b64(hex(v.message)), signature: signed.signature, prehashed: 'true' });
    expect(notDigest).to.include({ status: 400, error: 'prehashed input must be a 64-byte sha2-512 digest for Ed25519ph, got 3 bytes' });
    expect((await ok(h.write('verify/ph', { input: b64(hex(v.message)), signature: signed.signature }))).valid).to.equal(false);

    const withContext = (await ok(h.write('sign/ph/sha2-512', { input: digest, prehashed: true, signature_context: b64('app') }))).signature as string;
    expect(withContext).to.not.equal(signed.signature);
    expect((await ok(h.write('verify/ph/sha2-512', { input: digest, signature: withContext, prehashed: true, signature_context: b64('app') }))).valid).to.equal(true);
  });

  it('signs with a derived ed25519 key and a signature_context', async () => {
    await ok(h.write('keys/derived', { type: 'ed25519', derived: true }));
    const signed = await ok(h.write('sign/derived', { input: b64('m'), context: b64('tenant'), signature_context: b64('app') }));
    expect(signed.public_key).to.be.a('string');
    expect((await ok(h.write('verify/derived', { input: b64('m'), context: b64('tenant'), signature_context: b64('app'), signature: signed.signature }))).valid).to.equal(true);
    expect((await ok(h.write('verify/derived', { input: b64('m'), context: b64('tenant'), signature: signed.signature }))).valid).to.equal(false);
  });

  it('refuses what selects no Ed25519 variant whole, with a 400 naming the field', async () => {
    await ok(h.write('keys/ed', { type: 'ed25519' }));
    await ok(h.write('keys/ec', { type: 'ecdsa-p256' }));
    await ok(h.write('keys/mac', { type: 'hmac' }));
    const digest = b64(sha512(Buffer.from('m')));
    const signature = (await ok(h.write('sign/ed', { input: b64('m') }))).signature as string;
    const refusals: [string, Record<string, unknown>, RegExp][] = [
      ['sign/ed', { input: digest, prehashed: true }, /hash_algorithm must be sha2-512 for prehashed ed25519 input.*got sha2-256/],
      ['sign/ed/sha2-384', { input: digest, prehashed: true }, /hash_algorithm must be sha2-512/],
      ['sign/ed/sha2-512', { input: digest }, /hash_algorithm=sha2-512 selects Ed25519ph for ed25519 keys, which needs prehashed=true/],
      ['sign/ed/sha2-512', { input: b64('not a digest'), prehashed: true }, /prehashed input must be a 64-byte sha2-512 digest for Ed25519ph, got 12 bytes/],
      ['sign/ed', { input: b64('m'), signature_context: b64(randomBytes(256)) }, /signature_context has 256 bytes; Ed25519 contexts have at most 255/],
      ['sign/ed', { input: b64('m'), signature_context: 'not base64!' }, /signature_context/],
      ['sign/ec', { input: b64('m'), signature_context: b64('app') }, /signature_context applies to ed25519 keys only/],
      ['verify/ed', { input: digest, signature, prehashed: true }, /hash_algorithm must be sha2-512/],
      ['verify/ec', { input: b64('m'), signature, signature_context: b64('app') }, /signature_context applies to ed25519 keys only/],
      ['verify/mac', { input: b64('m'), hmac: 'vault:v1:AA==', signature_context: b64('app') }, /signature_context applies to signatures only/],
    ];
    for (const [path, body, message] of refusals) {
      const res = await h.write(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).to.equal(400);
      expect(res.error, path).to.match(message);
    }
    const batch = (await ok(h.write('sign/ed', { batch_input: [{ input: b64('m'), signature_context: b64(randomBytes(300)) }, { input: b64('m'), signature_context: b64('ok') }] }))).batch_results;
    expect(batch[0].error).to.match(/at most 255/);
    expect(batch[1].signature).to.match(/^vault:v1:/);
  });
});
