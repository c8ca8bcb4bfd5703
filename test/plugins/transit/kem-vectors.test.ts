/**
 * transit's HPKE with post-quantum KEMs (plugins/transit/crypto/hpke.ts) against published
 * vectors — NIST's ACVP samples for ML-KEM (FIPS 203), X-Wing's draft vectors and
 * draft-ietf-hpke-pq's HPKE vectors, in test/fixtures/transit-vectors/ — and against independent
 * implementations: OpenSSL's ML-KEM and X25519 through node:crypto, and the @hpke family (its own
 * ML-KEM and HPKE framing).
 */
import { expect } from 'chai';
import { createHash, createPrivateKey, createPublicKey, decapsulate, diffieHellman, encapsulate, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Aes256Gcm, CipherSuite, HkdfSha256, HkdfSha384 } from '@hpke/core';
import { MlKem1024, MlKem768 } from '@hpke/ml-kem';
import { XWing } from '@hpke/hybridkem-x-wing';
import { HPKE_AEADS, HPKE_KDFS, HPKE_KEMS, keySchedule, open, openFirst, seal, sealFirst, type HpkeKem, type HpkeSuite } from '../../../plugins/transit/crypto/hpke.js';
import { kemPublicKeyFromImport, kemSuite } from '../../../plugins/transit/crypto/kem.js';
import { KEY_TYPES } from '../../../plugins/transit/keys/key-types.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../../../test/fixtures/transit-vectors/${name}`, import.meta.url), 'utf8'));
const hex = (text: string) => Buffer.from(text, 'hex');
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

const ML_KEMS: Record<string, HpkeKem> = { 'ML-KEM-768': HPKE_KEMS.mlKem768, 'ML-KEM-1024': HPKE_KEMS.mlKem1024 };

/**
 * node:crypto's ML-KEM private key from a 64-byte seed: PKCS#8 holding the seed form of the key
 * (https://datatracker.ietf.org/doc/draft-ietf-lamps-kyber-certificates/), under the OID of
 * ML-KEM-768 (2.16.840.1.101.3.4.4.2) or ML-KEM-1024 (…4.4.3).
 */
function nodeMlKemPrivateKey(type: 'ml-kem-768' | 'ml-kem-1024', seed: Uint8Array): KeyObject {
  const oidTail = type === 'ml-kem-768' ? 0x02 : 0x03;
  const der = Buffer.concat([Buffer.from([0x30, 0x54, 0x02, 0x01, 0x00, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, oidTail, 0x04, 0x42, 0x80, 0x40]), seed]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

/** node:crypto's X25519 private key from its 32 raw bytes (PKCS#8, RFC 8410). */
function nodeX25519PrivateKey(raw: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), raw]), format: 'der', type: 'pkcs8' });
}

interface AcvpGroup {
  parameterSet: string;
  function?: string;
  tests: Record<string, any>[];
}

describe('ML-KEM (FIPS 203) against the NIST ACVP samples', () => {
  const acvp = fixture('ml-kem-acvp.json');
  const groups = (set: 'keyGen' | 'encapDecap', fn?: string): AcvpGroup[] => acvp[set].testGroups.filter((g: AcvpGroup) => g.function === fn);

  it('makes the published encapsulation and decapsulation keys from the seed d ‖ z that transit stores', () => {
    for (const group of groups('keyGen')) {
      const kem = ML_KEMS[group.parameterSet]!;
      for (const t of group.tests) {
        const seed = Buffer.concat([hex(t.d), hex(t.z)]);
        expect(same(kem.publicKeyOf(seed), hex(t.ek)), `${group.parameterSet} tcId ${t.tcId} ek`).to.equal(true);
        expect(same(kem.decapsulationKeyOf(seed), hex(t.dk)), `${group.parameterSet} tcId ${t.tcId} dk`).to.equal(true);
      }
    }
  });

  it('encapsulates with the published randomness m to the published ciphertext and shared key', () => {
    for (const group of groups('encapDecap', 'encapsulation')) {
      const kem = ML_KEMS[group.parameterSet]!;
      for (const t of group.tests) {
        const { enc, sharedSecret } = kem.encap(hex(t.ek), hex(t.m));
        expect(same(enc, hex(t.c)), `${group.parameterSet} tcId ${t.tcId} c`).to.equal(true);
        expect(same(sharedSecret, hex(t.k)), `${group.parameterSet} tcId ${t.tcId} k`).to.equal(true);
      }
    }
  });

  it('decapsulates valid ciphertexts to their key, and modified ones to the implicit-rejection key', () => {
    const reasons = new Set<string>();
    for (const group of groups('encapDecap', 'decapsulation')) {
      const kem = ML_KEMS[group.parameterSet]!;
      for (const t of group.tests) {
        reasons.add(t.reason);
        expect(same(kem.decap(hex(t.c), hex(t.dk)), hex(t.k)), `${group.parameterSet} tcId ${t.tcId} (${t.reason})`).to.equal(true);
      }
    }
    expect([...reasons].sort()).to.deep.equal(['modified ciphertext', 'valid decapsulation']);
  });

  it('refuses to import a public key that fails the encapsulation key check, and takes the valid ones', () => {
    const outcomes = new Set<boolean>();
    for (const group of groups('encapDecap', 'encapsulationKeyCheck')) {
      const set = group.parameterSet.replace('ML-KEM-', '');
      for (const t of group.tests) {
        outcomes.add(t.testPassed);
        const importing = () => kemPublicKeyFromImport(KEY_TYPES['ml-kem'], set, hex(t.ek).toString('base64'));
        if (t.testPassed) expect(same(importing(), hex(t.ek))).to.equal(true);
        else expect(importing, `${group.parameterSet} tcId ${t.tcId}`).to.throw(/public_key: not a valid ML-KEM-\d+ public key/);
      }
    }
    expect([...outcomes].sort()).to.deep.equal([false, true]);
  });

  describe('against OpenSSL through node:crypto', () => {
    /** node:crypto's key from transit's raw public key: the SPKI of a generated key, with the raw key swapped in. */
    function nodePublicKey(type: 'ml-kem-768' | 'ml-kem-1024', raw: Uint8Array): KeyObject {
      const template = generateKeyPairSync(type).publicKey.export({ type: 'spki', format: 'der' });
      return createPublicKey({ key: Buffer.concat([template.subarray(0, template.length - raw.length), raw]), format: 'der', type: 'spki' });
    }

    for (const [type, kem] of [['ml-kem-768', HPKE_KEMS.mlKem768], ['ml-kem-1024', HPKE_KEMS.mlKem1024]] as const) {
      it(`${kem.name}: OpenSSL decapsulates what transit encapsulates, and transit what OpenSSL encapsulates`, () => {
        const seed = randomBytes(64);
        const ours = kem.encap(kem.publicKeyOf(seed));
        expect(same(decapsulate(nodeMlKemPrivateKey(type, seed), Buffer.from(ours.enc)), ours.sharedSecret)).to.equal(true);
        const theirs = encapsulate(nodePublicKey(type, kem.publicKeyOf(seed)));
        expect(same(kem.decap(theirs.ciphertext, kem.decapsulationKeyOf(seed)), theirs.sharedKey)).to.equal(true);
      });
    }
  });
});

describe('X-Wing (MLKEM768-X25519) against its draft vectors', () => {
  const kem = HPKE_KEMS.mlKem768X25519;
  const { vectors } = fixture('x-wing.json');

  it('makes the public key from the seed, encapsulates with eseed to ct and ss, and decapsulates ct to ss', () => {
    expect(vectors).to.have.length(3);
    for (const v of vectors) {
      expect(same(kem.publicKeyOf(hex(v.seed)), hex(v.pk))).to.equal(true);
      const { enc, sharedSecret } = kem.encap(hex(v.pk), hex(v.eseed));
      expect(same(enc, hex(v.ct))).to.equal(true);
      expect(same(sharedSecret, hex(v.ss))).to.equal(true);
      expect(same(kem.decap(hex(v.ct), kem.decapsulationKeyOf(hex(v.sk))), hex(v.ss))).to.equal(true);
    }
  });

  it('agrees with X-Wing built from OpenSSL\'s ML-KEM-768, X25519 and SHA3-256 (draft-connolly-cfrg-xwing-kem-10, section 5)', () => {
    /** X-Wing's decapsulation, its steps as the draft gives them, on node:crypto's primitives. */
    function nodeDecap(seed: Buffer, ct: Buffer): Buffer {
      const expanded = createHash('shake256', { outputLength: 96 }).update(seed).digest();
      const mlkem = nodeMlKemPrivateKey('ml-kem-768', expanded.subarray(0, 64));
      const x25519 = nodeX25519PrivateKey(expanded.subarray(64));
      const ctX = ct.subarray(1088);
      const pkX = Buffer.from(createPublicKey(x25519).export({ format: 'jwk' }).x!, 'base64url');
      const ssM = decapsulate(mlkem, ct.subarray(0, 1088));
      const ssX = diffieHellman({ privateKey: x25519, publicKey: createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: ctX.toString('base64url') }, format: 'jwk' }) });
      return createHash('sha3-256').update(ssM).update(ssX).update(ctX).update(pkX).update(Buffer.from('5c2e2f2f5e5c', 'hex')).digest();
    }
    for (let i = 0; i < 4; i++) {
      const seed = randomBytes(32);
      const { enc, sharedSecret } = kem.encap(kem.publicKeyOf(seed));
      expect(same(nodeDecap(seed, Buffer.from(enc)), sharedSecret)).to.equal(true);
    }
  });
});

describe('HPKE (RFC 9180) with the post-quantum KEMs', () => {
  const { vectors } = fixture('hpke-pq.json');
  const suiteOf = (v: any): HpkeSuite => ({
    kem: Object.values(HPKE_KEMS).find((k) => k.id === v.kem_id)!,
    kdf: Object.values(HPKE_KDFS).find((k) => k.id === v.kdf_id)!,
    aead: Object.values(HPKE_AEADS).find((a) => a.id === v.aead_id)!,
  });

  it('reproduces draft-ietf-hpke-pq\'s vectors: keys, encapsulation, shared secret, key schedule, and the first message sealed and opened', () => {
    expect(vectors.map((v: any) => v.kem_id)).to.deep.equal([0x41, 0x42, 0x647a]);
    for (const v of vectors) {
      const suite = suiteOf(v);
      expect(same(suite.kem.publicKeyOf(hex(v.skRm)), hex(v.pkRm)), suite.kem.name).to.equal(true);
      const { enc, sharedSecret } = suite.kem.encap(hex(v.pkRm), hex(v.ikmE));
      expect(same(enc, hex(v.enc))).to.equal(true);
      expect(same(sharedSecret, hex(v.shared_secret))).to.equal(true);
      expect(same(suite.kem.decap(hex(v.enc), suite.kem.decapsulationKeyOf(hex(v.skRm))), hex(v.shared_secret))).to.equal(true);
      const keys = keySchedule(suite, hex(v.shared_secret), hex(v.info));
      expect(keys.key.toString('hex')).to.equal(v.key);
      expect(keys.baseNonce.toString('hex')).to.equal(v.base_nonce);
      expect(keys.exporterSecret.toString('hex')).to.equal(v.exporter_secret);
      const first = v.encryptions[0];
      expect(first.nonce).to.equal(v.base_nonce);
      expect(sealFirst(suite, keys, hex(first.aad), hex(first.pt)).toString('hex')).to.equal(first.ct);
      expect(openFirst(suite, keys, hex(first.aad), hex(first.ct))!.toString('hex')).to.equal(first.pt);
    }
  });

  it('opens nothing whose encapsulated key, sealed bytes, info or associated data was changed', () => {
    const suite = kemSuite(KEY_TYPES['ml-kem'], '768');
    const seed = randomBytes(64);
    const key = suite.kem.decapsulationKeyOf(seed);
    const info = Buffer.from('context');
    const aad = Buffer.from('aad');
    const { enc, sealed } = seal(suite, suite.kem.publicKeyOf(seed), info, aad, Buffer.from('secret'));
    expect(open(suite, key, enc, info, aad, sealed)!.toString()).to.equal('secret');
    const flipped = (bytes: Uint8Array, at: number) => {
      const copy = Buffer.from(bytes);
      copy[at]! ^= 1;
      return copy;
    };
    expect(open(suite, key, flipped(enc, 10), info, aad, sealed)).to.equal(null);
    expect(open(suite, key, enc, info, aad, flipped(sealed, sealed.length - 1))).to.equal(null);
    expect(open(suite, key, enc, Buffer.from('other'), aad, sealed)).to.equal(null);
    expect(open(suite, key, enc, info, Buffer.alloc(0), sealed)).to.equal(null);
    expect(open(suite, key, enc, info, aad, sealed.subarray(0, 10))).to.equal(null);
  });

  describe('against the @hpke family (RFC 9180 framing and ML-KEM of their own)', () => {
    const cases = [
      { set: '768', type: 'ml-kem', theirs: () => new CipherSuite({ kem: new MlKem768(), kdf: new HkdfSha256(), aead: new Aes256Gcm() }) },
      { set: '1024', type: 'ml-kem', theirs: () => new CipherSuite({ kem: new MlKem1024(), kdf: new HkdfSha384(), aead: new Aes256Gcm() }) },
      { set: undefined, type: 'mlkem768-x25519', theirs: () => new CipherSuite({ kem: new XWing(), kdf: new HkdfSha256(), aead: new Aes256Gcm() }) },
    ] as const;
    for (const c of cases) {
      const ours = kemSuite(KEY_TYPES[c.type], c.set);
      it(`${ours.kem.name}: transit opens what @hpke seals to its public key, and @hpke opens what transit seals`, async () => {
        const theirs = c.theirs();
        const seed = randomBytes(ours.kem.seedBytes);
        const publicKey = ours.kem.publicKeyOf(seed);
        const info = Buffer.from('tenant-7');
        const aad = Buffer.from('row 12');
        const sent = await theirs.seal({ recipientPublicKey: await theirs.kem.deserializePublicKey(publicKey), info }, Buffer.from('from a client'), aad);
        expect(open(ours, ours.kem.decapsulationKeyOf(seed), new Uint8Array(sent.enc), info, aad, new Uint8Array(sent.ct))!.toString()).to.equal('from a client');

        const pair = await theirs.kem.generateKeyPair();
        const theirPublic = new Uint8Array(await theirs.kem.serializePublicKey(pair.publicKey));
        const back = seal(ours, theirPublic, info, aad, Buffer.from('from transit'));
        const opened = await theirs.open({ recipientKey: pair, enc: back.enc, info }, back.sealed, aad);
        expect(Buffer.from(opened).toString()).to.equal('from transit');
      });
    }
  });
});
