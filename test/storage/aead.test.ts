import { expect } from 'chai';
import { IntegrityError, InternalError } from '../../core/errors.js';
import { gcmOpen, gcmSeal, gcmSealWithNonce, zeroize } from '../../storage/aead.js';
import { bytes, text } from './helpers.js';

const hex = (h: string): Buffer => Buffer.from(h, 'hex');

/** AES-256-GCM vectors from McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 13, 14, 16. */
const vectors = [
  {
    name: 'test case 13 (empty plaintext)',
    key: '00'.repeat(32), nonce: '00'.repeat(12), plaintext: '', aad: undefined,
    sealed: '530f8afbc74536b9a963b4f1c4cb738b',
  },
  {
    name: 'test case 14 (one zero block)',
    key: '00'.repeat(32), nonce: '00'.repeat(12), plaintext: '00'.repeat(16), aad: undefined,
    sealed: 'cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919',
  },
  {
    name: 'test case 16 (partial block, with AAD)',
    key: 'feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308',
    nonce: 'cafebabefacedbaddecaf888',
    plaintext: 'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39',
    aad: 'feedfacedeadbeeffeedfacedeadbeefabaddad2',
    sealed: '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662'
      + '76fc6ece0f4e1768cddf8853bb2d551b',
  },
];

describe('AES-256-GCM helpers', () => {
  for (const v of vectors) {
    it(`seal matches the published ${v.name}`, () => {
      const out = gcmSealWithNonce(hex(v.key), hex(v.nonce), hex(v.plaintext), v.aad === undefined ? undefined : hex(v.aad));
      expect(out.toString('hex')).to.equal(v.nonce + v.sealed);
    });

    it(`open recovers the plaintext of ${v.name}`, () => {
      const out = gcmOpen(hex(v.key), hex(v.nonce + v.sealed), v.aad === undefined ? undefined : hex(v.aad));
      expect(out.toString('hex')).to.equal(v.plaintext);
    });
  }

  const key = Buffer.alloc(32, 7);

  it('seal uses a fresh nonce each time, and open reverses it', () => {
    const a = gcmSeal(key, bytes('same'), bytes('aad'));
    const b = gcmSeal(key, bytes('same'), bytes('aad'));
    expect(a.subarray(0, 12).equals(b.subarray(0, 12))).to.equal(false);
    expect(a.length).to.equal(12 + 4 + 16);
    expect(text(gcmOpen(key, a, bytes('aad')))).to.equal('same');
  });

  it('open rejects a tampered tag, ciphertext or nonce', () => {
    const sealed = gcmSeal(key, bytes('payload'));
    for (const index of [0, 11, 12, sealed.length - 17, sealed.length - 1]) {
      const bad = Buffer.from(sealed);
      bad[index]! ^= 0x01;
      expect(() => gcmOpen(key, bad), `byte ${index}`).to.throw(IntegrityError);
    }
  });

  it('open rejects a different AAD, a missing AAD and a different key', () => {
    const sealed = gcmSeal(key, bytes('payload'), bytes('path/a'));
    expect(() => gcmOpen(key, sealed, bytes('path/b'))).to.throw(IntegrityError);
    expect(() => gcmOpen(key, sealed)).to.throw(IntegrityError);
    expect(() => gcmOpen(Buffer.alloc(32, 8), sealed, bytes('path/a'))).to.throw(IntegrityError);
  });

  it('open rejects input shorter than nonce and tag', () => {
    expect(() => gcmOpen(key, new Uint8Array(27))).to.throw(IntegrityError);
  });

  it('refuses keys that are not 32 bytes and nonces that are not 12', () => {
    expect(() => gcmSeal(Buffer.alloc(16), bytes('x'))).to.throw(InternalError);
    expect(() => gcmSealWithNonce(key, Buffer.alloc(16), bytes('x'))).to.throw(InternalError);
  });

  it('zeroize overwrites every byte and tolerates undefined', () => {
    const secret = Buffer.from('secret material');
    zeroize(secret);
    expect([...secret].every((b) => b === 0)).to.equal(true);
    zeroize(undefined);
  });
});
