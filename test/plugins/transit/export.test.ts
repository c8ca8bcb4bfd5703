/**
 * export/:key_type/:name(/:version): the encodings of every key type (checked against node:crypto
 * with the exported material), version selection, the exportable rule and its exceptions, and
 * export from one mount imported into another in private and public forms.
 */
import { expect } from 'chai';
import { createDecipheriv, createPrivateKey, createPublicKey, sign as nodeSign, type KeyObject } from 'node:crypto';
import { TransitHarness } from './harness.js';
import { wrapKeyMaterial } from '../../../plugins/transit/crypto/byok.js';
import { ed25519FromSeed } from '../../../plugins/transit/crypto/derive.js';

const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');
const pkcs8 = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'der' });

async function ok(res: Promise<{ status: number; error?: string; data: any }>, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, r.error).to.equal(status);
  return r.data;
}

async function exported(h: TransitHarness, path: string): Promise<Record<string, string>> {
  return (await ok(h.read(`export/${path}`))).keys;
}

async function refused(h: TransitHarness, path: string, message: RegExp): Promise<void> {
  const res = await h.read(`export/${path}`);
  expect(res.status, path).to.equal(400);
  expect(res.error, path).to.match(message);
}

describe('transit export', function () {
  this.timeout(60_000);
  let h: TransitHarness;

  before(async () => {
    h = await TransitHarness.create();
    for (const type of ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305', 'rsa-2048', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519']) {
      await ok(h.write(`keys/${type}`, { type, exportable: true }));
    }
    await ok(h.write('keys/hmac', { type: 'hmac', key_size: 64, exportable: true }));
    await ok(h.write('keys/closed', { type: 'ecdsa-p256' }));
  });

  describe('encodings', () => {
    it('exports AES and ChaCha keys as raw base64 that decrypts what the key encrypted', async () => {
      for (const [type, length, cipher] of [
        ['aes128-gcm96', 16, 'aes-128-gcm'],
        ['aes256-gcm96', 32, 'aes-256-gcm'],
        ['chacha20-poly1305', 32, 'chacha20-poly1305'],
      ] as const) {
        const key = Buffer.from((await exported(h, `encryption-key/${type}/1`))['1']!, 'base64');
        expect(key, type).to.have.length(length);
        const ciphertext = (await ok(h.write(`encrypt/${type}`, { plaintext: b64('exported') }))).ciphertext as string;
        const payload = Buffer.from(ciphertext.split(':')[2]!, 'base64');
        const nonce = payload.subarray(0, 12);
        const decipher = cipher === 'chacha20-poly1305' ? createDecipheriv(cipher, key, nonce, { authTagLength: 16 }) : createDecipheriv(cipher, key, nonce);
        decipher.setAuthTag(payload.subarray(payload.length - 16));
        expect(Buffer.concat([decipher.update(payload.subarray(12, payload.length - 16)), decipher.final()]).toString()).to.equal('exported');
      }
    });

    it('exports RSA private keys as PKCS#1 PEM (encryption-key and signing-key alike) and the public key as PKIX PEM', async () => {
      const enc = (await exported(h, 'encryption-key/rsa-2048/1'))['1']!;
      expect(enc).to.match(/^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+\n-----END RSA PRIVATE KEY-----\n$/);
      expect((await exported(h, 'signing-key/rsa-2048/1'))['1']).to.equal(enc);
      const pub = (await exported(h, 'public-key/rsa-2048/1'))['1']!;
      expect(pub).to.match(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
      expect(createPublicKey(createPrivateKey(enc)).equals(createPublicKey(pub))).to.equal(true);
      expect(pub).to.equal((await ok(h.read('keys/rsa-2048'))).keys['1'].public_key);
    });

    it('exports ECDSA keys as trimmed SEC1 and PKIX PEM; a signature by the exported key verifies', async () => {
      for (const type of ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521']) {
        const priv = (await exported(h, `signing-key/${type}/1`))['1']!;
        expect(priv).to.match(/^-----BEGIN EC PRIVATE KEY-----\n[\s\S]+\n-----END EC PRIVATE KEY-----$/);
        const pub = (await exported(h, `public-key/${type}/1`))['1']!;
        expect(pub).to.match(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----$/);
        const signature = nodeSign('sha256', Buffer.from('by node'), createPrivateKey(priv));
        const verified = await ok(h.write(`verify/${type}`, { input: b64('by node'), signature: `vault:v1:${b64(signature)}` }));
        expect(verified.valid, type).to.equal(true);
      }
    });

    it('exports Ed25519 signing keys as base64 of the 64-byte seed and public key, public keys as raw base64', async () => {
      const priv = Buffer.from((await exported(h, 'signing-key/ed25519/1'))['1']!, 'base64');
      expect(priv).to.have.length(64);
      const pub = Buffer.from((await exported(h, 'public-key/ed25519/1'))['1']!, 'base64');
      expect(pub).to.have.length(32);
      expect(priv.subarray(32).equals(pub)).to.equal(true);
      const signature = nodeSign(null, Buffer.from('by node'), ed25519FromSeed(priv.subarray(0, 32)));
      expect((await ok(h.write('verify/ed25519', { input: b64('by node'), signature: `vault:v1:${b64(signature)}` }))).valid).to.equal(true);
    });

    it('exports each version\'s HMAC key, and the key itself for hmac keys', async () => {
      const hmacKey = (await exported(h, 'hmac-key/hmac/1'))['1']!;
      expect(Buffer.from(hmacKey, 'base64')).to.have.length(64);
      expect(Buffer.from((await exported(h, 'hmac-key/aes256-gcm96/1'))['1']!, 'base64')).to.have.length(32);
      expect((await exported(h, 'hmac-key/aes256-gcm96/1'))['1']).to.not.equal((await exported(h, 'encryption-key/aes256-gcm96/1'))['1']);
    });

    it('answers with the key name, its type and the keys by version', async () => {
      expect(await ok(h.read('export/public-key/ecdsa-p256/1'))).to.have.keys('name', 'type', 'keys').and.include({ name: 'ecdsa-p256', type: 'ecdsa-p256' });
    });

    it('refuses export types the key type does not have', async () => {
      await refused(h, 'signing-key/aes256-gcm96', /^signing not supported for the key$/);
      await refused(h, 'encryption-key/ecdsa-p256', /^encryption not supported for the key$/);
      await refused(h, 'encryption-key/hmac', /^encryption not supported for the key$/);
      await refused(h, 'public-key/aes256-gcm96', /not supported for key type aes256-gcm96/);
      await refused(h, 'certificate-chain/aes256-gcm96', /certificate chain not supported/);
      await refused(h, 'certificate-chain/ecdsa-p256', /does not have a certificate chain/);
      await refused(h, 'private-key/aes256-gcm96', /^invalid export type: private-key$/);
    });
  });

  describe('versions', () => {
    before(async () => {
      await ok(h.write('keys/versions', { exportable: true }));
      await ok(h.write('keys/versions/rotate'));
      await ok(h.write('keys/versions/rotate'));
    });

    it('exports every valid version when none is named, or latest, N and vN', async () => {
      expect(Object.keys(await exported(h, 'encryption-key/versions'))).to.deep.equal(['1', '2', '3']);
      const latest = await exported(h, 'encryption-key/versions/latest');
      expect(Object.keys(latest)).to.deep.equal(['3']);
      expect(await exported(h, 'encryption-key/versions/3')).to.deep.equal(latest);
      expect(await exported(h, 'encryption-key/versions/v3')).to.deep.equal(latest);
      expect((await exported(h, 'encryption-key/versions/1'))['1']).to.not.equal(latest['3']);
    });

    it('refuses a version that does not exist or is not a number', async () => {
      await refused(h, 'encryption-key/versions/4', /^version does not exist or cannot be found$/);
      await refused(h, 'encryption-key/versions/three', /^invalid key version$/);
    });

    it('leaves out and refuses versions below min_decryption_version', async () => {
      await ok(h.write('keys/versions/config', { min_decryption_version: 2 }));
      expect(Object.keys(await exported(h, 'encryption-key/versions'))).to.deep.equal(['2', '3']);
      await refused(h, 'encryption-key/versions/1', /^version for export is below minimum decryption version$/);
      await ok(h.write('keys/versions/config', { min_decryption_version: 1 }));
      expect(Object.keys(await exported(h, 'encryption-key/versions'))).to.deep.equal(['1', '2', '3']);
    });

    it('refuses a trimmed version after trim', async () => {
      await ok(h.write('keys/trimmed', { exportable: true }));
      for (let i = 0; i < 3; i++) await ok(h.write('keys/trimmed/rotate'));
      await ok(h.write('keys/trimmed/config', { min_decryption_version: 3, min_encryption_version: 3 }));
      await ok(h.write('keys/trimmed/trim', { min_available_version: 3 }));
      await refused(h, 'encryption-key/trimmed/1', /below minimum decryption version/);
      await refused(h, 'hmac-key/trimmed/2', /below minimum decryption version/);
      expect(Object.keys(await exported(h, 'encryption-key/trimmed'))).to.deep.equal(['3', '4']);
    });
  });

  describe('the exportable rule', () => {
    it('refuses private material of a key that is not exportable', async () => {
      for (const type of ['signing-key', 'hmac-key', 'encryption-key']) await refused(h, `${type}/closed`, /^private key material is not exportable$/);
    });

    it('exports the public keys of a key that is not exportable', async () => {
      expect((await exported(h, 'public-key/closed/1'))['1']).to.match(/^-----BEGIN PUBLIC KEY-----/);
    });

    it('answers 404 for a key that does not exist', async () => {
      expect((await h.read('export/encryption-key/missing')).status).to.equal(404);
    });

    it('exports "" for the private part of a public-only imported version', async () => {
      const pair = createPrivateKey((await exported(h, 'encryption-key/rsa-2048/1'))['1']!);
      await ok(h.write('keys/public-only/import', { type: 'rsa-2048', public_key: createPublicKey(pair).export({ type: 'spki', format: 'pem' }), exportable: true }), 204);
      expect(await exported(h, 'encryption-key/public-only')).to.deep.equal({ '1': '' });
      expect(await exported(h, 'signing-key/public-only')).to.deep.equal({ '1': '' });
      expect(createPublicKey((await exported(h, 'public-key/public-only'))['1']!).equals(createPublicKey(pair))).to.equal(true);
    });
  });

  describe('export from one mount, import into another', () => {
    let b: TransitHarness;
    let wrappingB: KeyObject;
    before(async () => {
      b = await TransitHarness.create();
      wrappingB = createPublicKey((await ok(b.read('wrapping_key'))).public_key);
    });

    const wrap = (material: Buffer) => wrapKeyMaterial(wrappingB, material, 'sha256').toString('base64');

    it('private form, symmetric: B decrypts what A encrypted', async () => {
      for (const type of ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305']) {
        const key = Buffer.from((await exported(h, `encryption-key/${type}/1`))['1']!, 'base64');
        await ok(b.write(`keys/${type}/import`, { type, ciphertext: wrap(key) }), 204);
        const ciphertext = (await ok(h.write(`encrypt/${type}`, { plaintext: b64(`moved ${type}`) }))).ciphertext;
        expect((await ok(b.write(`decrypt/${type}`, { ciphertext }))).plaintext).to.equal(b64(`moved ${type}`));
      }
    });

    it('private form, hmac: B verifies A\'s HMACs', async () => {
      const key = Buffer.from((await exported(h, 'hmac-key/hmac/1'))['1']!, 'base64');
      await ok(b.write('keys/hmac/import', { type: 'hmac', ciphertext: wrap(key) }), 204);
      const mac = (await ok(h.write('hmac/hmac', { input: b64('data') }))).hmac;
      expect((await ok(b.write('verify/hmac', { input: b64('data'), hmac: mac }))).valid).to.equal(true);
    });

    it('private form, asymmetric: B verifies A\'s signatures and decrypts A\'s RSA ciphertexts', async () => {
      for (const type of ['rsa-2048', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519']) {
        const text = (await exported(h, `signing-key/${type}/1`))['1']!;
        // PEM forms go back to PKCS#8 DER; the Ed25519 seed‖public form is imported as it is.
        const material = type === 'ed25519' ? Buffer.from(text, 'base64') : pkcs8(createPrivateKey(text));
        await ok(b.write(`keys/${type}/import`, { type, ciphertext: wrap(material) }), 204);
        const signature = (await ok(h.write(`sign/${type}`, { input: b64('from A') }))).signature;
        expect((await ok(b.write(`verify/${type}`, { input: b64('from A'), signature }))).valid, type).to.equal(true);
      }
      const ciphertext = (await ok(h.write('encrypt/rsa-2048', { plaintext: b64('rsa') }))).ciphertext;
      expect((await ok(b.write('decrypt/rsa-2048', { ciphertext }))).plaintext).to.equal(b64('rsa'));
    });

    it('public form: B verifies A\'s signatures, and A decrypts what B encrypted with A\'s RSA public key', async () => {
      for (const type of ['rsa-2048', 'ecdsa-p384', 'ed25519']) {
        const publicKey = (await exported(h, `public-key/${type}/latest`))['1']!;
        await ok(b.write(`keys/pub-${type}/import`, { type, public_key: publicKey }), 204);
        const signature = (await ok(h.write(`sign/${type}`, { input: b64('public') }))).signature;
        expect((await ok(b.write(`verify/pub-${type}`, { input: b64('public'), signature }))).valid, type).to.equal(true);
        expect((await b.write(`sign/pub-${type}`, { input: b64('x') })).status, type).to.equal(400);
      }
      const ciphertext = (await ok(b.write('encrypt/pub-rsa-2048', { plaintext: b64('to A') }))).ciphertext;
      expect((await ok(h.write('decrypt/rsa-2048', { ciphertext }))).plaintext).to.equal(b64('to A'));
    });
  });
});
