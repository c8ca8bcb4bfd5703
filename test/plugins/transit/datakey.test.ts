import { expect } from 'chai';
import { MISSING_CONTEXT } from '../../../plugins/transit/crypto/derive.js';
import { TransitHarness } from './harness.js';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

describe('transit datakey', () => {
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
    await h.write('keys/k');
  });

  it('plaintext: returns a random 256-bit key and its ciphertext, which decrypt opens', async () => {
    const res = await h.write('datakey/plaintext/k');
    expect(res.status).to.equal(200);
    expect(res.data).to.have.keys('ciphertext', 'key_version', 'plaintext');
    expect(res.data.key_version).to.equal(1);
    expect(Buffer.from(res.data.plaintext, 'base64')).to.have.length(32);
    const opened = await h.write('decrypt/k', { ciphertext: res.data.ciphertext });
    expect(opened.data.plaintext).to.equal(res.data.plaintext);
    const again = await h.write('datakey/plaintext/k');
    expect(again.data.plaintext).to.not.equal(res.data.plaintext);
  });

  it('wrapped: returns only the ciphertext and the key version', async () => {
    const res = await h.write('datakey/wrapped/k');
    expect(res.status).to.equal(200);
    expect(res.data).to.have.keys('ciphertext', 'key_version');
    const opened = await h.write('decrypt/k', { ciphertext: res.data.ciphertext });
    expect(Buffer.from(opened.data.plaintext, 'base64')).to.have.length(32);
  });

  it('makes keys of 128, 256 and 512 bits and refuses other lengths', async () => {
    for (const bits of [128, 256, 512]) {
      const res = await h.write('datakey/plaintext/k', { bits });
      expect(Buffer.from(res.data.plaintext, 'base64'), String(bits)).to.have.length(bits / 8);
    }
    const bad = await h.write('datakey/plaintext/k', { bits: 384 });
    expect(bad.status).to.equal(400);
    expect(bad.error).to.equal('invalid bit length');
  });

  it("refuses a type other than plaintext or wrapped with Vault's message", async () => {
    const res = await h.write('datakey/both/k');
    expect(res.status).to.equal(400);
    expect(res.error).to.equal("Invalid path, must be 'plaintext' or 'wrapped'");
  });

  it('answers "encryption key not found" for a missing key, without creating it', async () => {
    const res = await h.write('datakey/plaintext/none');
    expect(res.status).to.equal(400);
    expect(res.error).to.equal('encryption key not found');
    expect((await h.read('keys/none')).status).to.equal(404);
  });

  it('needs a context with a derived key, and decrypt needs the same context', async () => {
    await h.write('keys/d', { derived: true });
    const missing = await h.write('datakey/wrapped/d');
    expect(missing.status).to.equal(400);
    expect(missing.error).to.equal(MISSING_CONTEXT);
    const res = await h.write('datakey/plaintext/d', { context: b64('tenant') });
    const opened = await h.write('decrypt/d', { ciphertext: res.data.ciphertext, context: b64('tenant') });
    expect(opened.data.plaintext).to.equal(res.data.plaintext);
    const bad = await h.write('datakey/plaintext/d', { context: 'no good' });
    expect(bad.status).to.equal(400);
    expect(bad.error).to.match(/^unable to decode context as base64/);
  });

  it('refuses a nonce for keys made here with a 400 (Vault answers 500)', async () => {
    const res = await h.write('datakey/plaintext/k', { nonce: b64(Buffer.alloc(12)) });
    expect(res.status).to.equal(400);
    expect(res.error).to.equal('provided nonce not allowed for this key');
    const bad = await h.write('datakey/plaintext/k', { nonce: '@@' });
    expect(bad.error).to.match(/^unable to decode nonce as base64/);
  });

  it('encrypts with key_version when given and refuses versions outside the rules', async () => {
    await h.write('keys/k/rotate');
    expect((await h.write('datakey/wrapped/k')).data.key_version).to.equal(2);
    expect((await h.write('datakey/wrapped/k', { key_version: 1 })).data.key_version).to.equal(1);
    await h.write('keys/k/config', { min_encryption_version: 2 });
    const old = await h.write('datakey/wrapped/k', { key_version: 1 });
    expect(old.status).to.equal(400);
    expect(old.error).to.equal('requested version for encryption is less than the minimum encryption key version');
  });

  it('wraps data keys with RSA keys (OAEP, or PKCS#1 v1.5 when asked)', async function () {
    this.timeout(60000);
    await h.write('keys/r', { type: 'rsa-2048' });
    for (const padding_scheme of [undefined, 'pkcs1v15']) {
      const res = await h.write('datakey/plaintext/r', { bits: 512, padding_scheme });
      expect(res.status, res.error).to.equal(200);
      const opened = await h.write('decrypt/r', { ciphertext: res.data.ciphertext, padding_scheme });
      expect(opened.data.plaintext).to.equal(res.data.plaintext);
    }
    const aes = await h.write('datakey/plaintext/k', { padding_scheme: 'oaep' });
    expect(aes.status).to.equal(400);
    expect(aes.error).to.equal('padding_scheme invalid: unsupported key type aes256-gcm96 for padding scheme');
  });

  it('refuses keys that cannot encrypt', async () => {
    await h.write('keys/e', { type: 'ed25519' });
    const res = await h.write('datakey/plaintext/e');
    expect(res.status).to.equal(400);
    expect(res.error).to.equal('message encryption not supported for key type ed25519');
  });

  it('seals the data key with associated_data: decrypt opens it only with the same associated_data', async () => {
    const aad = b64('tenant-42');
    for (const type of ['aes256-gcm96', 'aes128-gcm96', 'chacha20-poly1305']) {
      await h.write(`keys/${type}`, { type });
      const res = await h.write(`datakey/plaintext/${type}`, { associated_data: aad });
      expect(res.status, res.error).to.equal(200);
      const without = await h.write(`decrypt/${type}`, { ciphertext: res.data.ciphertext });
      expect(without.status, type).to.equal(400);
      expect(without.error, type).to.match(/message authentication failed$/);
      const wrong = await h.write(`decrypt/${type}`, { ciphertext: res.data.ciphertext, associated_data: b64('tenant-43') });
      expect(wrong.status, type).to.equal(400);
      expect(wrong.error, type).to.match(/message authentication failed$/);
      const right = await h.write(`decrypt/${type}`, { ciphertext: res.data.ciphertext, associated_data: aad });
      expect(right.status, type).to.equal(200);
      expect(right.data.plaintext, type).to.equal(res.data.plaintext);
    }
  });

  it('seals a wrapped data key of a derived key with associated_data too', async () => {
    await h.write('keys/d', { derived: true });
    const context = b64('ctx');
    const res = await h.write('datakey/wrapped/d', { context, associated_data: b64('aad') });
    expect(res.status, res.error).to.equal(200);
    expect((await h.write('decrypt/d', { ciphertext: res.data.ciphertext, context })).status).to.equal(400);
    const opened = await h.write('decrypt/d', { ciphertext: res.data.ciphertext, context, associated_data: b64('aad') });
    expect(opened.status, opened.error).to.equal(200);
    expect(Buffer.from(opened.data.plaintext, 'base64')).to.have.length(32);
  });

  it('without associated_data, decrypt opens the data key without it, and refuses one given only there', async () => {
    const res = await h.write('datakey/plaintext/k');
    expect((await h.write('decrypt/k', { ciphertext: res.data.ciphertext })).data.plaintext).to.equal(res.data.plaintext);
    expect((await h.write('decrypt/k', { ciphertext: res.data.ciphertext, associated_data: b64('x') })).status).to.equal(400);
  });

  it('refuses associated_data for key types without AEAD, and associated_data that is not base64', async function () {
    this.timeout(60000);
    await h.write('keys/r', { type: 'rsa-2048' });
    const rsa = await h.write('datakey/plaintext/r', { associated_data: b64('aad') });
    expect(rsa.status).to.equal(400);
    expect(rsa.error).to.equal("'[0].associated_data' provided for non-AEAD cipher suite rsa-2048");
    const bad = await h.write('datakey/plaintext/k', { associated_data: 'no good' });
    expect(bad.status).to.equal(400);
    expect(bad.error).to.match(/^unable to decode associated_data as base64/);
  });

  it('describes every field it accepts', () => {
    const fields = Object.keys((h.backend.help('datakey/plaintext/k').openapi as any).paths['datakey/{type}/{name}'].fields);
    expect(fields).to.include.members(['type', 'name', 'context', 'associated_data', 'nonce', 'bits', 'key_version']);
  });
});
