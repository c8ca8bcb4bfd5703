/**
 * x25519 keys (key agreement only, beyond OpenBao): RFC 7748 §6.1's vectors through derive-key,
 * the peer key as raw base64 or PEM, the all-zero secret refused, and the key's lifecycle (public
 * key shown and exported, nothing private exported, backup and restore, BYOK with the consistency
 * check, rotation, trim).
 */
import { expect } from 'chai';
import { createCipheriv, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ok, wrapFor } from './byok-helpers.js';
import { TransitHarness } from './harness.js';

interface X25519Vectors {
  alice_private: string;
  alice_public: string;
  bob_private: string;
  bob_public: string;
  shared_secret: string;
}
const vectors = JSON.parse(readFileSync(new URL('../../../../test/fixtures/transit-vectors/x25519.json', import.meta.url), 'utf8')) as X25519Vectors;
const hex = (text: string) => Buffer.from(text, 'hex');
const PKCS8_PREFIX = hex('302e020100300506032b656e04220420');

/** The AES-256-GCM key derive-key stores for a shared secret: HKDF-SHA-256, no salt, no info. */
const agreedKey = (secret: Buffer) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.alloc(0), 32));

/** vault:v1:… sealed by the peer with its own copy of an aes256-gcm96 key. */
function sealAsPeer(key: Buffer, plaintext: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `vault:v1:${Buffer.concat([nonce, body]).toString('base64')}`;
}

async function opens(h: TransitHarness, name: string, key: Buffer): Promise<boolean> {
  const res = await h.write(`decrypt/${name}`, { ciphertext: sealAsPeer(key, 'agreed') });
  return res.status === 200 && Buffer.from(res.data.plaintext, 'base64').toString() === 'agreed';
}

describe('transit x25519 keys and derive-key with X25519', function () {
  this.timeout(30_000);
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
  });

  it('agrees on RFC 7748 section 6.1\'s shared secret: Alice\'s imported key with Bob\'s public key, raw base64 or PEM', async () => {
    await ok(h.write('keys/alice/import', { type: 'x25519', ciphertext: await wrapFor(h, hex(vectors.alice_private)) }), 204);
    expect((await ok(h.read('keys/alice'))).keys['1']).to.include({ name: 'x25519', public_key: hex(vectors.alice_public).toString('base64') });
    const expected = agreedKey(hex(vectors.shared_secret));

    await ok(h.write('derive-key/raw', { base_key_name: 'alice', peer_public_key: hex(vectors.bob_public).toString('base64') }), 204);
    expect(await opens(h, 'raw', expected)).to.equal(true);
    const bobPem = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: hex(vectors.bob_public).toString('base64url') }, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    await ok(h.write('derive-key/pem', { base_key_name: 'alice', peer_public_key: bobPem }), 204);
    expect(await opens(h, 'pem', expected)).to.equal(true);
    expect(await opens(h, 'pem', agreedKey(randomBytes(32)))).to.equal(false);
  });

  it('makes a key the peer agrees on from its own private key and the public key keys/:name shows', async () => {
    await ok(h.write('keys/base', { type: 'x25519' }));
    const read = await ok(h.read('keys/base'));
    expect(read).to.include({ type: 'x25519', supports_encryption: false, supports_decryption: false, supports_signing: false, supports_derivation: false });
    const basePublic = Buffer.from(read.keys['1'].public_key as string, 'base64');
    expect(basePublic).to.have.length(32);
    const peer = generateKeyPairSync('x25519');
    const secret = diffieHellman({ privateKey: peer.privateKey, publicKey: createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: basePublic.toString('base64url') }, format: 'jwk' }) });
    const peerRaw = Buffer.from(peer.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
    await ok(h.write('derive-key/agreed', { base_key_name: 'base', peer_public_key: peerRaw, derived_key_type: 'aes256-gcm96' }), 204);
    expect(await opens(h, 'agreed', agreedKey(secret))).to.equal(true);
  });

  it('refuses a small-order peer key (all-zero shared secret), a peer key of another kind, and a malformed one, each with a 400', async () => {
    await ok(h.write('keys/base', { type: 'x25519' }));
    const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const one = Buffer.alloc(32);
    one[0] = 1;
    const cases: [string, RegExp][] = [
      [Buffer.alloc(32).toString('base64'), /small order: the X25519 shared secret would be all zeros/],
      [one.toString('base64'), /small order/],
      [ed, /not an X25519 key/],
      [p256, /not an X25519 key/],
      [randomBytes(31).toString('base64'), /peer_public_key of an x25519 base key must be base64 of the raw 32-byte public key or a PEM/],
      ['-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----', /failed to parse supplied peer public key PEM/],
    ];
    for (const [peer_public_key, message] of cases) {
      const res = await h.write('derive-key/new', { base_key_name: 'base', peer_public_key });
      expect(res.status, peer_public_key).to.equal(400);
      expect(res.error).to.match(message);
    }
    expect((await h.read('keys/new')).status).to.equal(404);
  });

  it('neither encrypts nor signs, exports only its public key, and is not a base key for ECDH over P-256 nor the reverse', async () => {
    await ok(h.write('keys/x', { type: 'x25519', exportable: true }));
    expect((await h.write('encrypt/x', { plaintext: 'aGk=' })).status).to.equal(400);
    expect((await h.write('sign/x', { input: 'aGk=' })).status).to.equal(400);
    const pub = (await ok(h.read('export/public-key/x'))).keys['1'];
    expect(pub).to.equal((await ok(h.read('keys/x'))).keys['1'].public_key);
    for (const type of ['encryption-key', 'signing-key', 'certificate-chain', 'cmac-key']) expect((await h.read(`export/${type}/x`)).status, type).to.equal(400);
    expect((await h.write('keys/d', { type: 'x25519', derived: true })).error).to.match(/not supported for keys of type x25519/);

    await ok(h.write('keys/ec', { type: 'ecdsa-p256' }));
    expect((await h.write('derive-key/n', { base_key_name: 'ec', peer_public_key: pub })).error).to.match(/failed to parse supplied peer public key PEM/);
  });

  it('survives backup and restore with every version agreeing as before, under a type number neither Vault nor OpenBao uses', async () => {
    await ok(h.write('keys/k', { type: 'x25519', exportable: true, allow_plaintext_backup: true }));
    await ok(h.write('keys/k/rotate'));
    const peer = generateKeyPairSync('x25519');
    const peerRaw = Buffer.from(peer.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
    const backup = (await ok(h.read('backup/k'))).backup as string;
    const blob = JSON.parse(Buffer.from(backup, 'base64').toString('utf8'));
    expect(blob.policy.type).to.equal(1022);
    expect(Buffer.from(blob.policy.keys['2'].key as string, 'base64')).to.have.length(32);
    await ok(h.write('restore/copy', { backup }), 204);
    const original = (await ok(h.read('keys/k'))).keys;
    expect((await ok(h.read('keys/copy'))).keys['1'].public_key).to.equal(original['1'].public_key);
    for (const version of [1, 2]) {
      await ok(h.write(`derive-key/copy-${version}`, { base_key_name: 'copy', base_key_version: version, peer_public_key: peerRaw }), 204);
      const basePublic = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(original[String(version)].public_key, 'base64').toString('base64url') }, format: 'jwk' });
      expect(await opens(h, `copy-${version}`, agreedKey(diffieHellman({ privateKey: peer.privateKey, publicKey: basePublic })))).to.equal(true);
    }

    blob.policy.keys['1'].public_key = original['2'].public_key;
    const mismatched = await h.write('restore/bad', { backup: Buffer.from(JSON.stringify(blob)).toString('base64') });
    expect(mismatched.status).to.equal(400);
    expect(mismatched.error).to.match(/public_key is not the public key of key/);
  });

  it('imports a PKCS#8 key, refuses one whose embedded public key is another key\'s, rotates and trims', async () => {
    const pkcs8 = Buffer.concat([PKCS8_PREFIX, hex(vectors.bob_private)]);
    await ok(h.write('keys/bob/import', { type: 'x25519', ciphertext: await wrapFor(h, pkcs8), allow_rotation: true }), 204);
    expect((await ok(h.read('keys/bob'))).keys['1'].public_key).to.equal(hex(vectors.bob_public).toString('base64'));
    expect(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).asymmetricKeyType).to.equal('x25519');

    // RFC 8410 §7 OneAsymmetricKey v2: Bob's private key with Alice's public key beside it.
    const body = Buffer.concat([hex('020101300506032b656e04220420'), hex(vectors.bob_private), hex('812100'), hex(vectors.alice_public)]);
    const mixed = await h.write('keys/mixed/import', { type: 'x25519', ciphertext: await wrapFor(h, Buffer.concat([Buffer.from([0x30, body.length]), body])) });
    expect(mixed.status).to.equal(400);
    expect(mixed.error).to.match(/X25519 public key in the key material does not belong to its private key/);
    const ed = await h.write('keys/ed/import', { type: 'x25519', ciphertext: await wrapFor(h, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'der' })) });
    expect(ed.error).to.match(/expected x25519, got an Ed25519 key/);
    expect((await h.read('keys/mixed')).status).to.equal(404);

    await ok(h.write('keys/bob/rotate'));
    await ok(h.write('keys/bob/config', { min_decryption_version: 2, min_encryption_version: 2 }));
    await ok(h.write('keys/bob/trim', { min_available_version: 2 }));
    expect((await ok(h.read('keys/bob'))).keys).to.have.keys('2');
    const old = await h.write('derive-key/old', { base_key_name: 'bob', base_key_version: 1, peer_public_key: hex(vectors.alice_public).toString('base64') });
    expect(old.error).to.match(/less than the minimum available key version/);
  });

  it('imports a public key only, which derive-key refuses as a base key for lack of a private half', async () => {
    await ok(h.write('keys/pub/import', { type: 'x25519', public_key: hex(vectors.alice_public).toString('base64') }), 204);
    const res = await h.write('derive-key/n', { base_key_name: 'pub', peer_public_key: hex(vectors.bob_public).toString('base64') });
    expect(res.error).to.match(/has no private key/);
  });

  it('describes x25519 in derive-key\'s help and OpenAPI', () => {
    const path = (h.backend.help('derive-key/k').openapi as any).paths['derive-key/{name}'];
    expect(path.fields.peer_public_key.description).to.match(/x25519/);
    expect(path.description).to.match(/X25519/);
  });
});
