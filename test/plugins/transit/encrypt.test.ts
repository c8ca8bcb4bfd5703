import { expect } from 'chai';
import { WasmCrypto } from '../../../wasm/index.js';
import { KeyStore } from '../../../plugins/transit/keys/key-store.js';
import { MISSING_CONTEXT } from '../../../plugins/transit/crypto/derive.js';
import { TransitHarness, sharedWasm, type HarnessResult } from './harness.js';
import { authorizedRequest, prepareRequest, type DirectRequest } from '../../helpers/backend.js';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const CIPHERTEXT = /^vault:v\d+:[A-Za-z0-9+/]+={0,2}$/;

/** batch_results of an answer, whether it came as a normal 200 or in the envelope of a 4xx/5xx. */
function batchResults(res: HarnessResult): any[] {
  return (res.response?.raw ? res.data.data : res.data).batch_results;
}

async function decrypt(h: TransitHarness, name: string, data: Record<string, unknown>): Promise<string> {
  const res = await h.write(`decrypt/${name}`, data);
  expect(res.status, res.error).to.equal(200);
  return Buffer.from(res.data.plaintext, 'base64').toString();
}

describe('transit encrypt', () => {
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
  });

  describe('single plaintext', () => {
    it('returns a vault:v1: ciphertext and the key version, and decrypt gives the plaintext back', async () => {
      await h.write('keys/k');
      const res = await h.write('encrypt/k', { plaintext: b64('the quick brown fox') });
      expect(res.status).to.equal(200);
      expect(res.data.ciphertext).to.match(CIPHERTEXT).and.match(/^vault:v1:/);
      expect(res.data.key_version).to.equal(1);
      expect(await decrypt(h, 'k', { ciphertext: res.data.ciphertext })).to.equal('the quick brown fox');
    });

    it('encrypts an empty plaintext given as ""', async () => {
      await h.write('keys/k');
      const res = await h.write('encrypt/k', { plaintext: '' });
      expect(res.status, res.error).to.equal(200);
      expect(await decrypt(h, 'k', { ciphertext: res.data.ciphertext })).to.equal('');
    });

    it('answers 400 "missing plaintext to encrypt" without plaintext or batch_input', async () => {
      await h.write('keys/k');
      const res = await h.write('encrypt/k', {});
      expect(res.status).to.equal(400);
      expect(res.error).to.equal('missing plaintext to encrypt');
    });

    it('refuses plaintext that is not padded standard base64, naming the field', async () => {
      await h.write('keys/k');
      for (const bad of ['aGVsbG8', 'a-_b', 'not base64!']) {
        const res = await h.write('encrypt/k', { plaintext: bad });
        expect(res.status, bad).to.equal(400);
        expect(res.error).to.match(/^unable to decode plaintext as base64: illegal base64 data at input byte \d+$/);
      }
    });

    it('uses a fresh random nonce for every encryption of the same plaintext', async () => {
      await h.write('keys/k');
      const one = await h.write('encrypt/k', { plaintext: b64('same') });
      const two = await h.write('encrypt/k', { plaintext: b64('same') });
      expect(one.data.ciphertext).to.not.equal(two.data.ciphertext);
    });

    it('encrypts with every AEAD key type and decrypts back', async () => {
      for (const type of ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305']) {
        await h.write(`keys/${type}`, { type });
        const res = await h.write(`encrypt/${type}`, { plaintext: b64(`secret for ${type}`) });
        expect(res.status, type).to.equal(200);
        expect(await decrypt(h, type, { ciphertext: res.data.ciphertext })).to.equal(`secret for ${type}`);
      }
    });

    it('refuses key types that cannot encrypt', async () => {
      for (const type of ['ed25519', 'ecdsa-p256', 'hmac']) {
        await h.write(`keys/${type}`, { type });
        const res = await h.write(`encrypt/${type}`, { plaintext: b64('x') });
        expect(res.status, type).to.equal(400);
        expect(res.error).to.equal(`message encryption not supported for key type ${type}`);
      }
    });
    it('answers a single plaintext as a batch of one would: the same error, key_version and ciphertext form', async () => {
      await h.write('keys/aes256');
      await h.write('keys/aes256/rotate');
      await h.write('keys/aes128', { type: 'aes128-gcm96' });
      await h.write('keys/chacha', { type: 'chacha20-poly1305' });
      await h.write('keys/rsa', { type: 'rsa-2048' });
      await h.write('keys/derived', { derived: true });
      await h.write('keys/convergent', { derived: true, convergent_encryption: true });
      const cases: [string, Record<string, string | number>][] = [
        ['aes256', { plaintext: b64('x') }],
        ['aes256', { plaintext: '' }],
        // Past the 256 bytes up to which a single item takes its own sealing path.
        ['aes256', { plaintext: b64('y'.repeat(300)) }],
        ['aes256', { plaintext: b64('x'), key_version: 1 }],
        ['aes256', { plaintext: b64('x'), key_version: 3 }],
        ['aes256', { plaintext: b64('x'), key_version: -1 }],
        ['aes256', { plaintext: b64('x'), associated_data: b64('row 1') }],
        ['aes256', { plaintext: b64('x'), associated_data: '%%%' }],
        ['aes256', { plaintext: b64('x'), nonce: b64(Buffer.alloc(12)) }],
        ['aes256', { plaintext: 'not base64!' }],
        ['aes256', { plaintext: b64('x'), padding_scheme: 'oaep' }],
        ['aes128', { plaintext: b64('x'), context: b64('ignored') }],
        ['chacha', { plaintext: b64('x'), associated_data: b64('row 1') }],
        ['rsa', { plaintext: b64('x'), padding_scheme: 'pkcs1v15' }],
        ['rsa', { plaintext: b64('x'), associated_data: b64('row 1') }],
        ['rsa', { plaintext: b64(Buffer.alloc(191)) }],
        ['derived', { plaintext: b64('x') }],
        ['derived', { plaintext: b64('x'), context: b64('tenant') }],
        ['convergent', { plaintext: b64('x'), context: b64('tenant') }],
      ];
      for (const [key, fields] of cases) {
        const label = `${key} ${JSON.stringify(fields)}`;
        const single = await h.write(`encrypt/${key}`, fields);
        const batch = await h.write(`encrypt/${key}`, { batch_input: [fields] });
        const [item] = batchResults(batch);
        if (item.error !== undefined) {
          expect(single.status, label).to.equal(batch.status);
          // The one difference: a batch names the item's padding_scheme with its index.
          expect(single.error, label).to.equal(item.error.replace("'[0].padding_scheme'", 'padding_scheme'));
          continue;
        }
        expect(single.status, label).to.equal(200);
        expect(single.data.key_version, label).to.equal(item.key_version);
        expect(single.data.ciphertext, label).to.match(CIPHERTEXT);
        expect(single.data.ciphertext.slice(0, 9), label).to.equal(item.ciphertext.slice(0, 9));
        expect(single.data.ciphertext.length, label).to.equal(item.ciphertext.length);
        if (key === 'convergent') expect(single.data.ciphertext, label).to.equal(item.ciphertext);
        const { plaintext, ...opening } = fields;
        delete opening.key_version;
        const back = await h.write(`decrypt/${key}`, { ...opening, ciphertext: single.data.ciphertext });
        expect(back.data.plaintext, label).to.equal(plaintext);
      }
    });
  });

  describe('associated data', () => {
    it('binds the ciphertext to associated_data: decrypt needs the same value', async () => {
      await h.write('keys/k');
      const res = await h.write('encrypt/k', { plaintext: b64('payload'), associated_data: b64('row 17') });
      expect(await decrypt(h, 'k', { ciphertext: res.data.ciphertext, associated_data: b64('row 17') })).to.equal('payload');
      const wrong = await h.write('decrypt/k', { ciphertext: res.data.ciphertext, associated_data: b64('row 18') });
      expect(wrong.status).to.equal(400);
      expect(wrong.error).to.equal('cipher: message authentication failed');
      const none = await h.write('decrypt/k', { ciphertext: res.data.ciphertext });
      expect(none.error).to.equal('cipher: message authentication failed');
    });

    it('answers 400 naming associated_data when it is not base64 (Vault answers 500)', async () => {
      await h.write('keys/k');
      const res = await h.write('encrypt/k', { plaintext: b64('x'), associated_data: '%%%' });
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/^unable to decode associated_data as base64/);
    });

    it('refuses associated_data on a non-AEAD key', async () => {
      await h.write('keys/r', { type: 'rsa-2048' });
      const res = await h.write('encrypt/r', { plaintext: b64('x'), associated_data: b64('ad') });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal("'[0].associated_data' provided for non-AEAD cipher suite rsa-2048");
    });
  });

  describe('key versions', () => {
    beforeEach(async () => {
      await h.write('keys/k');
      await h.write('keys/k/rotate');
      await h.write('keys/k/rotate');
    });

    it('encrypts with the latest version by default and with key_version when given', async () => {
      const latest = await h.write('encrypt/k', { plaintext: b64('x') });
      expect(latest.data.key_version).to.equal(3);
      expect(latest.data.ciphertext).to.match(/^vault:v3:/);
      const older = await h.write('encrypt/k', { plaintext: b64('x'), key_version: 2 });
      expect(older.data.key_version).to.equal(2);
      expect(older.data.ciphertext).to.match(/^vault:v2:/);
      expect(await decrypt(h, 'k', { ciphertext: older.data.ciphertext })).to.equal('x');
    });

    it('accepts key_version as a numeric string', async () => {
      const res = await h.write('encrypt/k', { plaintext: b64('x'), key_version: '1' });
      expect(res.data.key_version).to.equal(1);
    });

    it('refuses a key_version above the latest, below min_encryption_version, or negative', async () => {
      const above = await h.write('encrypt/k', { plaintext: b64('x'), key_version: 4 });
      expect(above.status).to.equal(400);
      expect(above.error).to.equal('requested version for encryption is higher than the latest key version');
      const negative = await h.write('encrypt/k', { plaintext: b64('x'), key_version: -1 });
      expect(negative.error).to.equal('requested version for encryption is negative');
      await h.write('keys/k/config', { min_encryption_version: 2 });
      const below = await h.write('encrypt/k', { plaintext: b64('x'), key_version: 1 });
      expect(below.status).to.equal(400);
      expect(below.error).to.equal('requested version for encryption is less than the minimum encryption key version');
    });
  });

  describe('derived and convergent keys', () => {
    it('needs a context for a derived key', async () => {
      await h.write('keys/d', { derived: true });
      const res = await h.write('encrypt/d', { plaintext: b64('x') });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal(MISSING_CONTEXT);
    });

    it('derives a key per context: another context does not decrypt', async () => {
      await h.write('keys/d', { derived: true });
      const res = await h.write('encrypt/d', { plaintext: b64('x'), context: b64('tenant-1') });
      expect(await decrypt(h, 'd', { ciphertext: res.data.ciphertext, context: b64('tenant-1') })).to.equal('x');
      const other = await h.write('decrypt/d', { ciphertext: res.data.ciphertext, context: b64('tenant-2') });
      expect(other.status).to.equal(400);
      expect(other.error).to.equal('cipher: message authentication failed');
    });

    it('ignores a context for a key that is not derived', async () => {
      await h.write('keys/k');
      const res = await h.write('encrypt/k', { plaintext: b64('x'), context: b64('ignored') });
      expect(await decrypt(h, 'k', { ciphertext: res.data.ciphertext })).to.equal('x');
    });

    it('refuses a context that is not base64, naming the field', async () => {
      await h.write('keys/d', { derived: true });
      const res = await h.write('encrypt/d', { plaintext: b64('x'), context: 'abc' });
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/^unable to decode context as base64/);
    });

    it('gives the same ciphertext for the same plaintext and context with a convergent key', async () => {
      await h.write('keys/c', { derived: true, convergent_encryption: true });
      const one = await h.write('encrypt/c', { plaintext: b64('ssn 123'), context: b64('ctx') });
      const two = await h.write('encrypt/c', { plaintext: b64('ssn 123'), context: b64('ctx') });
      const other = await h.write('encrypt/c', { plaintext: b64('ssn 123'), context: b64('ctx2') });
      const different = await h.write('encrypt/c', { plaintext: b64('ssn 124'), context: b64('ctx') });
      expect(one.data.ciphertext).to.equal(two.data.ciphertext);
      expect(other.data.ciphertext).to.not.equal(one.data.ciphertext);
      expect(different.data.ciphertext).to.not.equal(one.data.ciphertext);
      expect(await decrypt(h, 'c', { ciphertext: one.data.ciphertext, context: b64('ctx') })).to.equal('ssn 123');
    });

    it('refuses a nonce for keys made here (random nonces, or convergent version 3)', async () => {
      await h.write('keys/k');
      await h.write('keys/c', { derived: true, convergent_encryption: true });
      const nonce = b64(Buffer.alloc(12, 7));
      const plain = await h.write('encrypt/k', { plaintext: b64('x'), nonce });
      expect(plain.status).to.equal(400);
      expect(plain.error).to.equal('provided nonce not allowed for this key');
      const convergent = await h.write('encrypt/c', { plaintext: b64('x'), context: b64('ctx'), nonce });
      expect(convergent.error).to.equal('provided nonce not allowed for this key');
    });

    it('refuses a nonce that is not base64, naming the field', async () => {
      await h.write('keys/k');
      const res = await h.write('encrypt/k', { plaintext: b64('x'), nonce: '***' });
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/^unable to decode nonce as base64/);
    });
  });

  describe('RSA keys', () => {
    it('encrypt with OAEP by default and with PKCS#1 v1.5 when asked', async () => {
      await h.write('keys/r', { type: 'rsa-2048' });
      const oaep = await h.write('encrypt/r', { plaintext: b64('rsa secret') });
      expect(oaep.status, oaep.error).to.equal(200);
      expect(await decrypt(h, 'r', { ciphertext: oaep.data.ciphertext })).to.equal('rsa secret');
      const pkcs1 = await h.write('encrypt/r', { plaintext: b64('rsa secret'), padding_scheme: 'pkcs1v15' });
      expect(await decrypt(h, 'r', { ciphertext: pkcs1.data.ciphertext, padding_scheme: 'pkcs1v15' })).to.equal('rsa secret');
    });

    it('answers 400 for a plaintext too long for the modulus (Vault answers 500)', async () => {
      await h.write('keys/r', { type: 'rsa-2048' });
      const res = await h.write('encrypt/r', { plaintext: b64(Buffer.alloc(191)) });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal('failed to RSA encrypt the plaintext: crypto/rsa: message too long for RSA key size');
      const fits = await h.write('encrypt/r', { plaintext: b64(Buffer.alloc(190)) });
      expect(fits.status).to.equal(200);
    });

    it('refuses padding_scheme for keys that are not RSA, and unknown schemes', async () => {
      await h.write('keys/k');
      const aes = await h.write('encrypt/k', { plaintext: b64('x'), padding_scheme: 'oaep' });
      expect(aes.status).to.equal(400);
      expect(aes.error).to.equal('padding_scheme invalid: unsupported key type aes256-gcm96 for padding scheme');
      const unknown = await h.write('encrypt/k', { plaintext: b64('x'), padding_scheme: 'none' });
      expect(unknown.status).to.equal(400);
      expect(unknown.error).to.match(/padding_scheme/);
    });
  });

  describe('batch_input', () => {
    beforeEach(async () => {
      await h.write('keys/k');
    });

    it('encrypts every item in input order and echoes each reference', async () => {
      const items = ['a', 'b', 'c', 'd'].map((text, i) => ({ plaintext: b64(text), reference: `ref-${i}` }));
      const res = await h.write('encrypt/k', { batch_input: items });
      expect(res.status).to.equal(200);
      const results = batchResults(res);
      expect(results).to.have.length(4);
      for (const [i, result] of results.entries()) {
        expect(result).to.have.keys('ciphertext', 'key_version', 'reference');
        expect(result.reference).to.equal(`ref-${i}`);
        expect(await decrypt(h, 'k', { ciphertext: result.ciphertext })).to.equal(['a', 'b', 'c', 'd'][i]);
      }
    });

    it('gives every result a reference: its own, else the request reference, else ""', async () => {
      const res = await h.write('encrypt/k', { batch_input: [{ plaintext: b64('a'), reference: 'own' }, { plaintext: b64('b') }] });
      expect(batchResults(res).map((r) => r.reference)).to.deep.equal(['own', '']);
      const withDefault = await h.write('encrypt/k', { reference: 'request', batch_input: [{ plaintext: b64('a'), reference: 'own' }, { plaintext: b64('b') }] });
      expect(batchResults(withDefault).map((r) => r.reference)).to.deep.equal(['own', 'request']);
    });

    it('ignores the top-level plaintext, context, nonce and key_version', async () => {
      await h.write('keys/k/rotate');
      const res = await h.write('encrypt/k', { plaintext: '!!', nonce: '!!', context: b64('c'), key_version: 1, batch_input: [{ plaintext: b64('item') }] });
      expect(res.status, res.error).to.equal(200);
      const [only] = batchResults(res);
      expect(only.key_version).to.equal(2);
      expect(await decrypt(h, 'k', { ciphertext: only.ciphertext })).to.equal('item');
    });

    it('takes key_version per item', async () => {
      await h.write('keys/k/rotate');
      const res = await h.write('encrypt/k', { batch_input: [{ plaintext: b64('a'), key_version: 1 }, { plaintext: b64('b') }, { plaintext: b64('c'), key_version: '1' }] });
      expect(batchResults(res).map((r) => r.key_version)).to.deep.equal([1, 2, 1]);
    });

    it('writes batch_results as the results are, whatever the mix of failures, versions and references', async () => {
      await h.write('keys/k/rotate');
      // Failures first, last, in a row and alone; versions and references changing and repeating.
      const pattern = ['bad', 'bad', 'v1', 'v1', 'v2', 'bad', 'v2', 'v2r', 'v2r', 'v1r', 'bad', 'v1', 'v1', 'bad'];
      const items = pattern.map((kind, i) => ({
        plaintext: kind === 'bad' ? 'not base64!' : b64(`item ${i}`),
        key_version: kind.startsWith('v2') ? 2 : 1,
        ...(kind.endsWith('r') ? { reference: `ref-${kind}` } : {}),
      }));
      const res = await h.write('encrypt/k', { batch_input: items, reference: 'request-ref' });
      expect(res.status).to.equal(400);
      const results = batchResults(res);
      expect(results).to.have.length(pattern.length);
      pattern.forEach((kind, i) => {
        const result = results[i];
        expect(result.reference, `item ${i}`).to.equal(kind.endsWith('r') ? `ref-${kind}` : 'request-ref');
        if (kind === 'bad') {
          expect(Object.keys(result).sort(), `item ${i}`).to.deep.equal(['error', 'reference']);
          expect(result.error).to.match(/^unable to decode plaintext as base64/);
        } else {
          expect(Object.keys(result).sort(), `item ${i}`).to.deep.equal(['ciphertext', 'key_version', 'reference']);
          expect(result.key_version, `item ${i}`).to.equal(kind.startsWith('v2') ? 2 : 1);
          expect(result.ciphertext).to.match(new RegExp(`^vault:v${result.key_version}:`));
        }
      });
      const back = await h.write('decrypt/k', { batch_input: results.filter((r: any) => r.ciphertext).map((r: any) => ({ ciphertext: r.ciphertext })) });
      expect(batchResults(back).map((r: any) => Buffer.from(r.plaintext, 'base64').toString())).to.deep.equal(
        pattern.flatMap((kind, i) => (kind === 'bad' ? [] : [`item ${i}`])),
      );
    });

    it('gives a failed item an error, the others their ciphertext, and answers 400', async () => {
      const res = await h.write('encrypt/k', {
        batch_input: [{ plaintext: b64('ok'), reference: 'good' }, { plaintext: 'bad!', reference: 'bad' }, { reference: 'missing' }, { plaintext: b64('x'), key_version: 'one' }],
      });
      expect(res.status).to.equal(400);
      const results = batchResults(res);
      expect(results[0]).to.have.keys('ciphertext', 'key_version', 'reference');
      expect(results[1]).to.deep.equal({ error: 'unable to decode plaintext as base64: illegal base64 data at input byte 3', reference: 'bad' });
      expect(results[2]).to.deep.equal({ error: 'missing plaintext to encrypt', reference: 'missing' });
      expect(results[3].error).to.match(/key_version/);
    });

    it('answers partial_failure_response_code when some items fail and at least one succeeds', async () => {
      const res = await h.write('encrypt/k', { partial_failure_response_code: 207, batch_input: [{ plaintext: b64('ok') }, { plaintext: '!' }] });
      expect(res.status).to.equal(207);
      expect(batchResults(res)[0].ciphertext).to.match(CIPHERTEXT);
    });

    it('answers 400 when every item fails, whatever partial_failure_response_code says', async () => {
      const res = await h.write('encrypt/k', { partial_failure_response_code: 207, batch_input: [{ plaintext: '!' }, { plaintext: '?' }] });
      expect(res.status).to.equal(400);
      expect(batchResults(res)).to.have.length(2);
    });

    it('keeps 400 and warns when partial_failure_response_code is not an HTTP status', async () => {
      const res = await h.write('encrypt/k', { partial_failure_response_code: 700, batch_input: [{ plaintext: b64('ok') }, { plaintext: '!' }] });
      expect(res.status).to.equal(400);
      expect(res.warnings).to.deep.equal(['invalid HTTP response code override from partial_failure_response_code, reverting to 400']);
    });

    it('answers 200 when every item succeeds, even with partial_failure_response_code', async () => {
      const res = await h.write('encrypt/k', { partial_failure_response_code: 207, batch_input: [{ plaintext: b64('ok') }] });
      expect(res.status).to.equal(200);
    });

    it('refuses an empty batch_input', async () => {
      const res = await h.write('encrypt/k', { batch_input: [] });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal('missing batch input to process');
    });

    it('refuses a batch_input that is not a list of objects', async () => {
      for (const bad of ['nope', [1, 2], { plaintext: b64('x') }]) {
        const res = await h.write('encrypt/k', { batch_input: bad });
        expect(res.status).to.equal(400);
        expect(res.error).to.match(/batch_input/);
      }
    });

    it('accepts batch_input as a JSON-encoded list (vault write batch_input=@file)', async () => {
      const res = await h.write('encrypt/k', { batch_input: JSON.stringify([{ plaintext: b64('x') }]) });
      expect(res.status, res.error).to.equal(200);
      expect(batchResults(res)).to.have.length(1);
    });

    it('refuses a batch where only some items give a context', async () => {
      await h.write('keys/d', { derived: true });
      const res = await h.write('encrypt/d', { batch_input: [{ plaintext: b64('a'), context: b64('c') }, { plaintext: b64('b') }] });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal('context should be set either in all the request blocks or in none');
    });

    it('derives per item: each item decrypts with its own context only', async () => {
      await h.write('keys/d', { derived: true });
      const items = Array.from({ length: 20 }, (_, i) => ({ plaintext: b64(`p${i}`), context: b64(`c${i}`) }));
      const res = await h.write('encrypt/d', { batch_input: items });
      const results = batchResults(res);
      for (let i = 0; i < 20; i++) {
        expect(await decrypt(h, 'd', { ciphertext: results[i].ciphertext, context: b64(`c${i}`) })).to.equal(`p${i}`);
      }
      const wrong = await h.write('decrypt/d', { ciphertext: results[0].ciphertext, context: b64('c1') });
      expect(wrong.error).to.equal('cipher: message authentication failed');
    });

    it('reports a nonce per item as not allowed', async () => {
      const res = await h.write('encrypt/k', { batch_input: [{ plaintext: b64('a'), nonce: b64(Buffer.alloc(12)) }, { plaintext: b64('b') }] });
      expect(res.status).to.equal(400);
      expect(batchResults(res)[0].error).to.equal('provided nonce not allowed for this key');
      expect(batchResults(res)[1].ciphertext).to.match(CIPHERTEXT);
    });

    it('reports associated_data per item on a non-AEAD key with the item index', async () => {
      await h.write('keys/r', { type: 'rsa-2048' });
      const res = await h.write('encrypt/r', { batch_input: [{ plaintext: b64('a') }, { plaintext: b64('b'), associated_data: b64('ad') }] });
      expect(res.status).to.equal(400);
      expect(batchResults(res)[1].error).to.equal("'[1].associated_data' provided for non-AEAD cipher suite rsa-2048");
    });

    it('encrypts a batch of 1,000 items with one random fill, one AES-GCM call and per-version grouping', async () => {
      await h.write('keys/k/rotate');
      const wasm = await sharedWasm();
      const calls = { gcm: 0, nonces: 0 };
      const gcm = wasm.gcmSealBase64;
      const nonces = WasmCrypto.randomNonceBlock;
      wasm.gcmSealBase64 = function (this: WasmCrypto, ...args: Parameters<WasmCrypto['gcmSealBase64']>) {
        calls.gcm++;
        return gcm.apply(this, args);
      };
      WasmCrypto.randomNonceBlock = (count: number) => {
        calls.nonces++;
        return nonces(count);
      };
      try {
        const items = Array.from({ length: 1000 }, (_, i) => ({ plaintext: b64(`item ${i}`.padEnd(64, '.')) }));
        const res = await h.write('encrypt/k', { batch_input: items });
        expect(res.status).to.equal(200);
        expect(calls).to.deep.equal({ gcm: 1, nonces: 1 });
        const mixed = await h.write('encrypt/k', { batch_input: items.map((item, i) => ({ ...item, key_version: (i % 2) + 1 })) });
        expect(mixed.status).to.equal(200);
        expect(calls).to.deep.equal({ gcm: 3, nonces: 2 });
      } finally {
        delete (wasm as Partial<WasmCrypto>).gcmSealBase64;
        WasmCrypto.randomNonceBlock = nonces;
      }
    });

    it('derives the keys of a derived batch in one HKDF call and encrypts them in one AES-GCM call', async () => {
      await h.write('keys/d', { derived: true });
      const wasm = await sharedWasm();
      const calls = { gcm: 0, hkdf: 0 };
      const gcm = wasm.gcmSealBase64;
      const hkdf = wasm.hkdfSha256Batch;
      wasm.gcmSealBase64 = function (this: WasmCrypto, ...args: Parameters<WasmCrypto['gcmSealBase64']>) {
        calls.gcm++;
        return gcm.apply(this, args);
      };
      wasm.hkdfSha256Batch = function (this: WasmCrypto, ...args: Parameters<WasmCrypto['hkdfSha256Batch']>) {
        calls.hkdf++;
        return hkdf.apply(this, args);
      };
      try {
        const items = Array.from({ length: 500 }, (_, i) => ({ plaintext: b64('x'.repeat(64)), context: b64(`user-${i}`) }));
        const res = await h.write('encrypt/d', { batch_input: items });
        expect(res.status).to.equal(200);
        expect(calls).to.deep.equal({ gcm: 1, hkdf: 1 });
      } finally {
        delete (wasm as Partial<WasmCrypto>).gcmSealBase64;
        delete (wasm as Partial<WasmCrypto>).hkdfSha256Batch;
      }
    });
  });

  describe('upsert', () => {
    it('makes a POST a create when the key is missing and an update when it exists (existence check)', async () => {
      const prepare = (name: string) =>
        prepareRequest(h.backend, {
          id: 'r',
          operation: 'update',
          path: `encrypt/${name}`,
          data: { plaintext: b64('x') },
          storage: h.storage,
          mount: { path: 'transit/', type: 'transit', accessor: 'a', uuid: 'u' },
        });
      expect((await prepare('missing')).operation).to.equal('create');
      await h.write('keys/present');
      expect((await prepare('present')).operation).to.equal('update');
    });

    it('creates no key when every item of the request is malformed', async () => {
      expect((await h.write('encrypt/never-single', { plaintext: 'not base64!' })).status).to.equal(400);
      const batch = await h.write('encrypt/never-batch', { batch_input: [{ plaintext: '!' }, { reference: 'no plaintext' }] });
      expect(batch.status).to.equal(400);
      expect(batch.data.batch_results).to.have.length(2);
      expect((await h.read('keys/never-single')).status).to.equal(404);
      expect((await h.read('keys/never-batch')).status).to.equal(404);
    });

    it('creates a missing key (aes256-gcm96, not derived) on a create request', async () => {
      const res = await h.write('encrypt/new', { plaintext: b64('x') });
      expect(res.status).to.equal(200);
      expect(res.warnings).to.deep.equal([]);
      const key = await h.read('keys/new');
      expect(key.data).to.include({ type: 'aes256-gcm96', derived: false, latest_version: 1 });
      expect(await decrypt(h, 'new', { ciphertext: res.data.ciphertext })).to.equal('x');
    });

    it('creates the key type asked for by the request or by the batch items', async () => {
      await h.write('encrypt/a', { plaintext: b64('x'), type: 'chacha20-poly1305' });
      expect((await h.read('keys/a')).data.type).to.equal('chacha20-poly1305');
      await h.write('encrypt/b', { batch_input: [{ plaintext: b64('x'), type: 'aes128-gcm96' }, { plaintext: b64('y') }] });
      expect((await h.read('keys/b')).data.type).to.equal('aes128-gcm96');
    });

    it('refuses batch items that ask for different key types', async () => {
      const res = await h.write('encrypt/b', { batch_input: [{ plaintext: b64('x'), type: 'aes128-gcm96' }, { plaintext: b64('y'), type: 'aes256-gcm96' }] });
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/different values of type/);
      expect((await h.read('keys/b')).status).to.equal(404);
    });

    it('creates a derived key when the items carry a context, convergent when asked', async () => {
      await h.write('encrypt/d', { plaintext: b64('x'), context: b64('c') });
      expect((await h.read('keys/d')).data).to.include({ derived: true, convergent_encryption: false });
      const one = await h.write('encrypt/c', { plaintext: b64('x'), context: b64('c'), convergent_encryption: true });
      expect((await h.read('keys/c')).data).to.include({ derived: true, convergent_encryption: true });
      const two = await h.write('encrypt/c', { plaintext: b64('x'), context: b64('c') });
      expect(two.data.ciphertext).to.equal(one.data.ciphertext);
      await h.write('encrypt/c2', { batch_input: [{ plaintext: b64('x'), context: b64('c'), convergent_encryption: 'true' }] });
      expect((await h.read('keys/c2')).data.convergent_encryption).to.equal(true);
    });

    it('refuses convergent encryption without a context', async () => {
      const res = await h.write('encrypt/c', { plaintext: b64('x'), convergent_encryption: true });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal('convergent encryption requires derivation to be enabled, so context is required');
      expect((await h.read('keys/c')).status).to.equal(404);
    });

    it('creates RSA keys but refuses key types that cannot encrypt, unknown types and managed keys', async function () {
      this.timeout(60000);
      expect((await h.write('encrypt/r', { plaintext: b64('x'), type: 'rsa-2048' })).status).to.equal(200);
      expect((await h.read('keys/r')).data.type).to.equal('rsa-2048');
      const ecdsa = await h.write('encrypt/e', { plaintext: b64('x'), type: 'ecdsa-p256' });
      expect(ecdsa.status).to.equal(400);
      expect(ecdsa.error).to.equal('key type ecdsa-p256 not supported for this operation');
      const unknown = await h.write('encrypt/u', { plaintext: b64('x'), type: 'aes512' });
      expect(unknown.status).to.equal(400);
      expect(unknown.error).to.equal('unknown key type aes512');
      const managed = await h.write('encrypt/m', { plaintext: b64('x'), type: 'managed_key' });
      expect(managed.status).to.equal(400);
      expect(managed.error).to.match(/managed-key backend/);
      const derivedRsa = await h.write('encrypt/dr', { plaintext: b64('x'), type: 'rsa-2048', context: b64('c') });
      expect(derivedRsa.status).to.equal(400);
      expect(derivedRsa.error).to.equal('key derivation and convergent encryption not supported for keys of type rsa-2048');
    });

    it('does not create the key when config/keys disables upsert', async () => {
      await h.write('config/keys', { disable_upsert: true });
      const res = await h.write('encrypt/new', { plaintext: b64('x') });
      expect(res.status).to.equal(400);
      expect(res.error).to.equal('encryption key not found');
      expect((await h.read('keys/new')).status).to.equal(404);
      await h.write('keys/new');
      expect((await h.write('encrypt/new', { plaintext: b64('x') })).status).to.equal(200);
    });

    it('answers "encryption key not found" from the update handler when the key is gone', async () => {
      await h.write('keys/k');
      await h.write('keys/k/config', { deletion_allowed: true });
      const request: DirectRequest = {
        id: 'r',
        operation: 'update',
        path: 'encrypt/k',
        data: { plaintext: b64('x') },
        storage: h.storage,
        mount: { path: 'transit/', type: 'transit', accessor: 'a', uuid: 'u' },
      };
      const prepared = await prepareRequest(h.backend, request);
      expect(prepared.operation).to.equal('update');
      await h.request('delete', 'keys/k');
      const err = await h.backend.execute(authorizedRequest(request, prepared), prepared).then(
        () => expect.fail('expected an error'),
        (e: Error) => e,
      );
      expect(err.message).to.equal('encryption key not found');
    });

    it('warns when the key appeared between the existence check and the create handler', async () => {
      const request: DirectRequest = {
        id: 'r',
        operation: 'update',
        path: 'encrypt/k',
        data: { plaintext: b64('x') },
        storage: h.storage,
        mount: { path: 'transit/', type: 'transit', accessor: 'a', uuid: 'u' },
      };
      const prepared = await prepareRequest(h.backend, request);
      expect(prepared.operation).to.equal('create');
      await h.write('keys/k', { type: 'aes128-gcm96' });
      const response = await h.backend.execute(authorizedRequest(request, prepared), prepared);
      expect(response?.warnings).to.deep.equal(['Attempted creation of the key during the encrypt operation, but it was created beforehand']);
      expect(response?.data?.ciphertext).to.match(CIPHERTEXT);
    });

    it('creates a key once when many encrypts race to upsert it', async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => h.write('encrypt/raced', { plaintext: b64(`p${i}`) })));
      expect(answers.map((a) => a.status)).to.deep.equal(Array(10).fill(200));
      const stored = await new KeyStore(h.storage, 0).get('raced');
      expect(stored?.settings.latestVersion).to.equal(1);
      for (const [i, answer] of answers.entries()) expect(await decrypt(h, 'raced', { ciphertext: answer.data.ciphertext })).to.equal(`p${i}`);
    });
  });

  it('encrypts with the new version right after a rotation', async () => {
    await h.write('keys/k');
    const before = await h.write('encrypt/k', { plaintext: b64('x') });
    await h.write('keys/k/rotate');
    const after = await h.write('encrypt/k', { plaintext: b64('x') });
    expect(before.data.key_version).to.equal(1);
    expect(after.data.key_version).to.equal(2);
    expect(await decrypt(h, 'k', { ciphertext: before.data.ciphertext })).to.equal('x');
  });

  it('describes every field it accepts', async () => {
    const help = h.backend.help('encrypt/k');
    const fields = Object.keys((help.openapi as any).paths['encrypt/{name}'].fields);
    expect(fields).to.include.members([
      'name',
      'plaintext',
      'associated_data',
      'context',
      'key_version',
      'nonce',
      'reference',
      'batch_input',
      'type',
      'convergent_encryption',
      'partial_failure_response_code',
    ]);
  });
});
