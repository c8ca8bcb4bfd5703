/**
 * Format cross-checks: ciphertexts made by the transit paths open with an independent node:crypto
 * (or node-forge, for RSA) computation from the stored key material, and ciphertexts made
 * independently open through the paths (docs/transit.md, "Ciphertexts, signatures and HMACs" and
 * "Derived keys and convergent encryption").
 */
import { expect } from 'chai';
import { constants, createCipheriv, createDecipheriv, createHmac, hkdfSync, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import forge from 'node-forge';
import { KeyStore } from '../../../plugins/transit/keys/key-store.js';
import type { KeyPolicy } from '../../../plugins/transit/keys/key-policy.js';
import { TransitHarness, type HarnessResult } from './harness.js';

const b64 = (bytes: string | Buffer) => Buffer.from(bytes).toString('base64');

function batchResults(res: HarnessResult): any[] {
  return (res.response?.raw ? res.data.data : res.data).batch_results;
}

/** The key as stored in the mount's storage, read around the backend's cache. */
async function stored(h: TransitHarness, name: string): Promise<KeyPolicy> {
  const policy = await new KeyStore(h.storage, 0).get(name);
  if (!policy) throw new Error(`no key ${name}`);
  return policy;
}

function keyOf(policy: KeyPolicy, version = policy.settings.latestVersion): Buffer {
  return policy.versions.get(version)!.key!;
}

/** vault:v<N>:<base64> → N and the raw payload. */
function unwrap(ciphertext: string): { version: number; payload: Buffer } {
  const m = /^vault:v(\d+):(.*)$/.exec(ciphertext);
  if (!m) throw new Error(`not a ciphertext: ${ciphertext}`);
  return { version: Number(m[1]), payload: Buffer.from(m[2]!, 'base64') };
}

type Aead = 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-poly1305' | 'xchacha20-poly1305';
const AEAD_OF: Record<string, Aead> = {
  'aes128-gcm96': 'aes-128-gcm',
  'aes256-gcm96': 'aes-256-gcm',
  'chacha20-poly1305': 'chacha20-poly1305',
  'xchacha20-poly1305': 'xchacha20-poly1305',
};
const KEY_BYTES: Record<string, number> = { 'aes128-gcm96': 16, 'aes256-gcm96': 32, 'chacha20-poly1305': 32, 'xchacha20-poly1305': 32 };
const NONCE_BYTES: Record<string, number> = { 'aes128-gcm96': 12, 'aes256-gcm96': 12, 'chacha20-poly1305': 12, 'xchacha20-poly1305': 24 };

/** XChaCha20-Poly1305 by a second implementation: @noble/ciphers' own, not the HChaCha20 + OpenSSL composition transit uses. */
function seal(alg: Aead, key: Buffer, nonce: Buffer, plaintext: Buffer, aad?: Buffer): Buffer {
  if (alg === 'xchacha20-poly1305') return Buffer.from(xchacha20poly1305(key, nonce, aad).encrypt(plaintext));
  const cipher = alg === 'chacha20-poly1305' ? createCipheriv(alg, key, nonce, { authTagLength: 16 }) : createCipheriv(alg, key, nonce);
  if (aad) cipher.setAAD(aad, { plaintextLength: plaintext.length });
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function open(alg: Aead, key: Buffer, nonce: Buffer, sealed: Buffer, aad?: Buffer): Buffer {
  if (alg === 'xchacha20-poly1305') return Buffer.from(xchacha20poly1305(key, nonce, aad).decrypt(sealed));
  const decipher = alg === 'chacha20-poly1305' ? createDecipheriv(alg, key, nonce, { authTagLength: 16 }) : createDecipheriv(alg, key, nonce);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  if (aad) decipher.setAAD(aad, { plaintextLength: sealed.length - 16 });
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
}

/** RFC 5869 HKDF-SHA-256 with no salt, written out (node's hkdfSync refuses infos over 1 KB; contexts may be longer). */
function hkdf(ikm: Buffer, info: Buffer, length: number): Buffer {
  const prk = createHmac('sha256', Buffer.alloc(32)).update(ikm).digest();
  const blocks: Buffer[] = [];
  let previous = Buffer.alloc(0);
  for (let i = 1; blocks.length * 32 < length; i++) {
    previous = createHmac('sha256', prk).update(previous).update(info).update(Buffer.from([i])).digest();
    blocks.push(previous);
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** Plaintext sizes on both sides of the WASM/node dispatch thresholds. */
const SIZES = [0, 1, 15, 16, 64, 255, 384, 385, 512, 513, 1024, 4096];

describe('transit ciphertext format', () => {
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
  });

  for (const type of ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305']) {
    const alg = AEAD_OF[type]!;
    const n = NONCE_BYTES[type]!;

    describe(type, () => {
      it('ciphertexts made here are nonce ‖ ciphertext ‖ tag under the stored key, with the associated data', async () => {
        await h.write('keys/k', { type });
        const items = SIZES.map((size, i) => ({ plaintext: b64(randomBytes(size)), associated_data: i % 2 ? b64(`ad ${i}`) : undefined }));
        const results = batchResults(await h.write('encrypt/k', { batch_input: items }));
        const key = keyOf(await stored(h, 'k'));
        expect(key).to.have.length(KEY_BYTES[type]!);
        results.forEach((result, i) => {
          const { version, payload } = unwrap(result.ciphertext);
          expect(version).to.equal(1);
          expect(payload).to.have.length(n + SIZES[i]! + 16);
          const aad = items[i]!.associated_data ? Buffer.from(items[i]!.associated_data!, 'base64') : undefined;
          expect(open(alg, key, payload.subarray(0, n), payload.subarray(n), aad).toString('base64')).to.equal(items[i]!.plaintext);
        });
      });

      it('ciphertexts made independently with the stored key decrypt here', async () => {
        await h.write('keys/k', { type });
        const key = keyOf(await stored(h, 'k'));
        const plaintexts = SIZES.map((size) => randomBytes(size));
        const batch = plaintexts.map((plaintext, i) => {
          const nonce = randomBytes(n);
          const aad = i % 3 === 0 ? Buffer.from(`ad${i}`) : undefined;
          return { ciphertext: `vault:v1:${b64(Buffer.concat([nonce, seal(alg, key, nonce, plaintext, aad)]))}`, associated_data: aad && b64(aad) };
        });
        const res = await h.write('decrypt/k', { batch_input: batch });
        expect(res.status).to.equal(200);
        expect(batchResults(res).map((r) => r.plaintext)).to.deep.equal(plaintexts.map((p) => b64(p)));
        const single = await h.write('decrypt/k', { ciphertext: batch[4]!.ciphertext });
        expect(single.data.plaintext).to.equal(b64(plaintexts[4]!));
      });

      it('a derived key is HKDF-SHA-256(version key, no salt, info = context)', async () => {
        await h.write('keys/d', { type, derived: true });
        const master = keyOf(await stored(h, 'd'));
        const contexts = ['a', 'tenant/42', 'x'.repeat(2000)].map((c) => Buffer.from(c));
        expect(hkdf(master, contexts[1]!, 48).equals(Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), contexts[1]!, 48)))).to.equal(true);
        const res = await h.write('encrypt/d', { batch_input: contexts.map((c, i) => ({ plaintext: b64(`secret ${i}`), context: b64(c) })) });
        batchResults(res).forEach((result, i) => {
          const key = hkdf(master, contexts[i]!, KEY_BYTES[type]!);
          const { payload } = unwrap(result.ciphertext);
          expect(open(alg, key, payload.subarray(0, n), payload.subarray(n)).toString()).to.equal(`secret ${i}`);
        });
        const nonce = randomBytes(n);
        const theirs = `vault:v1:${b64(Buffer.concat([nonce, seal(alg, hkdf(master, contexts[1]!, KEY_BYTES[type]!), nonce, Buffer.from('from outside'))]))}`;
        const opened = await h.write('decrypt/d', { ciphertext: theirs, context: b64(contexts[1]!) });
        expect(Buffer.from(opened.data.plaintext, 'base64').toString()).to.equal('from outside');
      });

      it('convergent version 3: the key and the nonce HMAC key are one HKDF output of key length + 32 bytes', async () => {
        await h.write('keys/c', { type, derived: true, convergent_encryption: true });
        const policy = await stored(h, 'c');
        expect(policy.versions.get(1)!.convergentVersion).to.equal(3);
        const master = keyOf(policy);
        const context = Buffer.from('convergent context');
        const plaintexts = SIZES.map((size) => randomBytes(size));
        const res = await h.write('encrypt/c', { batch_input: plaintexts.map((p) => ({ plaintext: b64(p), context: b64(context) })) });
        const derived = hkdf(master, context, KEY_BYTES[type]! + 32);
        const key = derived.subarray(0, KEY_BYTES[type]!);
        const nonceKey = derived.subarray(KEY_BYTES[type]!);
        batchResults(res).forEach((result, i) => {
          const nonce = createHmac('sha256', nonceKey).update(plaintexts[i]!).digest().subarray(0, n);
          expect(result.ciphertext).to.equal(`vault:v1:${b64(Buffer.concat([nonce, seal(alg, key, nonce, plaintexts[i]!)]))}`);
        });
      });
    });
  }

  it('encrypts each item of a batch with the version it names, under that version’s key', async () => {
    await h.write('keys/k');
    await h.write('keys/k/rotate');
    await h.write('keys/k/rotate');
    const items = Array.from({ length: 30 }, (_, i) => ({ plaintext: b64(`item ${i}`), key_version: (i % 3) + 1 }));
    const results = batchResults(await h.write('encrypt/k', { batch_input: items }));
    const policy = await stored(h, 'k');
    results.forEach((result, i) => {
      const { version, payload } = unwrap(result.ciphertext);
      expect(version).to.equal((i % 3) + 1);
      expect(result.key_version).to.equal(version);
      expect(open('aes-256-gcm', keyOf(policy, version), payload.subarray(0, 12), payload.subarray(12)).toString()).to.equal(`item ${i}`);
    });
  });

  it('gives every version its own key and its own random HMAC key', async () => {
    await h.write('keys/k');
    await h.write('keys/k/rotate');
    const policy = await stored(h, 'k');
    const [one, two] = [policy.versions.get(1)!, policy.versions.get(2)!];
    expect(one.key!.equals(two.key!)).to.equal(false);
    expect(one.hmacKey.equals(two.hmacKey)).to.equal(false);
    expect(one.hmacKey.equals(one.key!)).to.equal(false);
  });

  describe('rsa-2048', () => {
    let privateKey: KeyObject;
    let publicKey: KeyObject;
    let forgeKey: forge.pki.rsa.PrivateKey;
    beforeEach(async function () {
      this.timeout(60000);
      await h.write('keys/r', { type: 'rsa-2048' });
      const version = (await stored(h, 'r')).versions.get(1)!;
      privateKey = version.privateKey!;
      publicKey = version.publicKey!;
      forgeKey = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()) as forge.pki.rsa.PrivateKey;
    });

    it('encrypts with RSA-OAEP, SHA-256 for both the label hash and MGF1, empty label', async () => {
      const res = await h.write('encrypt/r', { plaintext: b64('oaep payload') });
      const { payload } = unwrap(res.data.ciphertext);
      expect(payload).to.have.length(256);
      const opened = forgeKey.decrypt(payload.toString('binary'), 'RSA-OAEP', { md: forge.md.sha256.create(), mgf1: { md: forge.md.sha256.create() } });
      expect(opened).to.equal('oaep payload');
      expect(privateDecrypt({ key: privateKey, oaepHash: 'sha256' }, payload).toString()).to.equal('oaep payload');
    });

    it('decrypts RSA-OAEP ciphertexts made independently', async () => {
      const sealed = publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from('from node'));
      const res = await h.write('decrypt/r', { ciphertext: `vault:v1:${b64(sealed)}` });
      expect(Buffer.from(res.data.plaintext, 'base64').toString()).to.equal('from node');
    });

    it('encrypts and decrypts PKCS#1 v1.5 as another implementation does', async () => {
      const res = await h.write('encrypt/r', { plaintext: b64('v1.5 payload'), padding_scheme: 'pkcs1v15' });
      const { payload } = unwrap(res.data.ciphertext);
      expect(forgeKey.decrypt(payload.toString('binary'), 'RSAES-PKCS1-V1_5')).to.equal('v1.5 payload');
      const theirs = Buffer.from(forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e).encrypt('from forge', 'RSAES-PKCS1-V1_5'), 'binary');
      const opened = await h.write('decrypt/r', { ciphertext: `vault:v1:${b64(theirs)}`, padding_scheme: 'pkcs1v15' });
      expect(Buffer.from(opened.data.plaintext, 'base64').toString()).to.equal('from forge');
    });

    it('decrypts an empty plaintext', async () => {
      for (const padding_scheme of ['oaep', 'pkcs1v15']) {
        const res = await h.write('encrypt/r', { plaintext: '', padding_scheme });
        const opened = await h.write('decrypt/r', { ciphertext: res.data.ciphertext, padding_scheme });
        expect(opened.status, opened.error).to.equal(200);
        expect(opened.data.plaintext).to.equal('');
      }
    });
  });
});
