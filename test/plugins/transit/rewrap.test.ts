import { expect } from 'chai';
import { MISSING_CONTEXT } from '../../../plugins/transit/crypto/derive.js';
import { TransitHarness, type HarnessResult } from './harness.js';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

function batchResults(res: HarnessResult): any[] {
  return (res.response?.raw ? res.data.data : res.data).batch_results;
}

async function encrypt(h: TransitHarness, name: string, data: Record<string, unknown>): Promise<string> {
  const res = await h.write(`encrypt/${name}`, data);
  expect(res.status, res.error).to.equal(200);
  return res.data.ciphertext;
}

async function decrypt(h: TransitHarness, name: string, data: Record<string, unknown>): Promise<string> {
  const res = await h.write(`decrypt/${name}`, data);
  expect(res.status, res.error).to.equal(200);
  return Buffer.from(res.data.plaintext, 'base64').toString();
}

describe('transit rewrap', () => {
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
    await h.write('keys/k');
  });

  it('re-encrypts an old ciphertext with the latest version and never returns the plaintext', async () => {
    const old = await encrypt(h, 'k', { plaintext: b64('keep me') });
    await h.write('keys/k/rotate');
    const res = await h.write('rewrap/k', { ciphertext: old });
    expect(res.status).to.equal(200);
    expect(res.data).to.have.keys('ciphertext', 'key_version');
    expect(res.data.key_version).to.equal(2);
    expect(res.data.ciphertext).to.match(/^vault:v2:/);
    expect(JSON.stringify(res.data)).to.not.include(b64('keep me'));
    expect(await decrypt(h, 'k', { ciphertext: res.data.ciphertext })).to.equal('keep me');
  });

  it('lets old versions be retired once their ciphertexts are rewrapped', async () => {
    const old = await encrypt(h, 'k', { plaintext: b64('x') });
    await h.write('keys/k/rotate');
    const rewrapped = (await h.write('rewrap/k', { ciphertext: old })).data.ciphertext;
    await h.write('keys/k/config', { min_decryption_version: 2 });
    expect((await h.write('decrypt/k', { ciphertext: old })).error).to.equal('ciphertext or signature version is disallowed by policy (too old)');
    expect(await decrypt(h, 'k', { ciphertext: rewrapped })).to.equal('x');
    expect((await h.write('rewrap/k', { ciphertext: old })).error).to.equal('ciphertext or signature version is disallowed by policy (too old)');
  });

  it('re-encrypts with key_version when given, within the encryption version rules', async () => {
    const v1 = await encrypt(h, 'k', { plaintext: b64('x') });
    await h.write('keys/k/rotate');
    await h.write('keys/k/rotate');
    const to2 = await h.write('rewrap/k', { ciphertext: v1, key_version: 2 });
    expect(to2.data.key_version).to.equal(2);
    const tooNew = await h.write('rewrap/k', { ciphertext: v1, key_version: 9 });
    expect(tooNew.status).to.equal(400);
    expect(tooNew.error).to.equal('requested version for encryption is higher than the latest key version');
  });

  it('encrypts a ciphertext already at the latest version again with a fresh nonce', async () => {
    const current = await encrypt(h, 'k', { plaintext: b64('x') });
    const res = await h.write('rewrap/k', { ciphertext: current });
    expect(res.data.ciphertext).to.match(/^vault:v1:/).and.not.equal(current);
    expect(await decrypt(h, 'k', { ciphertext: res.data.ciphertext })).to.equal('x');
  });

  it('needs the context for a derived key and keeps the ciphertext bound to it', async () => {
    await h.write('keys/d', { derived: true });
    const old = await encrypt(h, 'd', { plaintext: b64('x'), context: b64('ctx') });
    await h.write('keys/d/rotate');
    const missing = await h.write('rewrap/d', { ciphertext: old });
    expect(missing.status).to.equal(400);
    expect(missing.error).to.equal(MISSING_CONTEXT);
    const res = await h.write('rewrap/d', { ciphertext: old, context: b64('ctx') });
    expect(await decrypt(h, 'd', { ciphertext: res.data.ciphertext, context: b64('ctx') })).to.equal('x');
  });

  it('keeps a convergent ciphertext convergent: rewrapping gives what encrypting with the new version gives', async () => {
    await h.write('keys/c', { derived: true, convergent_encryption: true });
    const old = await encrypt(h, 'c', { plaintext: b64('x'), context: b64('ctx') });
    await h.write('keys/c/rotate');
    const rewrapped = await h.write('rewrap/c', { ciphertext: old, context: b64('ctx') });
    expect(rewrapped.data.ciphertext).to.equal(await encrypt(h, 'c', { plaintext: b64('x'), context: b64('ctx') }));
  });

  it('rewraps ciphertexts made with associated data when given the same associated data', async () => {
    const old = await encrypt(h, 'k', { plaintext: b64('x'), associated_data: b64('ad') });
    await h.write('keys/k/rotate');
    const without = await h.write('rewrap/k', { ciphertext: old });
    expect(without.error).to.equal('cipher: message authentication failed');
    const res = await h.write('rewrap/k', { ciphertext: old, associated_data: b64('ad') });
    expect(await decrypt(h, 'k', { ciphertext: res.data.ciphertext, associated_data: b64('ad') })).to.equal('x');
  });

  it('refuses a nonce for keys made here', async () => {
    const old = await encrypt(h, 'k', { plaintext: b64('x') });
    const res = await h.write('rewrap/k', { ciphertext: old, nonce: b64(Buffer.alloc(12)) });
    expect(res.status).to.equal(400);
    expect(res.error).to.equal('provided nonce not allowed for this key');
  });

  it('answers 400 for a missing ciphertext, a missing key and a malformed ciphertext', async () => {
    expect((await h.write('rewrap/k', {})).error).to.equal('missing ciphertext to decrypt');
    expect((await h.write('rewrap/none', { ciphertext: 'vault:v1:AAAA' })).error).to.equal('encryption key not found');
    const bad = await h.write('rewrap/k', { ciphertext: 'v1:AAAA' });
    expect(bad.status).to.equal(400);
    expect(bad.error).to.equal('invalid ciphertext: no prefix');
  });

  it('rewraps RSA ciphertexts between padding schemes', async function () {
    this.timeout(60000);
    await h.write('keys/r', { type: 'rsa-2048' });
    const old = await encrypt(h, 'r', { plaintext: b64('x'), padding_scheme: 'pkcs1v15' });
    await h.write('keys/r/rotate');
    const res = await h.write('rewrap/r', { ciphertext: old, decrypt_padding_scheme: 'pkcs1v15', encrypt_padding_scheme: 'oaep' });
    expect(res.status, res.error).to.equal(200);
    expect(res.data.key_version).to.equal(2);
    expect(await decrypt(h, 'r', { ciphertext: res.data.ciphertext })).to.equal('x');
    const aes = await h.write('rewrap/k', { ciphertext: old, decrypt_padding_scheme: 'oaep' });
    expect(aes.error).to.equal('decrypt_padding_scheme invalid: unsupported key type aes256-gcm96 for padding scheme');
  });

  describe('batch_input', () => {
    it('rewraps every item in input order with references, failing items on their own', async () => {
      const a = await encrypt(h, 'k', { plaintext: b64('a') });
      const b = await encrypt(h, 'k', { plaintext: b64('b') });
      await h.write('keys/k/rotate');
      const res = await h.write('rewrap/k', {
        batch_input: [{ ciphertext: a, reference: 'A' }, { ciphertext: 'nope', reference: 'bad' }, { ciphertext: b, key_version: 1 }],
      });
      // Rewrap batches answer like encrypt and decrypt; Vault always answers 200 (docs/transit.md, "Batches").
      expect(res.status).to.equal(400);
      const results = batchResults(res);
      expect(results[0]).to.include({ key_version: 2, reference: 'A' });
      expect(results[1]).to.deep.equal({ error: 'invalid ciphertext: no prefix', reference: 'bad' });
      expect(results[2]).to.include({ key_version: 1, reference: '' });
      expect(await decrypt(h, 'k', { ciphertext: results[0].ciphertext })).to.equal('a');
      expect(await decrypt(h, 'k', { ciphertext: results[2].ciphertext })).to.equal('b');
      expect(JSON.stringify(results)).to.not.include('plaintext');
    });

    it('answers 200 when all succeed and partial_failure_response_code when some fail', async () => {
      const a = await encrypt(h, 'k', { plaintext: b64('a') });
      expect((await h.write('rewrap/k', { batch_input: [{ ciphertext: a }] })).status).to.equal(200);
      const partial = await h.write('rewrap/k', { partial_failure_response_code: 207, batch_input: [{ ciphertext: a }, { ciphertext: 'x' }] });
      expect(partial.status).to.equal(207);
    });

    it('refuses an empty batch and mixed contexts', async () => {
      expect((await h.write('rewrap/k', { batch_input: [] })).error).to.equal('missing batch input to process');
      const mixed = await h.write('rewrap/k', { batch_input: [{ ciphertext: 'a', context: b64('c') }, { ciphertext: 'b' }] });
      expect(mixed.error).to.equal('context should be set either in all the request blocks or in none');
    });

    it('rewraps a large derived batch, each item with its own context', async () => {
      await h.write('keys/d', { derived: true });
      const items = Array.from({ length: 200 }, (_, i) => ({ plaintext: b64(`p${i}`), context: b64(`c${i}`) }));
      const sealed = batchResults(await h.write('encrypt/d', { batch_input: items }));
      await h.write('keys/d/rotate');
      const res = await h.write('rewrap/d', { batch_input: sealed.map((s, i) => ({ ciphertext: s.ciphertext, context: items[i]!.context })) });
      expect(res.status).to.equal(200);
      const rewrapped = batchResults(res);
      expect(rewrapped.every((r) => r.key_version === 2)).to.equal(true);
      const opened = batchResults(await h.write('decrypt/d', { batch_input: rewrapped.map((r, i) => ({ ciphertext: r.ciphertext, context: items[i]!.context })) }));
      expect(opened.map((o) => o.plaintext)).to.deep.equal(items.map((i) => i.plaintext));
    });
  });

  it('describes every field it accepts', () => {
    const fields = Object.keys((h.backend.help('rewrap/k').openapi as any).paths['rewrap/{name}'].fields);
    expect(fields).to.include.members(['name', 'ciphertext', 'context', 'key_version', 'nonce', 'reference', 'batch_input']);
  });
});
