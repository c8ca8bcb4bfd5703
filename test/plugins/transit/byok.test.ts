/**
 * BYOK: the wrapping key, import and import_version (every field, every type, the rules of
 * docs/transit.md, "Keys and their one-way settings"), refused imports that leave storage
 * untouched, and byok-export from one mount imported into another, which then decrypts and verifies
 * what the first produced.
 */
import { expect } from 'chai';
import { constants, createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, generateKeyPairSync, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { TransitHarness } from './harness.js';
import { ok, snapshot, wrapFor } from './byok-helpers.js';
import { wrapKeyMaterial, type OaepHash } from '../../../plugins/transit/crypto/byok.js';
import { startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');
const pkcs8 = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'der' });
const spkiPem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();

async function signature(h: TransitHarness, name: string, input: string): Promise<string> {
  return (await ok(h.write(`sign/${name}`, { input: b64(input) }))).signature;
}

async function verifies(h: TransitHarness, name: string, input: string, sig: string): Promise<boolean> {
  return (await ok(h.write(`verify/${name}`, { input: b64(input), signature: sig }))).valid;
}

async function encrypted(h: TransitHarness, name: string, text: string): Promise<string> {
  return (await ok(h.write(`encrypt/${name}`, { plaintext: b64(text) }))).ciphertext;
}

async function decrypted(h: TransitHarness, name: string, ciphertext: string): Promise<string> {
  return Buffer.from((await ok(h.write(`decrypt/${name}`, { ciphertext }))).plaintext, 'base64').toString();
}

const rsa2048 = generateKeyPairSync('rsa', { modulusLength: 2048 });
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const ed = generateKeyPairSync('ed25519');

describe('transit BYOK', function () {
  this.timeout(120_000);
  let h: TransitHarness;

  before(async () => {
    h = await TransitHarness.create();
  });

  describe('wrapping_key', () => {
    it('is an RSA-4096 PEM public key, generated once and kept across reloads', async () => {
      const first = (await ok(h.read('wrapping_key'))).public_key as string;
      expect(first).to.match(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
      const key = createPublicKey(first);
      expect(key.asymmetricKeyType).to.equal('rsa');
      expect(key.asymmetricKeyDetails!.modulusLength).to.equal(4096);
      expect((await ok(h.read('wrapping_key'))).public_key).to.equal(first);
      const other = await TransitHarness.create({ storage: h.storage });
      expect((await ok(other.read('wrapping_key'))).public_key).to.equal(first);
    });

    it('is generated once when requests race for it', async () => {
      const fresh = await TransitHarness.create();
      const keys = await Promise.all([fresh.read('wrapping_key'), fresh.read('wrapping_key'), fresh.read('wrapping_key')]);
      expect(new Set(keys.map((k) => k.data.public_key)).size).to.equal(1);
    });

    it('lives as the policy import/wrapping-key, which LIST keys leaves out', async () => {
      expect(await h.storage.list('policy/')).to.include('import/');
      await ok(h.write('keys/listed'));
      const listed = await ok(h.request('list', 'keys/'));
      expect(listed.keys).to.include('listed').and.not.include('import/');
      expect((await h.read('keys/import/wrapping-key')).status).to.equal(404);
    });
  });

  describe('import', () => {
    const cases: Array<{ type: string; material: () => Buffer }> = [
      { type: 'aes128-gcm96', material: () => randomBytes(16) },
      { type: 'aes256-gcm96', material: () => randomBytes(32) },
      { type: 'chacha20-poly1305', material: () => randomBytes(32) },
      { type: 'xchacha20-poly1305', material: () => randomBytes(32) },
      { type: 'hmac', material: () => randomBytes(48) },
      { type: 'rsa-2048', material: () => pkcs8(rsa2048.privateKey) },
      { type: 'ecdsa-p256', material: () => pkcs8(p256.privateKey) },
      { type: 'ecdsa-p384', material: () => pkcs8(p384.privateKey) },
      { type: 'ecdsa-p521', material: () => pkcs8(p521.privateKey) },
      { type: 'ed25519', material: () => pkcs8(ed.privateKey) },
    ];
    for (const { type, material } of cases) {
      it(`imports ${type} key material (204) as an imported key with version 1`, async () => {
        const bytes = material();
        const res = await h.write(`keys/imp-${type}/import`, { type, ciphertext: await wrapFor(h, bytes), exportable: true });
        expect(res.status, res.error).to.equal(204);
        const read = await ok(h.read(`keys/imp-${type}`));
        expect(read).to.include({ type, imported_key: true, imported_key_allow_rotation: false, latest_version: 1, exportable: true });
        if (type === 'hmac') {
          expect(read.key_size).to.equal(48);
          expect((await ok(h.read(`export/hmac-key/imp-${type}/1`))).keys['1']).to.equal(b64(bytes));
        } else if (type.startsWith('aes') || type.includes('chacha')) {
          expect((await ok(h.read(`export/encryption-key/imp-${type}/1`))).keys['1']).to.equal(b64(bytes));
        } else {
          const imported = createPrivateKey({ key: bytes, format: 'der', type: 'pkcs8' });
          const expected = (await ok(h.read(`export/public-key/imp-${type}/1`))).keys['1'];
          if (type === 'ed25519') expect(expected).to.equal(Buffer.from(createPublicKey(imported).export({ format: 'jwk' }).x!, 'base64url').toString('base64'));
          else expect(createPublicKey(expected).equals(createPublicKey(imported))).to.equal(true);
        }
      });
    }

    it('imports rsa-3072 and rsa-4096 keys of the right size', async () => {
      for (const bits of [3072, 4096]) {
        const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
        await ok(h.write(`keys/imp-rsa-${bits}/import`, { type: `rsa-${bits}`, ciphertext: await wrapFor(h, pkcs8(privateKey)) }), 204);
        const pub = (await ok(h.read(`keys/imp-rsa-${bits}`))).keys['1'].public_key;
        expect(createPublicKey(pub).equals(createPublicKey(privateKey))).to.equal(true);
      }
    });

    it('uses the imported material: encrypts and decrypts, signs and verifies like the original key', async () => {
      const ciphertext = await encrypted(h, 'imp-aes256-gcm96', 'imported secret');
      expect(await decrypted(h, 'imp-aes256-gcm96', ciphertext)).to.equal('imported secret');
      for (const name of ['imp-ecdsa-p256', 'imp-ed25519', 'imp-rsa-2048']) {
        expect(await verifies(h, name, 'message', await signature(h, name, 'message'))).to.equal(true);
      }
    });

    it('takes every OAEP hash_function, case-insensitively', async () => {
      for (const [i, hash] of (['sha1', 'sha224', 'sha256', 'sha384', 'sha512'] as OaepHash[]).entries()) {
        const name = i % 2 ? hash.toUpperCase() : hash;
        await ok(h.write(`keys/hash-${hash}/import`, { type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32), hash), hash_function: name }), 204);
      }
    });

    it('accepts Vault\'s PKCS#8 quirks: RSA keys under the RSA-PSS OID and Ed25519 seeds in an ECPrivateKey', async () => {
      const { privateKey } = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
      await ok(h.write('keys/pss/import', { type: 'rsa-2048', ciphertext: await wrapFor(h, pkcs8(privateKey)) }), 204);
      expect(await verifies(h, 'pss', 'm', await signature(h, 'pss', 'm'))).to.equal(true);

      const seed = Buffer.from(ed.privateKey.export({ format: 'jwk' }).d!, 'base64url');
      const a = forge.asn1;
      const ecPrivateKey = a.create(a.Class.UNIVERSAL, a.Type.SEQUENCE, true, [
        a.create(a.Class.UNIVERSAL, a.Type.INTEGER, false, a.integerToDer(1).getBytes()),
        a.create(a.Class.UNIVERSAL, a.Type.OCTETSTRING, false, seed.toString('binary')),
      ]);
      const quirk = a.create(a.Class.UNIVERSAL, a.Type.SEQUENCE, true, [
        a.create(a.Class.UNIVERSAL, a.Type.INTEGER, false, a.integerToDer(0).getBytes()),
        a.create(a.Class.UNIVERSAL, a.Type.SEQUENCE, true, [
          a.create(a.Class.UNIVERSAL, a.Type.OID, false, a.oidToDer('1.2.840.10045.2.1').getBytes()),
          a.create(a.Class.UNIVERSAL, a.Type.OID, false, a.oidToDer('1.3.6.1.4.1.11591.15.1').getBytes()),
        ]),
        a.create(a.Class.UNIVERSAL, a.Type.OCTETSTRING, false, a.toDer(ecPrivateKey).getBytes()),
      ]);
      await ok(h.write('keys/ed-quirk/import', { type: 'ed25519', ciphertext: await wrapFor(h, Buffer.from(a.toDer(quirk).getBytes(), 'binary')) }), 204);
      expect((await ok(h.read('keys/ed-quirk'))).keys['1'].public_key).to.equal(
        Buffer.from(ed.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64'),
      );
    });

    it('sets derived, exportable, allow_plaintext_backup, allow_rotation and auto_rotate_period', async () => {
      await ok(
        h.write('keys/all-fields/import', {
          type: 'aes256-gcm96',
          ciphertext: await wrapFor(h, randomBytes(32)),
          derived: true,
          context: b64('ctx'),
          exportable: true,
          allow_plaintext_backup: true,
          allow_rotation: true,
          auto_rotate_period: '2h',
        }),
        204,
      );
      const read = await ok(h.read('keys/all-fields'));
      expect(read).to.include({ derived: true, exportable: true, allow_plaintext_backup: true, imported_key_allow_rotation: true, auto_rotate_period: 7200 });
      const ct = (await ok(h.write('encrypt/all-fields', { plaintext: b64('x'), context: b64('ctx') }))).ciphertext;
      expect((await ok(h.write('decrypt/all-fields', { ciphertext: ct, context: b64('ctx') }))).plaintext).to.equal(b64('x'));
    });

    describe('a public key alone', () => {
      it('imports RSA, ECDSA and Ed25519 public keys that verify and (RSA) encrypt, but cannot sign or decrypt', async () => {
        for (const [name, type, pub] of [
          ['pub-rsa', 'rsa-2048', spkiPem(rsa2048.publicKey)],
          ['pub-ec', 'ecdsa-p384', spkiPem(p384.publicKey)],
          ['pub-ed', 'ed25519', spkiPem(ed.publicKey)],
        ] as const) {
          await ok(h.write(`keys/${name}/import`, { type, public_key: pub }), 204);
          const sign = await h.write(`sign/${name}`, { input: b64('m') });
          expect(sign.status, name).to.equal(400);
        }
        const ct = await encrypted(h, 'pub-rsa', 'for the private holder');
        expect((await h.write('decrypt/pub-rsa', { ciphertext: ct })).status).to.equal(400);
      });

      it('takes an Ed25519 public key as the raw base64 that export returns', async () => {
        const raw = Buffer.from(ed.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
        await ok(h.write('keys/pub-ed-raw/import', { type: 'ed25519', public_key: raw }), 204);
        expect((await ok(h.read('keys/pub-ed-raw'))).keys['1'].public_key).to.equal(raw);
      });

      it('refuses a public key for symmetric types and for derived ed25519 keys', async () => {
        const sym = await h.write('keys/pub-aes/import', { type: 'aes256-gcm96', public_key: spkiPem(rsa2048.publicKey) });
        expect(sym.status).to.equal(400);
        expect(sym.error).to.match(/does not support public_key import/);
        const derived = await h.write('keys/pub-ed-derived/import', { type: 'ed25519', public_key: spkiPem(ed.publicKey), derived: true, context: b64('c') });
        expect(derived.status).to.equal(400);
        expect(derived.error).to.match(/derived ed25519/);
      });
    });

    describe('bad input answers 400 naming the problem, and stores nothing', () => {
      const attempts: Array<[string, () => Promise<Record<string, unknown>>, RegExp]> = [
        ['a truncated ciphertext', async () => ({ type: 'aes256-gcm96', ciphertext: b64(Buffer.from(await wrapFor(h, randomBytes(32)), 'base64').subarray(0, 400)) }), /too short/],
        ['a ciphertext cut inside the wrapped key', async () => ({ type: 'aes256-gcm96', ciphertext: b64(Buffer.from(await wrapFor(h, randomBytes(32)), 'base64').subarray(0, 530)) }), /AES key wrap .* corrupt/],
        ['a corrupted key-wrap part', async () => ({ type: 'aes256-gcm96', ciphertext: b64(flip(Buffer.from(await wrapFor(h, randomBytes(32)), 'base64'), 520)) }), /AES key wrap .* corrupt/],
        ['a corrupted RSA part', async () => ({ type: 'aes256-gcm96', ciphertext: b64(flip(Buffer.from(await wrapFor(h, randomBytes(32)), 'base64'), 10)) }), /ephemeral AES key/],
        ['a ciphertext that is not base64', async () => ({ type: 'aes256-gcm96', ciphertext: 'not*base64' }), /unable to decode ciphertext as base64/],
        ['a wrong hash_function', async () => ({ type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32), 'sha1'), hash_function: 'SHA512' }), /ephemeral AES key/],
        ['an unknown hash_function', async () => ({ type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)), hash_function: 'MD5' }), /unknown hash function: MD5/],
        ['an AES-256 key of 16 bytes', async () => ({ type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(16)) }), /invalid key size 16 bytes for key type aes256-gcm96/],
        ['an AES-128 key of 32 bytes', async () => ({ type: 'aes128-gcm96', ciphertext: await wrapFor(h, randomBytes(32)) }), /invalid key size 32 bytes/],
        ['an hmac key of 16 bytes', async () => ({ type: 'hmac', ciphertext: await wrapFor(h, randomBytes(16)) }), /invalid key size 16 bytes for key type hmac/],
        ['an RSA key for an ECDSA type', async () => ({ type: 'ecdsa-p256', ciphertext: await wrapFor(h, pkcs8(rsa2048.privateKey)) }), /invalid key type: expected ecdsa-p256, got an RSA key/],
        ['a P-384 key for ecdsa-p256', async () => ({ type: 'ecdsa-p256', ciphertext: await wrapFor(h, pkcs8(p384.privateKey)) }), /invalid curve: expected P-256, got P-384/],
        ['a 2048-bit key for rsa-4096', async () => ({ type: 'rsa-4096', ciphertext: await wrapFor(h, pkcs8(rsa2048.privateKey)) }), /invalid key size: expected 512 bytes, got 256 bytes/],
        ['bytes that are no private key', async () => ({ type: 'rsa-2048', ciphertext: await wrapFor(h, randomBytes(100)) }), /not a PKCS#8 DER private key/],
        ['an Ed25519 public key for an ECDSA type', async () => ({ type: 'ecdsa-p256', public_key: spkiPem(ed.publicKey) }), /invalid key type/],
        ['a public_key that is a private key', async () => ({ type: 'rsa-2048', public_key: rsa2048.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }), /private key/],
        ['a public_key that is not PEM', async () => ({ type: 'rsa-2048', public_key: 'hello' }), /not in PEM format/],
        ['both ciphertext and public_key', async () => ({ type: 'rsa-2048', ciphertext: await wrapFor(h, pkcs8(rsa2048.privateKey)), public_key: spkiPem(rsa2048.publicKey) }), /only one of/],
        ['neither ciphertext nor public_key', async () => ({ type: 'aes256-gcm96' }), /ciphertext or public_key/],
        ['no type', async () => ({ ciphertext: await wrapFor(h, randomBytes(32)) }), /missing required field "type"/],
        ['an unknown type', async () => ({ type: 'aes512', ciphertext: await wrapFor(h, randomBytes(32)) }), /unknown key type aes512/],
        ['convergent_encryption', async () => ({ type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)), derived: true, context: b64('c'), convergent_encryption: true }), /convergent encryption/],
        ['auto_rotate_period without allow_rotation', async () => ({ type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)), auto_rotate_period: '2h' }), /allow_rotation must be set/],
        ['derived without context', async () => ({ type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)), derived: true }), /context/],
        ['derived for a type without derivation', async () => ({ type: 'ecdsa-p256', ciphertext: await wrapFor(h, pkcs8(p256.privateKey)), derived: true, context: b64('c') }), /not supported for keys of type ecdsa-p256/],
      ];
      for (const [what, body, message] of attempts) {
        it(`refuses ${what}`, async () => {
          const data = await body();
          const before = await snapshot(h.storage);
          const res = await h.write('keys/refused/import', data);
          expect(res.status, res.error).to.equal(400);
          expect(res.error).to.match(message);
          expect(await snapshot(h.storage)).to.deep.equal(before);
          expect((await h.read('keys/refused')).status).to.equal(404);
        });
      }

      it('refuses importing over an existing key, generated or imported, and leaves it as it was', async () => {
        await ok(h.write('keys/existing'));
        for (const name of ['existing', 'imp-aes256-gcm96']) {
          const before = await snapshot(h.storage);
          const res = await h.write(`keys/${name}/import`, { type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)) });
          expect(res.status).to.equal(400);
          expect(res.error).to.match(/cannot be used with an existing key/);
          expect(await snapshot(h.storage)).to.deep.equal(before);
        }
      });

      it('refuses a ciphertext on a mount that has no wrapping key yet, without creating one', async () => {
        const fresh = await TransitHarness.create();
        const res = await fresh.write('keys/x/import', { type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)) });
        expect(res.status).to.equal(400);
        expect(res.error).to.match(/no wrapping key yet/);
        expect(await snapshot(fresh.storage)).to.deep.equal({});
      });
    });
  });

  describe('import_version', () => {
    it('adds a version to an imported key (204), which then encrypts with it while older ciphertexts still decrypt', async () => {
      await ok(h.write('keys/iv/import', { type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)) }), 204);
      const old = await encrypted(h, 'iv', 'v1 data');
      await ok(h.write('keys/iv/import_version', { ciphertext: await wrapFor(h, randomBytes(32)) }), 204);
      expect((await ok(h.read('keys/iv'))).latest_version).to.equal(2);
      expect(await encrypted(h, 'iv', 'v2 data')).to.match(/^vault:v2:/);
      expect(await decrypted(h, 'iv', old)).to.equal('v1 data');
    });

    it('adds the private key to the latest public-only version when it matches, and the key can then sign', async () => {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      await ok(h.write('keys/half/import', { type: 'ecdsa-p256', public_key: spkiPem(publicKey) }), 204);
      expect((await h.write('sign/half', { input: b64('m') })).status).to.equal(400);
      await ok(h.write('keys/half/import_version', { ciphertext: await wrapFor(h, pkcs8(privateKey)) }), 204);
      const read = await ok(h.read('keys/half'));
      expect(read.latest_version).to.equal(1);
      expect(await verifies(h, 'half', 'm', await signature(h, 'half', 'm'))).to.equal(true);
    });

    it('adds a new version for a private key that does not match the public-only latest version', async () => {
      const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      await ok(h.write('keys/half2/import', { type: 'ecdsa-p256', public_key: spkiPem(publicKey) }), 204);
      await ok(h.write('keys/half2/import_version', { ciphertext: await wrapFor(h, pkcs8(other.privateKey)) }), 204);
      expect((await ok(h.read('keys/half2'))).latest_version).to.equal(2);
    });

    it('completes a named public-only version, and refuses a mismatched key, a second public key or an already complete version', async () => {
      const v1 = generateKeyPairSync('ed25519');
      const v2 = generateKeyPairSync('ed25519');
      await ok(h.write('keys/named/import', { type: 'ed25519', public_key: spkiPem(v1.publicKey) }), 204);
      await ok(h.write('keys/named/import_version', { public_key: spkiPem(v2.publicKey) }), 204);
      const before = await snapshot(h.storage);
      const mismatch = await h.write('keys/named/import_version', { version: 1, ciphertext: await wrapFor(h, pkcs8(v2.privateKey)) });
      expect(mismatch.status).to.equal(400);
      expect(mismatch.error).to.match(/does not match the public key of version 1/);
      const publicAgain = await h.write('keys/named/import_version', { version: 1, public_key: spkiPem(v1.publicKey) });
      expect(publicAgain.error).to.match(/already has a public key/);
      const missing = await h.write('keys/named/import_version', { version: 7, ciphertext: await wrapFor(h, pkcs8(v1.privateKey)) });
      expect(missing.error).to.match(/version 7 does not exist/);
      expect(await snapshot(h.storage)).to.deep.equal(before);

      await ok(h.write('keys/named/import_version', { version: '1', ciphertext: await wrapFor(h, pkcs8(v1.privateKey)) }), 204);
      const signed = (await ok(h.write('sign/named', { input: b64('m'), key_version: 1 }))).signature;
      expect(signed).to.match(/^vault:v1:/);
      expect(await verifies(h, 'named', 'm', signed)).to.equal(true);
      const again = await h.write('keys/named/import_version', { version: 1, ciphertext: await wrapFor(h, pkcs8(v1.privateKey)) });
      expect(again.error).to.match(/already has its private key/);
    });

    it('sets key_size of an hmac key from the imported version', async () => {
      await ok(h.write('keys/hm/import', { type: 'hmac', ciphertext: await wrapFor(h, randomBytes(32)) }), 204);
      await ok(h.write('keys/hm/import_version', { ciphertext: await wrapFor(h, randomBytes(64)) }), 204);
      expect((await ok(h.read('keys/hm'))).key_size).to.equal(64);
    });

    it('is refused for keys generated here, for missing keys, and for imported keys rotated here', async () => {
      await ok(h.write('keys/generated'));
      const generated = await h.write('keys/generated/import_version', { ciphertext: await wrapFor(h, randomBytes(32)) });
      expect(generated.status).to.equal(400);
      expect(generated.error).to.match(/only be used with an imported key/);
      const missing = await h.write('keys/nope/import_version', { ciphertext: await wrapFor(h, randomBytes(32)) });
      expect(missing.error).to.match(/no key found with name nope/);

      await ok(h.write('keys/fixed/import', { type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)) }), 204);
      const rotate = await h.write('keys/fixed/rotate');
      expect(rotate.status).to.equal(400);
      expect(rotate.error).to.match(/does not allow rotation/);

      await ok(h.write('keys/rotatable/import', { type: 'aes256-gcm96', ciphertext: await wrapFor(h, randomBytes(32)), allow_rotation: true }), 204);
      await ok(h.write('keys/rotatable/rotate'));
      expect((await ok(h.read('keys/rotatable'))).imported_key).to.equal(false);
      const before = await snapshot(h.storage);
      const after = await h.write('keys/rotatable/import_version', { ciphertext: await wrapFor(h, randomBytes(32)) });
      expect(after.status).to.equal(400);
      expect(after.error).to.match(/only be used with an imported key/);
      expect(await snapshot(h.storage)).to.deep.equal(before);
    });

    it('refuses key material of the wrong size for the key\'s type and stores nothing', async () => {
      const before = await snapshot(h.storage);
      const res = await h.write('keys/iv/import_version', { ciphertext: await wrapFor(h, randomBytes(24)) });
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/invalid key size 24 bytes/);
      expect(await snapshot(h.storage)).to.deep.equal(before);
    });
  });

  describe('byok-export', () => {
    let a: TransitHarness;
    let b: TransitHarness;
    before(async () => {
      a = await TransitHarness.create();
      b = await TransitHarness.create();
      // B's wrapping key, imported into A as a public-only RSA-4096 key: the destination of A's exports.
      await ok(a.write('keys/to-b/import', { type: 'rsa-4096', public_key: (await ok(b.read('wrapping_key'))).public_key }), 204);
    });

    /** Moves version(s) of `name` from A to B through byok-export and import (+ import_version). */
    async function move(name: string, type: string): Promise<void> {
      const exported = await ok(a.read(`byok-export/to-b/${name}`));
      expect(exported).to.include({ name, type });
      const versions = Object.keys(exported.keys).sort((x, y) => Number(x) - Number(y));
      await ok(b.write(`keys/${name}/import`, { type, ciphertext: exported.keys[versions[0]!] }), 204);
      for (const v of versions.slice(1)) await ok(b.write(`keys/${name}/import_version`, { ciphertext: exported.keys[v] }), 204);
    }

    it('moves symmetric keys (all versions): B decrypts A\'s ciphertexts of every version', async () => {
      for (const type of ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305']) {
        const name = `sym-${type}`;
        await ok(a.write(`keys/${name}`, { type, exportable: true }));
        const v1 = await encrypted(a, name, `${type} one`);
        await ok(a.write(`keys/${name}/rotate`));
        const v2 = await encrypted(a, name, `${type} two`);
        await move(name, type);
        expect(await decrypted(b, name, v1)).to.equal(`${type} one`);
        expect(await decrypted(b, name, v2)).to.equal(`${type} two`);
      }
    });

    it('moves asymmetric keys: B verifies A\'s signatures and decrypts A\'s RSA ciphertexts', async () => {
      for (const type of ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519', 'rsa-2048']) {
        const name = `asym-${type}`;
        await ok(a.write(`keys/${name}`, { type, exportable: true }));
        const sig = await signature(a, name, 'signed in A');
        await move(name, type);
        expect(await verifies(b, name, 'signed in A', sig), type).to.equal(true);
        expect(await verifies(b, name, 'tampered', sig), type).to.equal(false);
        expect(await verifies(a, name, 'signed in B', await signature(b, name, 'signed in B')), type).to.equal(true);
      }
      expect(await decrypted(b, 'asym-rsa-2048', await encrypted(a, 'asym-rsa-2048', 'rsa secret'))).to.equal('rsa secret');
    });

    it('moves hmac keys: B verifies A\'s HMACs', async () => {
      await ok(a.write('keys/mac', { type: 'hmac', key_size: 64, exportable: true }));
      const mac = (await ok(a.write('hmac/mac', { input: b64('data') }))).hmac;
      await move('mac', 'hmac');
      expect((await ok(b.write('verify/mac', { input: b64('data'), hmac: mac }))).valid).to.equal(true);
    });

    it('exports latest, N and vN, with the hash parameter', async () => {
      await ok(a.write('keys/vers', { exportable: true }));
      await ok(a.write('keys/vers/rotate'));
      expect(Object.keys((await ok(a.read('byok-export/to-b/vers/latest'))).keys)).to.deep.equal(['2']);
      expect(Object.keys((await ok(a.read('byok-export/to-b/vers/1'))).keys)).to.deep.equal(['1']);
      const v1 = (await ok(a.read('byok-export/to-b/vers/v1', { hash: 'SHA512' }))).keys['1'];
      await ok(b.write('keys/vers-sha512/import', { type: 'aes256-gcm96', ciphertext: v1, hash_function: 'sha512' }), 204);
    });

    it('refuses a missing destination or source, a non-exportable source, a non-RSA destination and bad versions', async () => {
      await ok(a.write('keys/secret'));
      await ok(a.write('keys/ec-dest', { type: 'ecdsa-p256' }));
      const cases: Array<[string, RegExp]> = [
        ['byok-export/nowhere/vers', /no such destination key/],
        ['byok-export/to-b/nothing', /no such source key/],
        ['byok-export/to-b/secret', /key is not exportable/],
        ['byok-export/ec-dest/vers', /must be an RSA key/],
        ['byok-export/to-b/vers/9', /version does not exist/],
        ['byok-export/to-b/vers/x', /invalid key version/],
      ];
      for (const [path, message] of cases) {
        const res = await a.read(path);
        expect(res.status, path).to.equal(400);
        expect(res.error, path).to.match(message);
      }
      const hash = await a.read('byok-export/to-b/vers', { hash: 'MD5' });
      expect(hash.error).to.match(/unknown hash function/);
    });
  });

  describe('the key wrap is RFC 5649 (what Vault\'s Tink KWP implements)', () => {
    it('a reference implementation here reproduces the RFC 5649 §6 vectors', () => {
      const kek = Buffer.from('5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8', 'hex');
      expect(kwpWrap(kek, Buffer.from('c37b7e6492584340bed12207808941155068f738', 'hex')).toString('hex')).to.equal(
        '138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a',
      );
      expect(kwpWrap(kek, Buffer.from('466f7250617369', 'hex')).toString('hex')).to.equal('afbeb0f07dfbf5419200f2ccb50bb24f');
    });

    it('import accepts material wrapped by the reference, and byok-export\'s output unwraps with it', async () => {
      const wrapping = createPublicKey((await ok(h.read('wrapping_key'))).public_key);
      const aesKey = randomBytes(32);
      const material = randomBytes(32);
      const rsaPart = publicEncrypt({ key: wrapping, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, aesKey);
      await ok(h.write('keys/by-reference/import', { type: 'aes256-gcm96', exportable: true, ciphertext: b64(Buffer.concat([rsaPart, kwpWrap(aesKey, material)])) }), 204);
      expect((await ok(h.read('export/encryption-key/by-reference/1'))).keys['1']).to.equal(b64(material));

      const destination = generateKeyPairSync('rsa', { modulusLength: 4096 });
      await ok(h.write('keys/reference-destination/import', { type: 'rsa-4096', public_key: spkiPem(destination.publicKey) }), 204);
      const blob = Buffer.from((await ok(h.read('byok-export/reference-destination/by-reference/1'))).keys['1'], 'base64');
      const unwrappedAes = privateDecrypt({ key: destination.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, blob.subarray(0, 512));
      expect(kwpUnwrap(unwrappedAes, blob.subarray(512)).equals(material)).to.equal(true);
    });
  });

  describe('between two mounts over HTTP', () => {
    let server: RunningServer & { client: TestClient; rootToken: string };
    before(async () => {
      server = await startUnsealedServer({ plugins: [] });
      for (const mount of ['transit-a', 'transit-b']) {
        expect((await server.client.post(`sys/mounts/${mount}`, { type: 'transit' })).status).to.equal(204);
      }
    });
    after(() => server.close());

    it('byok-export from A, import into B: B decrypts A\'s ciphertexts and verifies A\'s signatures', async () => {
      const c = server.client;
      const wrapping = await c.get('transit-b/wrapping_key');
      expect(wrapping.status).to.equal(200);
      expect((await c.post('transit-a/keys/b-wrapping/import', { type: 'rsa-4096', public_key: wrapping.body.data.public_key })).status).to.equal(204);
      for (const [name, type] of [['data', 'aes256-gcm96'], ['signer', 'ecdsa-p256'], ['edsigner', 'ed25519']] as const) {
        expect((await c.post(`transit-a/keys/${name}`, { type, exportable: true })).status).to.equal(200);
        const exported = await c.get(`transit-a/byok-export/b-wrapping/${name}/latest`);
        expect(exported.status, exported.text).to.equal(200);
        const imported = await c.post(`transit-b/keys/${name}/import`, { type, ciphertext: exported.body.data.keys['1'] });
        expect(imported.status, imported.text).to.equal(204);
      }
      const ct = (await c.post('transit-a/encrypt/data', { plaintext: b64('over http') })).body.data.ciphertext;
      expect((await c.post('transit-b/decrypt/data', { ciphertext: ct })).body.data.plaintext).to.equal(b64('over http'));
      for (const name of ['signer', 'edsigner']) {
        const sig = (await c.post(`transit-a/sign/${name}`, { input: b64('hello') })).body.data.signature;
        expect((await c.post(`transit-b/verify/${name}`, { input: b64('hello'), signature: sig })).body.data.valid, name).to.equal(true);
      }
    });

    it('export from A, import into B, in private and public forms', async () => {
      const c = server.client;
      expect((await c.post('transit-a/keys/exp-rsa', { type: 'rsa-2048', exportable: true })).status).to.equal(200);
      expect((await c.post('transit-a/keys/exp-ed', { type: 'ed25519', exportable: true })).status).to.equal(200);
      const wrappingB = createPublicKey((await c.get('transit-b/wrapping_key')).body.data.public_key);

      // Private form: the exported PKCS#1 PEM as PKCS#8 DER, wrapped for B.
      const rsaPem = (await c.get('transit-a/export/encryption-key/exp-rsa/1')).body.data.keys['1'];
      const rsaDer = pkcs8(createPrivateKey(rsaPem));
      expect((await c.post('transit-b/keys/exp-rsa/import', { type: 'rsa-2048', ciphertext: wrapKeyMaterial(wrappingB, rsaDer, 'sha256').toString('base64') })).status).to.equal(204);
      const ct = (await c.post('transit-a/encrypt/exp-rsa', { plaintext: b64('private form') })).body.data.ciphertext;
      expect((await c.post('transit-b/decrypt/exp-rsa', { ciphertext: ct })).body.data.plaintext).to.equal(b64('private form'));

      // Public form: B verifies A's Ed25519 signatures with the exported public key.
      const edPublic = (await c.get('transit-a/export/public-key/exp-ed/latest')).body.data.keys['1'];
      expect((await c.post('transit-b/keys/exp-ed/import', { type: 'ed25519', public_key: edPublic })).status).to.equal(204);
      const sig = (await c.post('transit-a/sign/exp-ed', { input: b64('public form') })).body.data.signature;
      expect((await c.post('transit-b/verify/exp-ed', { input: b64('public form'), signature: sig })).body.data.valid).to.equal(true);
      expect((await c.post('transit-b/sign/exp-ed', { input: b64('x') })).status).to.equal(400);
    });
  });
});

/** RFC 5649 key wrap with padding, written out from the RFC as an independent reference (AES-ECB from node). */
function kwpWrap(kek: Buffer, plain: Buffer): Buffer {
  const aes = (block: Buffer) => {
    const c = createCipheriv(`aes-${kek.length * 8}-ecb`, kek, null).setAutoPadding(false);
    return Buffer.concat([c.update(block), c.final()]);
  };
  const aiv = Buffer.alloc(8);
  aiv.writeUInt32BE(0xa65959a6, 0);
  aiv.writeUInt32BE(plain.length, 4);
  const padded = Buffer.concat([plain, Buffer.alloc((8 - (plain.length % 8)) % 8)]);
  if (padded.length === 8) return aes(Buffer.concat([aiv, padded]));
  const n = padded.length / 8;
  const r = Array.from({ length: n }, (_, i) => padded.subarray(8 * i, 8 * i + 8));
  let a = aiv;
  for (let j = 0; j <= 5; j++) {
    for (let i = 0; i < n; i++) {
      const b = aes(Buffer.concat([a, r[i]!]));
      a = Buffer.from(b.subarray(0, 8));
      a.writeBigUInt64BE(a.readBigUInt64BE(0) ^ BigInt(n * j + i + 1), 0);
      r[i] = b.subarray(8);
    }
  }
  return Buffer.concat([a, ...r]);
}

/** The inverse of kwpWrap (for blobs longer than one block), checking the RFC 5649 integrity value. */
function kwpUnwrap(kek: Buffer, wrapped: Buffer): Buffer {
  const aesInverse = (block: Buffer) => {
    const d = createDecipheriv(`aes-${kek.length * 8}-ecb`, kek, null).setAutoPadding(false);
    return Buffer.concat([d.update(block), d.final()]);
  };
  const n = wrapped.length / 8 - 1;
  let a = Buffer.from(wrapped.subarray(0, 8));
  const r = Array.from({ length: n }, (_, i) => wrapped.subarray(8 * (i + 1), 8 * (i + 2)));
  for (let j = 5; j >= 0; j--) {
    for (let i = n - 1; i >= 0; i--) {
      a.writeBigUInt64BE(a.readBigUInt64BE(0) ^ BigInt(n * j + i + 1), 0);
      const b = aesInverse(Buffer.concat([a, r[i]!]));
      a = Buffer.from(b.subarray(0, 8));
      r[i] = b.subarray(8);
    }
  }
  expect(a.readUInt32BE(0)).to.equal(0xa65959a6);
  return Buffer.concat(r).subarray(0, a.readUInt32BE(4));
}

function flip(bytes: Buffer, index: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[index]! ^= 0xff;
  return copy;
}
