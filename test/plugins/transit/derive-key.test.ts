/**
 * derive-key (ECDH key agreement, OpenBao 2.2): the key transit stores is the one the peer derives
 * on its own from its private key and the base key's public key, checked by sealing with the
 * peer's copy and opening through transit; and OpenBao's refusals.
 */
import { expect } from 'chai';
import { createCipheriv, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { TransitHarness } from './harness.js';

const CURVES = { 'ecdsa-p256': 'prime256v1', 'ecdsa-p384': 'secp384r1', 'ecdsa-p521': 'secp521r1' } as const;
const KEY_BYTES = { 'aes128-gcm96': 16, 'aes256-gcm96': 32, 'chacha20-poly1305': 32, 'xchacha20-poly1305': 32 } as const;

/** vault:v1:… made by the peer with its own copy of the agreed key. */
function sealAsPeer(type: keyof typeof KEY_BYTES, key: Buffer, plaintext: Buffer): string {
  if (type === 'xchacha20-poly1305') {
    const nonce = randomBytes(24);
    return `vault:v1:${Buffer.concat([nonce, xchacha20poly1305(key, nonce).encrypt(plaintext)]).toString('base64')}`;
  }
  const nonce = randomBytes(12);
  const cipher = type === 'chacha20-poly1305' ? createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 }) : createCipheriv(`aes-${key.length * 8}-gcm`, key, nonce);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), (cipher as any).getAuthTag()]);
  return `vault:v1:${Buffer.concat([nonce, body]).toString('base64')}`;
}

describe('transit derive-key (ECDH)', function () {
  this.timeout(30_000);
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
  });

  for (const [baseType, curve] of Object.entries(CURVES)) {
    it(`${baseType}: the stored key is the one the peer derives itself, for every derived key type`, async () => {
      await h.write('keys/base', { type: baseType });
      const basePublic = createPublicKey((await h.read('keys/base')).data.keys['1'].public_key);
      const peer = generateKeyPairSync('ec', { namedCurve: curve });
      const peerPem = peer.publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const secret = diffieHellman({ privateKey: peer.privateKey, publicKey: basePublic });
      for (const type of Object.keys(KEY_BYTES) as (keyof typeof KEY_BYTES)[]) {
        const res = await h.write(`derive-key/agreed-${type}`, { base_key_name: 'base', peer_public_key: peerPem, derived_key_type: type });
        expect(res.status, res.error).to.equal(204);
        const read = (await h.read(`keys/agreed-${type}`)).data;
        expect(read).to.include({ type, imported_key: true, exportable: false, latest_version: 1 });
        const peerCopy = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.alloc(0), KEY_BYTES[type]));
        const opened = await h.write(`decrypt/agreed-${type}`, { ciphertext: sealAsPeer(type, peerCopy, Buffer.from(`agreed ${type}`)) });
        expect(Buffer.from(opened.data.plaintext, 'base64').toString()).to.equal(`agreed ${type}`);
      }
    });
  }

  it('uses the base key version asked for, and refuses versions out of range', async () => {
    await h.write('keys/base', { type: 'ecdsa-p256' });
    await h.write('keys/base/rotate');
    const v1Public = createPublicKey((await h.read('keys/base')).data.keys['1'].public_key);
    const peer = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const peerPem = peer.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect((await h.write('derive-key/old', { base_key_name: 'base', base_key_version: 1, peer_public_key: peerPem })).status).to.equal(204);
    const key = Buffer.from(hkdfSync('sha256', diffieHellman({ privateKey: peer.privateKey, publicKey: v1Public }), Buffer.alloc(0), Buffer.alloc(0), 32));
    const opened = await h.write('decrypt/old', { ciphertext: sealAsPeer('aes256-gcm96', key, Buffer.from('v1')) });
    expect(Buffer.from(opened.data.plaintext, 'base64').toString()).to.equal('v1');
    expect((await h.write('derive-key/x', { base_key_name: 'base', base_key_version: 3, peer_public_key: peerPem })).error).to.match(/higher than the latest key version/);
    expect((await h.write('derive-key/x', { base_key_name: 'base', base_key_version: -1, peer_public_key: peerPem })).error).to.match(/negative/);
  });

  it('refuses what OpenBao refuses, each with a 400 that says why, and writes nothing', async () => {
    await h.write('keys/base', { type: 'ecdsa-p256' });
    await h.write('keys/sym', { type: 'aes256-gcm96' });
    const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ base_key_name: 'base', peer_public_key: p256, key_derivation_algorithm: 'x25519' }, /key derivation algorithm x25519 not supported/],
      [{ base_key_name: 'base' }, /peer public key not provided/],
      [{ base_key_name: 'base', peer_public_key: p256, derived_key_type: 'rsa-2048' }, /unknown key type rsa-2048/],
      [{ base_key_name: 'missing', peer_public_key: p256 }, /specified base key not found/],
      [{ base_key_name: 'sym', peer_public_key: p256 }, /does not support key agreement/],
      [{ base_key_name: 'base', peer_public_key: 'not a pem' }, /failed to parse supplied peer public key PEM/],
      [{ base_key_name: 'base', peer_public_key: ed }, /not an ECDSA key/],
      [{ base_key_name: 'base', peer_public_key: p384 }, /does not match peer public key curve/],
    ];
    for (const [body, message] of cases) {
      const res = await h.write('derive-key/new', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.error).to.match(message);
    }
    expect((await h.read('keys/new')).status).to.equal(404);
    expect((await h.write('derive-key/sym', { base_key_name: 'base', peer_public_key: p256 })).error).to.match(/already exists/);
  });
});
