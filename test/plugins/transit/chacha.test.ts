/**
 * transit's XChaCha20-Poly1305 (HChaCha20 from @noble/ciphers, then OpenSSL's IETF ChaCha20-Poly1305
 * under the subkey) against the draft's published vector, and against @noble/ciphers' own
 * xchacha20poly1305 for random inputs; xchacha20-poly1305 keys over the transit paths.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { chachaCipher, chachaDecipher } from '../../../plugins/transit/crypto/chacha.js';
import { TransitHarness } from './harness.js';

const vector = JSON.parse(readFileSync(new URL('../../../../test/fixtures/transit-vectors/xchacha20-poly1305.json', import.meta.url), 'utf8')) as Record<string, string>;
const hex = (name: string) => Buffer.from(vector[name]!, 'hex');

function seal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Buffer {
  const cipher = chachaCipher(key, nonce);
  cipher.setAAD(aad, { plaintextLength: plaintext.length });
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Uint8Array, nonce: Uint8Array, sealed: Buffer, aad: Uint8Array): Buffer {
  const decipher = chachaDecipher(key, nonce);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  decipher.setAAD(aad, { plaintextLength: sealed.length - 16 });
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
}

describe('XChaCha20-Poly1305', () => {
  it('seals the published vector (draft-irtf-cfrg-xchacha-03, A.3.1) to its ciphertext and tag, and opens it', () => {
    const sealed = seal(hex('key'), hex('nonce'), hex('plaintext'), hex('aad'));
    expect(sealed.toString('hex')).to.equal(vector.ciphertext! + vector.tag!);
    expect(open(hex('key'), hex('nonce'), sealed, hex('aad')).equals(hex('plaintext'))).to.equal(true);
  });

  it('agrees with @noble/ciphers for random keys, nonces, texts and associated data of many lengths', () => {
    for (const length of [0, 1, 63, 64, 65, 1000, 70_000]) {
      const [key, nonce, plaintext, aad] = [randomBytes(32), randomBytes(24), randomBytes(length), randomBytes(length % 17)];
      const ours = seal(key, nonce, plaintext, aad);
      expect(ours.equals(Buffer.from(xchacha20poly1305(key, nonce, aad).encrypt(plaintext)))).to.equal(true);
      expect(open(key, nonce, ours, aad).equals(plaintext)).to.equal(true);
    }
  });

  it('refuses a tampered tag', () => {
    const sealed = seal(hex('key'), hex('nonce'), hex('plaintext'), hex('aad'));
    sealed[sealed.length - 1]! ^= 1;
    expect(() => open(hex('key'), hex('nonce'), sealed, hex('aad'))).to.throw();
  });

  describe('xchacha20-poly1305 transit keys', () => {
    let h: TransitHarness;
    beforeEach(async () => {
      h = await TransitHarness.create();
    });

    it('is listed with its type and supports derivation, and a ciphertext of another key type does not open under it', async () => {
      expect((await h.write('keys/x', { type: 'xchacha20-poly1305', derived: true })).status).to.be.lessThan(300);
      const read = await h.read('keys/x');
      expect(read.data.type).to.equal('xchacha20-poly1305');
      expect(read.data.supports_derivation).to.equal(true);
      expect(read.data.supports_encryption).to.equal(true);
      await h.write('keys/c', { type: 'chacha20-poly1305' });
      const other = await h.write('encrypt/c', { plaintext: Buffer.from('x').toString('base64') });
      const res = await h.write('decrypt/x', { ciphertext: other.data.ciphertext, context: Buffer.from('c').toString('base64') });
      expect(res.status).to.equal(400);
    });

    it('encrypts, decrypts, rewraps after rotation and makes data keys, single and in batches', async () => {
      await h.write('keys/x', { type: 'xchacha20-poly1305' });
      const texts = ['a', '', 'x'.repeat(5000)].map((t) => Buffer.from(t).toString('base64'));
      const sealed = (await h.write('encrypt/x', { batch_input: texts.map((plaintext) => ({ plaintext })) })).data.batch_results;
      const opened = (await h.write('decrypt/x', { batch_input: sealed.map((r: any) => ({ ciphertext: r.ciphertext })) })).data.batch_results;
      expect(opened.map((r: any) => r.plaintext)).to.deep.equal(texts);
      await h.write('keys/x/rotate');
      const rewrapped = await h.write('rewrap/x', { ciphertext: sealed[0].ciphertext });
      expect(rewrapped.data.ciphertext).to.match(/^vault:v2:/);
      expect((await h.write('decrypt/x', { ciphertext: rewrapped.data.ciphertext })).data.plaintext).to.equal(texts[0]);
      const datakey = await h.write('datakey/plaintext/x', {});
      expect((await h.write('decrypt/x', { ciphertext: datakey.data.ciphertext })).data.plaintext).to.equal(datakey.data.plaintext);
    });

    it('is created on upsert when an encrypt names the type', async () => {
      const res = await h.write('encrypt/up', { plaintext: Buffer.from('u').toString('base64'), type: 'xchacha20-poly1305' });
      expect(Buffer.from(res.data.ciphertext.slice('vault:v1:'.length), 'base64')).to.have.length(24 + 1 + 16);
      expect((await h.read('keys/up')).data.type).to.equal('xchacha20-poly1305');
    });

    it('convergent encryption gives the same ciphertext for the same plaintext and context', async () => {
      await h.write('keys/cx', { type: 'xchacha20-poly1305', derived: true, convergent_encryption: true });
      const item = { plaintext: Buffer.from('same').toString('base64'), context: Buffer.from('ctx').toString('base64') };
      const [a, b] = [await h.write('encrypt/cx', item), await h.write('encrypt/cx', item)];
      expect(a.data.ciphertext).to.equal(b.data.ciphertext);
      expect(Buffer.from(a.data.ciphertext.slice('vault:v1:'.length), 'base64')).to.have.length(24 + 4 + 16);
    });
  });
});
