/**
 * One process serves every client on one event loop: a large batch, or a plaintext of megabytes,
 * must give the loop back while it is worked on, so that other clients' requests are served in
 * between, and must answer exactly as it would in one go. Counted in turns of the loop, never in
 * time (turnsDuring).
 */
import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { encryptBatch, encryptLarge } from '../../../plugins/transit/crypto/cipher.js';
import { KeyStore } from '../../../plugins/transit/keys/key-store.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import { largeObjectBytes } from '../../helpers/heap.js';
import { AsciiText, bodyAsciiText } from '../../../core/large-text.js';
import { TransitHarness, sharedWasm, type HarnessResult } from './harness.js';

const b64 = (bytes: string | Buffer) => Buffer.from(bytes).toString('base64');
/** A text of megabytes as the HTTP layer gives a handler a body's member of plain ASCII over a megabyte. */
const asBodyText = (text: string) => bodyAsciiText(Buffer.from(text, 'latin1'));

function batchResults(res: HarnessResult): any[] {
  return (res.response?.raw ? res.data.data : res.data).batch_results;
}

/** A batch of 100,000 items: dozens of slices, where a batch of 1,000 fits in one. */
const LARGE_BATCH = 100_000;
/** Fewer turns than a batch of LARGE_BATCH gives by far, and more than a request done in one go can. */
const MANY_TURNS = 10;

describe('transit and the event loop', function () {
  this.timeout(120_000);
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
  });

  describe('batches', () => {
    const plaintexts = Array.from({ length: LARGE_BATCH }, (_, i) => b64(`item ${i} ${'x'.repeat(40)}`));

    it('a batch encrypt of 100,000 plaintexts gives the event loop back between slices, answering every item in order', async () => {
      await h.write('keys/k');
      const { result, turns } = await turnsDuring(() => h.write('encrypt/k', { batch_input: plaintexts.map((plaintext) => ({ plaintext })) }));
      expect(result.status, result.error).to.equal(200);
      expect(turns).to.be.at.least(MANY_TURNS);
      const ciphertexts = batchResults(result).map((r) => r.ciphertext as string);
      const decrypted = batchResults(await h.write('decrypt/k', { batch_input: ciphertexts.map((ciphertext) => ({ ciphertext })) }));
      expect(decrypted.map((r) => r.plaintext)).to.deep.equal(plaintexts);
    });

    it('a batch of 1,000 plaintexts fits one slice and runs without a turn of the event loop', async () => {
      await h.write('keys/k');
      const { result, turns } = await turnsDuring(() => h.write('encrypt/k', { batch_input: plaintexts.slice(0, 1000).map((plaintext) => ({ plaintext })) }));
      expect(result.status, result.error).to.equal(200);
      expect(turns).to.equal(0);
    });

    it('batch decrypt and rewrap of 100,000 ciphertexts give the event loop back between slices', async () => {
      await h.write('keys/k');
      const ciphertexts = batchResults(await h.write('encrypt/k', { batch_input: plaintexts.map((plaintext) => ({ plaintext })) })).map((r) => r.ciphertext as string);
      await h.write('keys/k/rotate');

      const decrypt = await turnsDuring(() => h.write('decrypt/k', { batch_input: ciphertexts.map((ciphertext) => ({ ciphertext })) }));
      expect(decrypt.turns).to.be.at.least(MANY_TURNS);
      expect(batchResults(decrypt.result).map((r) => r.plaintext)).to.deep.equal(plaintexts);

      const rewrap = await turnsDuring(() => h.write('rewrap/k', { batch_input: ciphertexts.map((ciphertext) => ({ ciphertext })) }));
      expect(rewrap.turns).to.be.at.least(MANY_TURNS);
      const rewrapped = batchResults(rewrap.result).map((r) => r.ciphertext as string);
      expect(rewrapped.every((c) => c.startsWith('vault:v2:'))).to.equal(true);
      expect(batchResults(await h.write('decrypt/k', { batch_input: rewrapped.map((ciphertext) => ({ ciphertext })) })).map((r) => r.plaintext)).to.deep.equal(plaintexts);
    });

    it('batch hmac and its verification of 100,000 inputs give the event loop back between slices', async () => {
      await h.write('keys/k');
      const hmac = await turnsDuring(() => h.write('hmac/k', { batch_input: plaintexts.map((input) => ({ input })) }));
      expect(hmac.turns).to.be.at.least(MANY_TURNS);
      const macs = batchResults(hmac.result).map((r) => r.hmac as string);
      expect(macs[7]).to.equal((await h.write('hmac/k', { input: plaintexts[7] })).data.hmac);

      const verify = await turnsDuring(() => h.write('verify/k', { batch_input: plaintexts.map((input, i) => ({ input, hmac: macs[i === 5 ? 6 : i] })) }));
      expect(verify.turns).to.be.at.least(MANY_TURNS);
      const valid = batchResults(verify.result).map((r) => r.valid === true);
      expect(valid.filter((v) => !v)).to.have.length(1);
      expect(valid[5]).to.equal(false);
    });

    it('batch sign and verify of 3,000 inputs with an ed25519 key give the event loop back between slices', async () => {
      await h.write('keys/s', { type: 'ed25519' });
      const inputs = plaintexts.slice(0, 3000);
      const sign = await turnsDuring(() => h.write('sign/s', { batch_input: inputs.map((input) => ({ input })) }));
      expect(sign.turns).to.be.at.least(MANY_TURNS);
      const signatures = batchResults(sign.result).map((r) => r.signature as string);

      const verify = await turnsDuring(() => h.write('verify/s', { batch_input: inputs.map((input, i) => ({ input, signature: signatures[i === 9 ? 10 : i] })) }));
      expect(verify.turns).to.be.at.least(MANY_TURNS);
      const valid = batchResults(verify.result).map((r) => r.valid as boolean);
      expect(valid.filter((v) => !v)).to.deep.equal([false]);
      expect(valid[9]).to.equal(false);
    });

    it('a sliced batch keeps every item in its place: malformed items fail alone with their own error and reference', async () => {
      await h.write('keys/k');
      const bad = new Set([0, 4999, 5000, 5001, 29_999]);
      const items = Array.from({ length: 30_000 }, (_, i) => (bad.has(i) ? { plaintext: 'not base64!', reference: `r${i}` } : { plaintext: plaintexts[i], reference: `r${i}` }));
      const res = await h.write('encrypt/k', { batch_input: items });
      expect(res.status).to.equal(400);
      const results = batchResults(res);
      expect(results.map((r) => r.reference)).to.deep.equal(items.map((item) => item.reference));
      for (const i of bad) expect(results[i].error).to.equal('unable to decode plaintext as base64: illegal base64 data at input byte 3');
      const good = results.flatMap((r, i) => (bad.has(i) ? [] : [{ ciphertext: r.ciphertext, i }]));
      const decrypted = batchResults(await h.write('decrypt/k', { batch_input: good.map(({ ciphertext }) => ({ ciphertext })) }));
      expect(decrypted.map((r) => r.plaintext)).to.deep.equal(good.map(({ i }) => plaintexts[i]));
    });
  });

  describe('a plaintext of megabytes', () => {
    const plaintext = randomBytes(6 * 1024 * 1024 + 1);

    for (const type of ['aes256-gcm96', 'chacha20-poly1305']) {
      it(`is decoded and encrypted (${type}) in pieces with turns of the event loop between them, and decrypts to itself`, async () => {
        await h.write('keys/k', { type });
        const { result, turns } = await turnsDuring(() => h.write('encrypt/k', { plaintext: b64(plaintext), associated_data: b64('header') }));
        expect(result.status, result.error).to.equal(200);
        expect(turns).to.be.at.least(4);
        // A ciphertext and a plaintext of megabytes are answered as AsciiTexts: their JSON is the text's.
        expect(result.data.ciphertext).to.be.instanceOf(AsciiText);
        const decrypted = await h.write('decrypt/k', { ciphertext: result.data.ciphertext, associated_data: b64('header') });
        expect(decrypted.data.plaintext).to.be.instanceOf(AsciiText);
        expect(String(decrypted.data.plaintext)).to.equal(b64(plaintext));
      });
    }

    it('is taken as the HTTP layer gives it (an AsciiText) by encrypt, decrypt, rewrap, HMAC and hash, with the answers a string gets', async () => {
      await h.write('keys/k');
      const input = b64(plaintext);
      const sealed = await h.write('encrypt/k', { plaintext: asBodyText(input) });
      expect(sealed.status, sealed.error).to.equal(200);
      const ciphertext = String(sealed.data.ciphertext);
      expect(String((await h.write('decrypt/k', { ciphertext })).data.plaintext)).to.equal(input);
      expect(String((await h.write('decrypt/k', { ciphertext: asBodyText(ciphertext) })).data.plaintext)).to.equal(input);
      await h.write('keys/k/rotate', {});
      const rewrapped = await h.write('rewrap/k', { ciphertext: asBodyText(ciphertext) });
      expect(rewrapped.status, rewrapped.error).to.equal(200);
      expect(rewrapped.data.key_version).to.equal(2);
      expect(String((await h.write('decrypt/k', { ciphertext: asBodyText(String(rewrapped.data.ciphertext)) })).data.plaintext)).to.equal(input);
      const hmac = (await h.write('hmac/k', { input: asBodyText(input) })).data.hmac;
      expect(hmac).to.equal((await h.write('hmac/k', { input })).data.hmac);
      expect((await h.write('hash/sha2-256', { input: asBodyText(input) })).data.sum).to.equal(createHash('sha256').update(plaintext).digest('hex'));
      // The mistakes a string gets refused for: not base64, no prefix, a forged tag.
      const malformed = `${input.slice(0, -8)}AAAA*AAA`;
      expect((await h.write('encrypt/k', { plaintext: asBodyText(malformed) })).error).to.equal(`unable to decode plaintext as base64: illegal base64 data at input byte ${input.length - 4}`);
      for (const path of ['hmac/k', 'hash/sha2-256', 'hash/md4']) {
        const asString = await h.write(path, { input: malformed });
        expect(asString.status).to.equal(400);
        expect((await h.write(path, { input: asBodyText(malformed) })).error).to.equal(asString.error);
      }
      expect((await h.write('hash/md4', { input: asBodyText(input) })).error).to.equal((await h.write('hash/md4', { input })).error);
      expect((await h.write('decrypt/k', { ciphertext: asBodyText(ciphertext.slice(6)) })).error).to.equal('invalid ciphertext: no prefix');
      const cut = ciphertext.length - 40;
      const forged = ciphertext.slice(0, cut) + (ciphertext[cut] === 'A' ? 'B' : 'A') + ciphertext.slice(cut + 1);
      expect((await h.write('decrypt/k', { ciphertext: asBodyText(forged) })).error).to.equal('cipher: message authentication failed');
      expect((await h.write('rewrap/k', { ciphertext: asBodyText(forged) })).error).to.equal('cipher: message authentication failed');
    });

    it('gets from a convergent key, in pieces, the ciphertext it gets in one go', async () => {
      await h.write('keys/c', { derived: true, convergent_encryption: true });
      const policy = (await new KeyStore(h.storage, 0).get('c'))!;
      const item = { plaintext, context: Buffer.from('tenant 7'), aad: Buffer.from('header'), keyVersion: 0 };
      const wasm = await sharedWasm();
      const { result, turns } = await turnsDuring(() => encryptLarge(wasm, policy, item));
      expect(turns).to.be.at.least(4);
      const { ciphertext, keyVersion } = result as { ciphertext: AsciiText; keyVersion: number };
      expect({ ciphertext: String(ciphertext), keyVersion }).to.deep.equal(encryptBatch(wasm, policy, [item])[0]);
    });

    // A join of its pieces puts all 30 MB of base64 on the heap.
    const JOINED_ON_HEAP = 10_000_000;

    it('gets its ciphertext as an AsciiText, making no string of it on V8\'s heap', async () => {
      const large = randomBytes(22_500_000);
      await h.write('keys/k');
      const policy = (await new KeyStore(h.storage, 0).get('k'))!;
      const wasm = await sharedWasm();
      const before = largeObjectBytes();
      const encrypted = await encryptLarge(wasm, policy, { plaintext: large, keyVersion: 0 });
      expect(largeObjectBytes() - before).to.be.below(JOINED_ON_HEAP);
      const { ciphertext } = encrypted as { ciphertext: AsciiText };
      expect(ciphertext).to.be.instanceOf(AsciiText);
      expect(ciphertext.chars(0, 9)).to.equal('vault:v1:');
    });

    it('is given back by decryption as base64 in an AsciiText, making no string of it on V8\'s heap', async () => {
      const large = randomBytes(22_500_000);
      await h.write('keys/k');
      const ciphertext = (await h.write('encrypt/k', { plaintext: large.toString('base64') })).data.ciphertext as AsciiText;
      const before = largeObjectBytes();
      const decrypted = await h.write('decrypt/k', { ciphertext });
      expect(largeObjectBytes() - before).to.be.below(JOINED_ON_HEAP);
      expect(decrypted.data.plaintext).to.be.instanceOf(AsciiText);
      expect(String(decrypted.data.plaintext) === large.toString('base64')).to.equal(true);
    });

    for (const type of ['aes256-gcm96', 'chacha20-poly1305']) {
      it(`is decrypted and rewrapped (${type}) in pieces with turns of the event loop between them, with the answers of one go`, async () => {
        await h.write('keys/k', { type });
        const encrypted = await h.write('encrypt/k', { plaintext: b64(plaintext), associated_data: b64('header') });
        const ciphertext = String(encrypted.data.ciphertext);
        const decrypted = await turnsDuring(() => h.write('decrypt/k', { ciphertext, associated_data: b64('header') }));
        expect(decrypted.result.status, decrypted.result.error).to.equal(200);
        expect(decrypted.turns).to.be.at.least(4);
        expect(String(decrypted.result.data.plaintext)).to.equal(b64(plaintext));
        await h.write('keys/k/rotate', {});
        const rewrapped = await turnsDuring(() => h.write('rewrap/k', { ciphertext, associated_data: b64('header') }));
        expect(rewrapped.result.status, rewrapped.result.error).to.equal(200);
        expect(rewrapped.turns).to.be.at.least(4);
        expect(rewrapped.result.data).to.include({ key_version: 2 });
        expect(String(rewrapped.result.data.ciphertext).startsWith('vault:v2:')).to.equal(true);
        expect(String((await h.write('decrypt/k', { ciphertext: rewrapped.result.data.ciphertext, associated_data: b64('header') })).data.plaintext)).to.equal(b64(plaintext));
      });
    }

    it('whose ciphertext was tampered with fails authentication in pieces as it does in one go, and gives no plaintext', async () => {
      await h.write('keys/k');
      const ciphertext = String((await h.write('encrypt/k', { plaintext: b64(plaintext) })).data.ciphertext);
      const cut = ciphertext.length - 40;
      const tampered = ciphertext.slice(0, cut) + (ciphertext[cut] === 'A' ? 'B' : 'A') + ciphertext.slice(cut + 1);
      const res = await h.write('decrypt/k', { ciphertext: tampered });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal('cipher: message authentication failed');
      const rewrap = await h.write('rewrap/k', { ciphertext: tampered });
      expect(rewrap.status).to.equal(400);
      expect(rewrap.error).to.equal('cipher: message authentication failed');
    });

    it('is HMACed and hashed in pieces with turns of the event loop between them, with the sums of one go', async () => {
      await h.write('keys/k');
      const input = b64(plaintext);
      const small = b64(plaintext.subarray(0, 1000));
      const hmac = await turnsDuring(() => h.write('hmac/k/sha2-512', { input }));
      expect(hmac.result.status, hmac.result.error).to.equal(200);
      expect(hmac.turns).to.be.at.least(4);
      const verified = await h.write('verify/k/sha2-512', { input, hmac: hmac.result.data.hmac });
      expect(verified.data.valid).to.equal(true);
      expect((await h.write('hmac/k/sha2-512', { input: small })).data.hmac).to.not.equal(hmac.result.data.hmac);
      const hash = await turnsDuring(() => h.write('hash/sha3-256', { input }));
      expect(hash.result.status, hash.result.error).to.equal(200);
      expect(hash.turns).to.be.at.least(4);
      expect(hash.result.data.sum).to.equal(createHash('sha3-256').update(plaintext).digest('hex'));
    });

    it('with malformed base64 is refused with the message a short one gets', async () => {
      await h.write('keys/k');
      const text = `${b64(plaintext).slice(0, -8)}AAAA*AAA`;
      const res = await h.write('encrypt/k', { plaintext: text });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal(`unable to decode plaintext as base64: illegal base64 data at input byte ${text.length - 4}`);
    });
  });
});
