import { expect } from 'chai';
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { MISSING_CONTEXT } from '../../../plugins/transit/crypto/derive.js';
import { KeyPolicy, type PolicySettings } from '../../../plugins/transit/keys/key-policy.js';
import { KeyStore } from '../../../plugins/transit/keys/key-store.js';
import type { KeyVersion } from '../../../plugins/transit/keys/key-version.js';
import { TransitHarness, type HarnessResult } from './harness.js';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const text = (base64: string) => Buffer.from(base64, 'base64').toString();

function batchResults(res: HarnessResult): any[] {
  return (res.response?.raw ? res.data.data : res.data).batch_results;
}

async function encrypt(h: TransitHarness, name: string, data: Record<string, unknown>): Promise<string> {
  const res = await h.write(`encrypt/${name}`, data);
  expect(res.status, res.error).to.equal(200);
  return res.data.ciphertext;
}

/** Replaces one base64 character of a ciphertext's payload at `at` (counted from the payload start). */
function tamper(ciphertext: string, at: number): string {
  const prefix = ciphertext.slice(0, ciphertext.indexOf(':', 7) + 1);
  const body = Buffer.from(ciphertext.slice(prefix.length), 'base64');
  body[at] = body[at]! ^ 1;
  return prefix + body.toString('base64');
}

/** AES-256-GCM with node:crypto: ciphertext ‖ tag. */
function gcmSeal(key: Buffer, nonce: Buffer, plaintext: Buffer): Buffer {
  const cipher = createCipheriv(key.length === 16 ? 'aes-128-gcm' : 'aes-256-gcm', key, nonce);
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function gcmOpen(key: Buffer, nonce: Buffer, sealed: Buffer): Buffer {
  const decipher = createDecipheriv(key.length === 16 ? 'aes-128-gcm' : 'aes-256-gcm', key, nonce);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
}

/** NIST SP 800-108 counter mode with HMAC-SHA-256, one block: Vault's kdf 0. */
function counterMode(key: Buffer, context: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(256);
  return createHmac('sha256', key).update(Buffer.alloc(4)).update(context).update(length).digest();
}

const hkdf = (key: Buffer, context: Buffer, length: number) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), context, length));

describe('transit decrypt', () => {
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
    await h.write('keys/k');
  });

  it('returns the base64 plaintext', async () => {
    const ciphertext = await encrypt(h, 'k', { plaintext: b64('hello') });
    const res = await h.write('decrypt/k', { ciphertext });
    expect(res.status).to.equal(200);
    expect(res.data).to.deep.equal({ plaintext: b64('hello') });
  });

  it('answers 400 "missing ciphertext to decrypt" and "encryption key not found"', async () => {
    const missing = await h.write('decrypt/k', {});
    expect(missing.status).to.equal(400);
    expect(missing.error).to.equal('missing ciphertext to decrypt');
    const noKey = await h.write('decrypt/nokey', { ciphertext: 'vault:v1:AAAA' });
    expect(noKey.status).to.equal(400);
    expect(noKey.error).to.equal('encryption key not found');
  });

  it('never creates a key (decrypt has no create operation)', async () => {
    await h.write('decrypt/nokey', { ciphertext: 'vault:v1:AAAA' });
    expect((await h.read('keys/nokey')).status).to.equal(404);
  });

  it('names what is wrong with a malformed ciphertext, as Vault does', async () => {
    const cases: [string, string][] = [
      ['AAAA', 'invalid ciphertext: no prefix'],
      ['vault:v1AAAA', 'invalid ciphertext: wrong number of fields'],
      ['vault:vx:AAAA', 'invalid ciphertext: version number could not be decoded'],
      ['vault:v:AAAA', 'invalid ciphertext: version number could not be decoded'],
      ['vault:v2:AAAA', 'invalid ciphertext: version is too new'],
      ['vault:v1:AAA', 'invalid ciphertext: could not decode base64'],
      ['vault:v1:AA-_', 'invalid ciphertext: could not decode base64'],
      ['vault:v1:AAAA', 'invalid ciphertext length'],
      [`vault:v1:${b64(Buffer.alloc(20))}`, 'cipher: message authentication failed'],
    ];
    for (const [ciphertext, message] of cases) {
      const res = await h.write('decrypt/k', { ciphertext });
      expect(res.status, ciphertext).to.equal(400);
      expect(res.error, ciphertext).to.equal(message);
    }
  });

  it('treats version 0 in the prefix as version 1, as the first implementation wrote it', async () => {
    const ciphertext = await encrypt(h, 'k', { plaintext: b64('legacy') });
    const res = await h.write('decrypt/k', { ciphertext: ciphertext.replace('vault:v1:', 'vault:v0:') });
    expect(text(res.data.plaintext)).to.equal('legacy');
  });

  it('rejects a tampered nonce, ciphertext or tag', async () => {
    const ciphertext = await encrypt(h, 'k', { plaintext: b64('sixteen bytes!!!') });
    for (const at of [0, 11, 12, 27, 28, 43]) {
      const res = await h.write('decrypt/k', { ciphertext: tamper(ciphertext, at) });
      expect(res.status, `byte ${at}`).to.equal(400);
      expect(res.error).to.equal('cipher: message authentication failed');
    }
  });

  it('reports ChaCha20-Poly1305 authentication failures in its own words', async () => {
    await h.write('keys/c', { type: 'chacha20-poly1305' });
    const ciphertext = await encrypt(h, 'c', { plaintext: b64('x') });
    const res = await h.write('decrypt/c', { ciphertext: tamper(ciphertext, 13) });
    expect(res.status).to.equal(400);
    expect(res.error).to.equal('chacha20poly1305: message authentication failed');
  });

  it('refuses versions below min_decryption_version', async () => {
    const old = await encrypt(h, 'k', { plaintext: b64('x') });
    await h.write('keys/k/rotate');
    await h.write('keys/k/config', { min_decryption_version: 2 });
    const res = await h.write('decrypt/k', { ciphertext: old });
    expect(res.status).to.equal(400);
    expect(res.error).to.equal('ciphertext or signature version is disallowed by policy (too old)');
  });

  it('needs the context for a derived key and fails authentication with a wrong one', async () => {
    await h.write('keys/d', { derived: true });
    const ciphertext = await encrypt(h, 'd', { plaintext: b64('x'), context: b64('ctx') });
    const missing = await h.write('decrypt/d', { ciphertext });
    expect(missing.status).to.equal(400);
    expect(missing.error).to.equal(MISSING_CONTEXT);
    const wrong = await h.write('decrypt/d', { ciphertext, context: b64('other') });
    expect(wrong.error).to.equal('cipher: message authentication failed');
  });

  it('ignores a nonce for keys that do not take one', async () => {
    const ciphertext = await encrypt(h, 'k', { plaintext: b64('x') });
    const res = await h.write('decrypt/k', { ciphertext, nonce: b64(Buffer.alloc(12)) });
    expect(res.status).to.equal(200);
  });

  it('refuses key types that cannot decrypt', async () => {
    await h.write('keys/e', { type: 'ed25519' });
    const res = await h.write('decrypt/e', { ciphertext: 'vault:v1:AAAA' });
    expect(res.status).to.equal(400);
    expect(res.error).to.equal('message decryption not supported for key type ed25519');
  });

  it('answers every RSA decryption failure with one message, for either padding', async () => {
    await h.write('keys/r', { type: 'rsa-2048' });
    const oaep = await encrypt(h, 'r', { plaintext: b64('x') });
    const pkcs1 = await encrypt(h, 'r', { plaintext: b64('x'), padding_scheme: 'pkcs1v15' });
    const failures = [
      { ciphertext: tamper(oaep, 5) },
      { ciphertext: oaep, padding_scheme: 'pkcs1v15' },
      { ciphertext: pkcs1 },
      { ciphertext: tamper(pkcs1, 5), padding_scheme: 'pkcs1v15' },
      { ciphertext: `vault:v1:${b64(Buffer.alloc(10))}` },
    ];
    for (const data of failures) {
      const res = await h.write('decrypt/r', data);
      expect(res.status).to.equal(400);
      expect(res.error).to.equal('failed to RSA decrypt the ciphertext: crypto/rsa: decryption error');
    }
    const good = await h.write('decrypt/r', { ciphertext: pkcs1, padding_scheme: 'pkcs1v15' });
    expect(text(good.data.plaintext)).to.equal('x');
  });

  it('answers a single ciphertext as a batch of one would: the same plaintext, or the same error and status', async () => {
    await h.write('keys/k/rotate');
    await h.write('keys/old');
    const belowMinimum = await encrypt(h, 'old', { plaintext: b64('x') });
    await h.write('keys/old/rotate');
    await h.write('keys/old/config', { min_decryption_version: 2 });
    await h.write('keys/aes128', { type: 'aes128-gcm96' });
    await h.write('keys/chacha', { type: 'chacha20-poly1305' });
    await h.write('keys/rsa', { type: 'rsa-2048' });
    await h.write('keys/derived', { derived: true });
    await h.write('keys/convergent', { derived: true, convergent_encryption: true });
    await h.write('keys/ed', { type: 'ed25519' });
    const k = await encrypt(h, 'k', { plaintext: b64('latest') });
    const kFirst = (await encrypt(h, 'k', { plaintext: b64('first'), key_version: 1 })).replace('vault:v1:', 'vault:v0:');
    const withAad = await encrypt(h, 'k', { plaintext: b64('x'), associated_data: b64('row 1') });
    const empty = await encrypt(h, 'k', { plaintext: '' });
    const aes128 = await encrypt(h, 'aes128', { plaintext: b64('x') });
    const chacha = await encrypt(h, 'chacha', { plaintext: b64('x') });
    const rsa = await encrypt(h, 'rsa', { plaintext: b64('x'), padding_scheme: 'pkcs1v15' });
    const derived = await encrypt(h, 'derived', { plaintext: b64('x'), context: b64('tenant') });
    const convergent = await encrypt(h, 'convergent', { plaintext: b64('x'), context: b64('tenant') });
    const cases: [string, Record<string, string>][] = [
      ['k', { ciphertext: k }],
      ['k', { ciphertext: kFirst }],
      ['k', { ciphertext: empty }],
      ['k', { ciphertext: withAad, associated_data: b64('row 1') }],
      ['k', { ciphertext: withAad, associated_data: b64('row 2') }],
      ['k', { ciphertext: withAad }],
      ['k', { ciphertext: k, associated_data: '%%%' }],
      ['k', { ciphertext: k, padding_scheme: 'oaep' }],
      ['k', { ciphertext: k, nonce: b64(Buffer.alloc(12)), context: b64('ignored') }],
      ['k', { ciphertext: tamper(k, 20) }],
      ['k', { ciphertext: 'vault:v1:AAAA' }],
      ['k', { ciphertext: 'vault:v1:' }],
      ['k', { ciphertext: 'vault:v1:not base64!' }],
      ['k', { ciphertext: 'vault:v9:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
      ['k', { ciphertext: 'vault:vx:AAAA' }],
      ['k', { ciphertext: 'no prefix' }],
      ['old', { ciphertext: belowMinimum }],
      ['aes128', { ciphertext: aes128 }],
      ['chacha', { ciphertext: chacha }],
      ['chacha', { ciphertext: tamper(chacha, 13) }],
      ['rsa', { ciphertext: rsa, padding_scheme: 'pkcs1v15' }],
      ['rsa', { ciphertext: rsa }],
      ['rsa', { ciphertext: rsa, associated_data: b64('row 1') }],
      ['derived', { ciphertext: derived, context: b64('tenant') }],
      ['derived', { ciphertext: derived, context: b64('other') }],
      ['derived', { ciphertext: derived }],
      ['convergent', { ciphertext: convergent, context: b64('tenant') }],
      ['ed', { ciphertext: 'vault:v1:AAAA' }],
    ];
    for (const [key, fields] of cases) {
      const label = `${key} ${JSON.stringify(fields)}`;
      const single = await h.write(`decrypt/${key}`, fields);
      const batch = await h.write(`decrypt/${key}`, { batch_input: [fields] });
      const [item] = batchResults(batch);
      if (item.error !== undefined) {
        expect(single.status, label).to.equal(batch.status);
        // The one difference: a batch names the item's padding_scheme with its index.
        expect(single.error, label).to.equal(item.error.replace("'[0].padding_scheme'", 'padding_scheme'));
        continue;
      }
      expect(single.status, label).to.equal(200);
      expect(single.data.plaintext, label).to.equal(item.plaintext);
    }
  });

  describe('batch_input', () => {
    it('decrypts in input order; every result has plaintext ("" on error) and a reference', async () => {
      const a = await encrypt(h, 'k', { plaintext: b64('a') });
      const empty = await encrypt(h, 'k', { plaintext: '' });
      const res = await h.write('decrypt/k', {
        batch_input: [{ ciphertext: a, reference: 'r1' }, { ciphertext: 'garbage', reference: 'r2' }, { ciphertext: empty }, {}],
      });
      expect(res.status).to.equal(400);
      expect(batchResults(res)).to.deep.equal([
        { plaintext: b64('a'), reference: 'r1' },
        { plaintext: '', error: 'invalid ciphertext: no prefix', reference: 'r2' },
        { plaintext: '', reference: '' },
        { plaintext: '', error: 'missing ciphertext to decrypt', reference: '' },
      ]);
    });

    it('answers 200 when all succeed, partial_failure_response_code when some fail, 400 when all fail', async () => {
      const a = await encrypt(h, 'k', { plaintext: b64('a') });
      expect((await h.write('decrypt/k', { partial_failure_response_code: 299, batch_input: [{ ciphertext: a }] })).status).to.equal(200);
      expect((await h.write('decrypt/k', { partial_failure_response_code: 299, batch_input: [{ ciphertext: a }, { ciphertext: 'x' }] })).status).to.equal(299);
      expect((await h.write('decrypt/k', { partial_failure_response_code: 299, batch_input: [{ ciphertext: 'x' }, { ciphertext: 'y' }] })).status).to.equal(400);
    });

    it('ignores the top-level ciphertext and context', async () => {
      const a = await encrypt(h, 'k', { plaintext: b64('a') });
      const res = await h.write('decrypt/k', { ciphertext: 'not even close', context: '!!', batch_input: [{ ciphertext: a }] });
      expect(res.status).to.equal(200);
      expect(batchResults(res)[0].plaintext).to.equal(b64('a'));
    });

    it('decrypts ciphertexts of several key versions in one batch', async () => {
      const v1 = await encrypt(h, 'k', { plaintext: b64('one') });
      await h.write('keys/k/rotate');
      const v2 = await encrypt(h, 'k', { plaintext: b64('two') });
      const res = await h.write('decrypt/k', { batch_input: [{ ciphertext: v2 }, { ciphertext: v1 }, { ciphertext: v2 }] });
      expect(batchResults(res).map((r) => text(r.plaintext))).to.deep.equal(['two', 'one', 'two']);
    });

    it('refuses an empty batch and a batch mixing items with and without context', async () => {
      const empty = await h.write('decrypt/k', { batch_input: [] });
      expect(empty.error).to.equal('missing batch input to process');
      const mixed = await h.write('decrypt/k', { batch_input: [{ ciphertext: 'a' }, { ciphertext: 'b', context: b64('c') }] });
      expect(mixed.status).to.equal(400);
      expect(mixed.error).to.equal('context should be set either in all the request blocks or in none');
    });

    it('decrypts a large batch of derived-key ciphertexts, each with its context', async () => {
      await h.write('keys/d', { derived: true });
      const items = Array.from({ length: 300 }, (_, i) => ({ plaintext: b64(`p${i}`.repeat(i % 40)), context: b64(`c${i}`) }));
      const sealed = batchResults(await h.write('encrypt/d', { batch_input: items }));
      const res = await h.write('decrypt/d', { batch_input: sealed.map((s, i) => ({ ciphertext: s.ciphertext, context: items[i]!.context })) });
      expect(res.status).to.equal(200);
      expect(batchResults(res).map((r) => r.plaintext)).to.deep.equal(items.map((i) => i.plaintext));
    });
  });

  describe('legacy keys restored from old backups', () => {
    /** Writes a key as an old Vault made it straight into the mount's storage, then reloads the backend. */
    async function legacyKey(name: string, settings: Partial<PolicySettings>, versions: { key: Buffer; convergentVersion?: number }[]): Promise<void> {
      const now = new Date();
      const full: PolicySettings = {
        name,
        type: 'aes256-gcm96',
        derived: true,
        kdf: 1,
        convergentEncryption: false,
        convergentVersion: 0,
        exportable: false,
        allowPlaintextBackup: false,
        deletionAllowed: false,
        minDecryptionVersion: 1,
        minEncryptionVersion: 0,
        minAvailableVersion: 0,
        latestVersion: versions.length,
        autoRotatePeriod: 0,
        keySize: 0,
        imported: false,
        allowImportedKeyRotation: false,
        ...settings,
      };
      const made: KeyVersion[] = versions.map((v, i) => ({
        version: i + 1,
        key: v.key,
        hmacKey: randomBytes(32),
        time: now.toISOString(),
        creationTime: Math.floor(now.getTime() / 1000),
        convergentVersion: v.convergentVersion ?? 0,
        certificateChain: [],
      }));
      await new KeyStore(h.storage, 0).save(new KeyPolicy(full, new Map(made.map((v) => [v.version, v]))), made);
      await h.reload();
    }

    it('decrypts and encrypts with a derived key of the legacy counter-mode KDF (kdf 0)', async () => {
      const key = randomBytes(32);
      await legacyKey('kdf0', { kdf: 0 }, [{ key }]);
      const context = Buffer.from('user-7');
      const nonce = randomBytes(12);
      const theirs = `vault:v1:${b64(Buffer.concat([nonce, gcmSeal(counterMode(key, context), nonce, Buffer.from('from old vault'))]))}`;
      const res = await h.write('decrypt/kdf0', { ciphertext: theirs, context: b64(context) });
      expect(res.status, res.error).to.equal(200);
      expect(text(res.data.plaintext)).to.equal('from old vault');

      const ours = Buffer.from((await encrypt(h, 'kdf0', { plaintext: b64('new'), context: b64(context) })).slice('vault:v1:'.length), 'base64');
      expect(gcmOpen(counterMode(key, context), ours.subarray(0, 12), ours.subarray(12)).toString()).to.equal('new');
    });

    it('convergent version 1: the caller gives the nonce, which the ciphertext does not hold', async () => {
      const key = randomBytes(32);
      await legacyKey('cv1', { kdf: 0, convergentEncryption: true, convergentVersion: 1 }, [{ key }]);
      const context = Buffer.from('ctx');
      const nonce = randomBytes(12);
      const ciphertext = await encrypt(h, 'cv1', { plaintext: b64('deterministic'), context: b64(context), nonce: b64(nonce) });
      const expected = gcmSeal(counterMode(key, context), nonce, Buffer.from('deterministic'));
      expect(ciphertext).to.equal(`vault:v1:${b64(expected)}`);

      const res = await h.write('decrypt/cv1', { ciphertext, context: b64(context), nonce: b64(nonce) });
      expect(text(res.data.plaintext)).to.equal('deterministic');
      const noNonce = await h.write('decrypt/cv1', { ciphertext, context: b64(context) });
      expect(noNonce.status).to.equal(400);
      expect(noNonce.error).to.equal('invalid convergent nonce supplied');
      const shortNonce = await h.write('decrypt/cv1', { ciphertext, context: b64(context), nonce: b64(Buffer.alloc(8)) });
      expect(shortNonce.status).to.equal(400);
      expect(shortNonce.error).to.equal('base64-decoded nonce must be 12 bytes long when using convergent encryption with this key');
      for (const bad of [undefined, b64(Buffer.alloc(16))]) {
        const enc = await h.write('encrypt/cv1', { plaintext: b64('x'), context: b64(context), nonce: bad });
        expect(enc.status).to.equal(400);
        expect(enc.error).to.equal('base64-decoded nonce must be 12 bytes long when using convergent encryption with this key');
      }
    });

    it('convergent version 2: the nonce is HMAC-SHA-256 of the plaintext keyed with the context', async () => {
      const key = randomBytes(32);
      await legacyKey('cv2', { kdf: 1, convergentEncryption: true, convergentVersion: 2 }, [{ key }]);
      const context = Buffer.from('ctx-2');
      const plaintext = Buffer.from('same in, same out');
      const nonce = createHmac('sha256', context).update(plaintext).digest().subarray(0, 12);
      const expected = `vault:v1:${b64(Buffer.concat([nonce, gcmSeal(hkdf(key, context, 32), nonce, plaintext)]))}`;
      expect(await encrypt(h, 'cv2', { plaintext: b64(plaintext), context: b64(context) })).to.equal(expected);
      const res = await h.write('decrypt/cv2', { ciphertext: expected, context: b64(context) });
      expect(text(res.data.plaintext)).to.equal('same in, same out');
      const withNonce = await h.write('encrypt/cv2', { plaintext: b64(plaintext), context: b64(context), nonce: b64(Buffer.alloc(12)) });
      expect(withNonce.error).to.equal('provided nonce not allowed for this key');
    });

    it('a convergent version 2 key rotated here encrypts its new version with version 3 and still decrypts both', async () => {
      await legacyKey('cv2r', { kdf: 1, convergentEncryption: true, convergentVersion: 2 }, [{ key: randomBytes(32) }]);
      const context = b64('c');
      const old = await encrypt(h, 'cv2r', { plaintext: b64('x'), context });
      await h.write('keys/cv2r/rotate');
      const stored = await new KeyStore(h.storage, 0).get('cv2r');
      expect(stored?.versions.get(2)?.convergentVersion).to.equal(3);
      const fresh = await encrypt(h, 'cv2r', { plaintext: b64('x'), context });
      expect(fresh).to.match(/^vault:v2:/);
      const res = await h.write('decrypt/cv2r', { batch_input: [{ ciphertext: old, context }, { ciphertext: fresh, context }] });
      expect(batchResults(res).map((r) => text(r.plaintext))).to.deep.equal(['x', 'x']);
    });

    it('answers 400 with a clear message when a kdf 0 key cannot give a convergent version 3 key', async () => {
      await legacyKey('mismatch', { kdf: 0, convergentEncryption: true, convergentVersion: -1 }, [{ key: randomBytes(32), convergentVersion: 3 }]);
      const res = await h.write('encrypt/mismatch', { plaintext: b64('x'), context: b64('c') });
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/legacy counter-mode KDF \(kdf 0\)/);
    });
  });

  it('describes every field it accepts', () => {
    const fields = Object.keys((h.backend.help('decrypt/k').openapi as any).paths['decrypt/{name}'].fields);
    expect(fields).to.include.members(['name', 'ciphertext', 'associated_data', 'context', 'nonce', 'reference', 'batch_input', 'partial_failure_response_code']);
  });
});
