/**
 * Transit's key-encapsulation keys, `ml-kem` (768, 1024) and `mlkem768-x25519`, over the transit
 * paths: encrypt, decrypt, datakey, rewrap and batches; the public key a client seals to offline;
 * rotation, trim, backup and restore, and import (docs/transit-kem.md).
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Aes256Gcm, CipherSuite, HkdfSha256, HkdfSha384 } from '@hpke/core';
import { MlKem1024, MlKem768 } from '@hpke/ml-kem';
import { XWing } from '@hpke/hybridkem-x-wing';
import { HPKE_KEMS, kemEngine, kemEngines, useKemEngine } from '../../../plugins/transit/crypto/hpke.js';
import { TransitHarness, sharedWasm } from './harness.js';
import { ok, snapshot, wrapFor } from './byok-helpers.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import { decryptLarge, encryptLarge, type Encrypted } from '../../../plugins/transit/crypto/cipher.js';
import { KeyStore } from '../../../plugins/transit/keys/key-store.js';

const b64 = (text: string | Buffer) => (typeof text === 'string' ? Buffer.from(text) : text).toString('base64');

/** Each KEM key as created, the name its read shows, and a client's HPKE suite for its public key. */
const KEYS = [
  { create: { type: 'ml-kem' }, set: '768', kem: HPKE_KEMS.mlKem768, client: () => new CipherSuite({ kem: new MlKem768(), kdf: new HkdfSha256(), aead: new Aes256Gcm() }) },
  { create: { type: 'ml-kem', parameter_set: '1024' }, set: '1024', kem: HPKE_KEMS.mlKem1024, client: () => new CipherSuite({ kem: new MlKem1024(), kdf: new HkdfSha384(), aead: new Aes256Gcm() }) },
  { create: { type: 'mlkem768-x25519' }, set: undefined, kem: HPKE_KEMS.mlKem768X25519, client: () => new CipherSuite({ kem: new XWing(), kdf: new HkdfSha256(), aead: new Aes256Gcm() }) },
] as const;

describe('transit key-encapsulation keys (ml-kem, mlkem768-x25519)', () => {
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
  });

  // The round trips run on each KEM engine this Node offers (hpke.ts): the answers are the same.
  for (const engine of kemEngines()) {
    for (const key of KEYS) {
      describe(`${key.kem.name} on ${engine}`, () => {
        const inUse = kemEngine();
        before(() => useKemEngine(engine));
        after(() => useKemEngine(inUse));
        it('is created with its parameter set and raw public key, supports encryption and decryption, and nothing else', async () => {
          await ok(h.write('keys/k', key.create));
          const read = await ok(h.read('keys/k'));
          expect(read.type).to.equal(key.create.type);
          expect(read.parameter_set).to.equal(key.set);
          expect([read.supports_encryption, read.supports_decryption, read.supports_signing, read.supports_derivation]).to.deep.equal([true, true, false, false]);
          expect(read.keys['1'].name).to.equal(key.kem.name);
          expect(Buffer.from(read.keys['1'].public_key, 'base64')).to.have.length(key.kem.publicKeyBytes);
          expect((await h.write('sign/k', { input: b64('x') })).status).to.equal(400);
        });

        it('encrypts and decrypts single items and batches, with context as HPKE info and associated_data as the AEAD\'s, each needed again to decrypt', async () => {
          await ok(h.write('keys/k', key.create));
          const single = await ok(h.write('encrypt/k', { plaintext: b64('hello'), context: b64('tenant'), associated_data: b64('row 1') }));
          expect(single.ciphertext).to.match(/^vault:v1:/);
          expect(Buffer.from(single.ciphertext.slice('vault:v1:'.length), 'base64')).to.have.length(key.kem.encBytes + 5 + 16);
          const opened = await ok(h.write('decrypt/k', { ciphertext: single.ciphertext, context: b64('tenant'), associated_data: b64('row 1') }));
          expect(opened.plaintext).to.equal(b64('hello'));
          for (const wrong of [{ context: b64('other'), associated_data: b64('row 1') }, { context: b64('tenant') }, { associated_data: b64('row 1') }]) {
            const res = await h.write('decrypt/k', { ciphertext: single.ciphertext, ...wrong });
            expect(res.status).to.equal(400);
            expect(res.error).to.equal('failed to open the ciphertext: message authentication failed');
          }

          const texts = ['a', '', 'x'.repeat(5000)].map((t) => b64(t));
          const sealed = (await ok(h.write('encrypt/k', { batch_input: texts.map((plaintext) => ({ plaintext, context: b64('c') })) }))).batch_results;
          expect(new Set(sealed.map((r: any) => r.ciphertext)).size).to.equal(3);
          const batch = [...sealed.map((r: any) => ({ ciphertext: r.ciphertext, context: b64('c') })), { ciphertext: 'vault:v1:AAAA', context: b64('c') }];
          const results = (await h.write('decrypt/k', { batch_input: batch, partial_failure_response_code: 207 })).data.batch_results;
          expect(results.slice(0, 3).map((r: any) => r.plaintext)).to.deep.equal(texts);
          expect(results[3].error).to.match(/^invalid ciphertext length: a .* ciphertext starts with its \d+-byte encapsulated key$/);
        });

        it('opens what a client seals offline with an HPKE library to the public key that keys/:name and export show', async () => {
          await ok(h.write('keys/k', { ...key.create, exportable: true }));
          const published = (await ok(h.read('keys/k'))).keys['1'].public_key;
          const exported = (await ok(h.read('export/public-key/k/1'))).keys['1'];
          expect(exported).to.equal(published);
          const client = key.client();
          const recipientPublicKey = await client.kem.deserializePublicKey(new Uint8Array(Buffer.from(published, 'base64')));
          const { enc, ct } = await client.seal({ recipientPublicKey, info: Buffer.from('invoice-42') }, Buffer.from('sealed offline'), Buffer.from('v1'));
          const ciphertext = `vault:v1:${Buffer.concat([Buffer.from(enc), Buffer.from(ct)]).toString('base64')}`;
          const opened = await ok(h.write('decrypt/k', { ciphertext, context: b64('invoice-42'), associated_data: b64('v1') }));
          expect(Buffer.from(opened.plaintext, 'base64').toString()).to.equal('sealed offline');
        });

        it('wraps a fresh data key that decrypt unwraps, and rewraps to the latest version after rotation', async () => {
          await ok(h.write('keys/k', key.create));
          const plain = await ok(h.write('datakey/plaintext/k', { context: b64('c') }));
          expect(Buffer.from(plain.plaintext, 'base64')).to.have.length(32);
          expect((await ok(h.write('decrypt/k', { ciphertext: plain.ciphertext, context: b64('c') }))).plaintext).to.equal(plain.plaintext);
          const wrapped = await ok(h.write('datakey/wrapped/k', { bits: 512 }));
          expect(wrapped.plaintext).to.equal(undefined);
          expect(Buffer.from((await ok(h.write('decrypt/k', { ciphertext: wrapped.ciphertext }))).plaintext, 'base64')).to.have.length(64);

          await ok(h.write('keys/k/rotate'));
          const rewrapped = await ok(h.write('rewrap/k', { ciphertext: plain.ciphertext, context: b64('c') }));
          expect(rewrapped.ciphertext).to.match(/^vault:v2:/);
          expect((await ok(h.write('decrypt/k', { ciphertext: rewrapped.ciphertext, context: b64('c') }))).plaintext).to.equal(plain.plaintext);
          const read = await ok(h.read('keys/k'));
          expect(read.keys['2'].public_key).to.not.equal(read.keys['1'].public_key);
        });
      });
    }
  }

  it('refuses a parameter set other than 768 or 1024, a parameter set on another type, and derivation, naming the field', async () => {
    const bad = await h.write('keys/k', { type: 'ml-kem', parameter_set: '512' });
    expect([bad.status, bad.error]).to.deep.equal([400, 'invalid parameter_set 512 for key type ml-kem: expected one of 768, 1024']);
    const other = await h.write('keys/a', { type: 'aes256-gcm96', parameter_set: '768' });
    expect([other.status, other.error]).to.deep.equal([400, 'parameter_set is not valid for key type aes256-gcm96: only ml-dsa, slh-dsa, hybrid and ml-kem keys take one']);
    const hybrid = await h.write('keys/x', { type: 'mlkem768-x25519', parameter_set: '768' });
    expect(hybrid.status).to.equal(400);
    expect((await h.write('keys/d', { type: 'ml-kem', derived: true })).error).to.equal('key derivation and convergent encryption not supported for keys of type ml-kem');
    expect((await h.read('keys/k')).status).to.equal(404);
  });

  it('refuses a nonce and a padding scheme, and a ciphertext cut short or not base64, per item', async () => {
    await ok(h.write('keys/k', { type: 'ml-kem' }));
    expect((await h.write('encrypt/k', { plaintext: b64('x'), nonce: b64('123456789012') })).error).to.equal('provided nonce not allowed for this key');
    expect((await h.write('encrypt/k', { plaintext: b64('x'), padding_scheme: 'oaep' })).status).to.equal(400);
    expect((await h.write('decrypt/k', { ciphertext: 'vault:v1:!!!' })).error).to.equal('invalid ciphertext: could not decode base64');
    expect((await h.write('decrypt/k', { ciphertext: 'vault:v3:AAAA' })).error).to.equal('invalid ciphertext: version is too new');
  });

  it('trims old versions: their ciphertexts no longer open, the newer ones do', async () => {
    await ok(h.write('keys/k', { type: 'mlkem768-x25519' }));
    const old = (await ok(h.write('encrypt/k', { plaintext: b64('old') }))).ciphertext;
    await ok(h.write('keys/k/rotate'));
    const current = (await ok(h.write('encrypt/k', { plaintext: b64('new') }))).ciphertext;
    await ok(h.write('keys/k/config', { min_decryption_version: 2, min_encryption_version: 2 }));
    await ok(h.write('keys/k/trim', { min_available_version: 2 }));
    expect((await h.write('decrypt/k', { ciphertext: old })).status).to.equal(400);
    expect((await ok(h.write('decrypt/k', { ciphertext: current }))).plaintext).to.equal(b64('new'));
    expect(Object.keys((await ok(h.read('keys/k'))).keys)).to.deep.equal(['2']);
  });

  it('backs up and restores a key with its parameter set, and the restored key opens the old ciphertexts', async () => {
    await ok(h.write('keys/k', { type: 'ml-kem', parameter_set: '1024', exportable: true, allow_plaintext_backup: true }));
    await ok(h.write('keys/k/rotate'));
    const sealed = (await ok(h.write('encrypt/k', { plaintext: b64('kept'), key_version: 1 }))).ciphertext;
    const { backup } = await ok(h.read('backup/k'));
    const blob = JSON.parse(Buffer.from(backup, 'base64').toString());
    expect(blob.policy.type).to.equal(1020);
    expect(blob.policy.parameter_set).to.equal('1024');

    const other = await TransitHarness.create();
    await ok(other.write('restore/copy', { backup }), 204);
    const read = await ok(other.read('keys/copy'));
    expect([read.type, read.parameter_set, read.latest_version]).to.deep.equal(['ml-kem', '1024', 2]);
    expect(read.keys).to.deep.equal((await ok(h.read('keys/k'))).keys);
    expect((await ok(other.write('decrypt/copy', { ciphertext: sealed }))).plaintext).to.equal(b64('kept'));
  });

  it('refuses a backup whose public key is not the one of its private seed, and stores nothing', async () => {
    await ok(h.write('keys/k', { type: 'mlkem768-x25519', exportable: true, allow_plaintext_backup: true }));
    const { backup } = await ok(h.read('backup/k'));
    const blob = JSON.parse(Buffer.from(backup, 'base64').toString());
    blob.policy.keys['1'].public_key = b64(Buffer.from(HPKE_KEMS.mlKem768X25519.publicKeyOf(randomBytes(32))));
    const before = await snapshot(h.storage);
    const res = await h.write('restore/forged', { backup: b64(JSON.stringify(blob)) });
    expect([res.status, res.error]).to.deep.equal([400, 'key version 1: public_key is not the public key of the private seed']);
    expect(await snapshot(h.storage)).to.deep.equal(before);
  });

  it('imports a wrapped private seed, or a public key alone that encrypts only until import_version adds its seed', async () => {
    const seed = randomBytes(64);
    await ok(h.write('keys/full/import', { type: 'ml-kem', ciphertext: await wrapFor(h, seed) }), 204);
    const publicKey = b64(Buffer.from(HPKE_KEMS.mlKem768.publicKeyOf(seed)));
    expect((await ok(h.read('keys/full'))).keys['1'].public_key).to.equal(publicKey);

    await ok(h.write('keys/pub/import', { type: 'ml-kem', public_key: publicKey }), 204);
    const sealed = (await ok(h.write('encrypt/pub', { plaintext: b64('to the seed holder') }))).ciphertext;
    expect((await h.write('decrypt/pub', { ciphertext: sealed })).error).to.equal('requested version for decryption does not contain a private part');
    expect((await ok(h.write('decrypt/full', { ciphertext: sealed }))).plaintext).to.equal(b64('to the seed holder'));
    await ok(h.write('keys/pub/import_version', { ciphertext: await wrapFor(h, seed), version: 1 }), 204);
    expect((await ok(h.write('decrypt/pub', { ciphertext: sealed }))).plaintext).to.equal(b64('to the seed holder'));
  });

  it('refuses an imported seed of the wrong length, a public key of the wrong size, and a seed that is not the public-only version\'s', async () => {
    const short = await h.write('keys/a/import', { type: 'ml-kem', parameter_set: '1024', ciphertext: await wrapFor(h, randomBytes(32)) });
    expect([short.status, short.error]).to.deep.equal([400, 'invalid key size 32 bytes for ML-KEM-1024: expected its 64-byte private seed']);
    const wrongSize = await h.write('keys/b/import', { type: 'mlkem768-x25519', public_key: b64(randomBytes(1184)) });
    expect([wrongSize.status, wrongSize.error]).to.deep.equal([400, 'public_key: a MLKEM768-X25519 public key has 1216 bytes, got 1184']);
    await ok(h.write('keys/c/import', { type: 'ml-kem', public_key: b64(Buffer.from(HPKE_KEMS.mlKem768.publicKeyOf(randomBytes(64)))) }), 204);
    const mismatch = await h.write('keys/c/import_version', { ciphertext: await wrapFor(h, randomBytes(64)), version: 1 });
    expect([mismatch.status, mismatch.error]).to.deep.equal([400, 'cannot import key: the private key does not match the public key of version 1']);
  });

  it('seals and opens a plaintext of megabytes in pieces, giving the event loop back, into a ciphertext an HPKE library opens', async () => {
    await ok(h.write('keys/k', { type: 'mlkem768-x25519', exportable: true }));
    const plaintext = randomBytes(5 * 1024 * 1024 + 7);
    const [context, aad] = [Buffer.from('big'), Buffer.from('aad')];
    // The cipher calls alone, without the base64 decoding of the request, which takes turns of its own.
    const policy = (await new KeyStore(h.storage, 0).get('k'))!;
    const wasm = await sharedWasm();
    const sealing = await turnsDuring(() => encryptLarge(wasm, policy, { plaintext, context, aad, keyVersion: 0 }));
    expect(sealing.turns).to.be.at.least(3);
    // A ciphertext of megabytes comes as an AsciiText (core/large-text.ts).
    const ciphertext = String((sealing.result as Encrypted).ciphertext);
    const opening = await turnsDuring(() => decryptLarge(wasm, policy, { ciphertext, context, aad }));
    expect(opening.turns).to.be.at.least(3);
    expect((opening.result as Buffer).equals(plaintext)).to.equal(true);
    const api = await ok(h.write('decrypt/k', { ciphertext, context: b64(context), associated_data: b64(aad) }));
    expect(Buffer.from(String(api.plaintext), 'base64').equals(plaintext)).to.equal(true);

    const seed = Buffer.from((await ok(h.read('export/encryption-key/k/1'))).keys['1'], 'base64');
    const client = new CipherSuite({ kem: new XWing(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
    const payload = Buffer.from(ciphertext.slice('vault:v1:'.length), 'base64');
    const recipientKey = await client.kem.deserializePrivateKey(new Uint8Array(seed));
    const enc = new Uint8Array(payload.subarray(0, HPKE_KEMS.mlKem768X25519.encBytes));
    const opened = await client.open({ recipientKey, enc, info: Buffer.from('big') }, new Uint8Array(payload.subarray(enc.length)), Buffer.from('aad'));
    expect(Buffer.from(opened).equals(plaintext)).to.equal(true);

    const forged = Buffer.from(payload);
    forged[forged.length - 1]! ^= 1;
    const refused = await h.write('decrypt/k', { ciphertext: `vault:v1:${forged.toString('base64')}`, context: b64('big'), associated_data: b64('aad') });
    expect([refused.status, refused.error]).to.deep.equal([400, 'failed to open the ciphertext: message authentication failed']);
  });

  it('answers a ciphertext whose X25519 part is a low-order point as one that does not open, alone and in a batch, on each engine', async () => {
    await ok(h.write('keys/k', { type: 'mlkem768-x25519' }));
    const { ciphertext } = await ok(h.write('encrypt/k', { plaintext: b64('x') }));
    const payload = Buffer.from(ciphertext.slice('vault:v1:'.length), 'base64');
    payload.fill(0, 1088, 1120);
    const forged = 'vault:v1:' + payload.toString('base64');
    const inUse = kemEngine();
    try {
      for (const engine of kemEngines()) {
        useKemEngine(engine);
        const alone = await h.write('decrypt/k', { ciphertext: forged });
        expect([alone.status, alone.error], engine).to.deep.equal([400, 'failed to open the ciphertext: message authentication failed']);
        const batch = await ok(h.write('decrypt/k', { batch_input: [{ ciphertext: forged }, { ciphertext }], partial_failure_response_code: 207 }), 207);
        expect(batch.batch_results[0].error, engine).to.equal('failed to open the ciphertext: message authentication failed');
        expect(batch.batch_results[1].plaintext, engine).to.equal(b64('x'));
      }
    } finally {
      useKemEngine(inUse);
    }
  });

  it('encrypts and decrypts a batch of a hundred items in slices, giving the event loop back between them', async () => {
    await ok(h.write('keys/k', { type: 'ml-kem' }));
    const texts = Array.from({ length: 100 }, (_, i) => b64(`item ${i}`));
    const sealing = await turnsDuring(() => ok(h.write('encrypt/k', { batch_input: texts.map((plaintext) => ({ plaintext })) })));
    expect(sealing.turns).to.be.at.least(3);
    const sealed = sealing.result.batch_results.map((r: { ciphertext: string }) => ({ ciphertext: r.ciphertext }));
    const opening = await turnsDuring(() => ok(h.write('decrypt/k', { batch_input: sealed })));
    expect(opening.turns).to.be.at.least(3);
    expect(opening.result.batch_results.map((r: { plaintext: string }) => r.plaintext)).to.deep.equal(texts);
  });

  it('exports the private seed of an exportable key as encryption-key, from which the public key follows', async () => {
    await ok(h.write('keys/k', { type: 'ml-kem', exportable: true }));
    const seed = Buffer.from((await ok(h.read('export/encryption-key/k/1'))).keys['1'], 'base64');
    expect(seed).to.have.length(64);
    expect((await ok(h.read('keys/k'))).keys['1'].public_key).to.equal(b64(Buffer.from(HPKE_KEMS.mlKem768.publicKeyOf(seed))));
  });
});
