/**
 * transit's HPKE with post-quantum KEMs (plugins/transit/crypto/hpke.ts) against published
 * vectors — NIST's ACVP samples for ML-KEM (FIPS 203), X-Wing's draft vectors and
 * draft-ietf-hpke-pq's HPKE vectors, in test/fixtures/transit-vectors/ — and against independent
 * implementations: OpenSSL's ML-KEM and X25519 through node:crypto, and the @hpke family (its own
 * ML-KEM and HPKE framing).
 */
import { expect } from 'chai';
import * as crypto from 'node:crypto';
import { createHash, createPrivateKey, createPublicKey, decapsulate, diffieHellman, encapsulate, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Aes256Gcm, CipherSuite, HkdfSha256, HkdfSha384 } from '@hpke/core';
import { MlKem1024, MlKem768 } from '@hpke/ml-kem';
import { XWing } from '@hpke/hybridkem-x-wing';
import { HPKE_AEADS, HPKE_KDFS, HPKE_KEMS, kemEngine, kemEngines, keySchedule, open, openFirst, seal, sealFirst, useKemEngine, type HpkeKem, type HpkeSuite, type KemEngine } from '../../../plugins/transit/crypto/hpke.js';
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

/** DER's TLV: a tag, the length of `content` (short or long form) and `content`. */
function der(tag: number, content: Buffer): Buffer {
  const length = content.length < 0x80 ? Buffer.of(content.length) : Buffer.of(0x82, content.length >> 8, content.length & 0xff);
  return Buffer.concat([Buffer.of(tag), length, content]);
}

/**
 * The engine's decapsulation key from ACVP's expanded dk, which holds no seed: the bytes themselves
 * for @noble; for node:crypto, PKCS#8 in the expandedKey form of draft-ietf-lamps-kyber-certificates
 * (an OCTET STRING of the dk).
 */
function expandedDecapsulationKey(engine: KemEngine, parameterSet: string, dk: Buffer): unknown {
  if (engine === '@noble/post-quantum') return dk;
  const algorithm = Buffer.from(`300b06096086480165030404${parameterSet === 'ML-KEM-768' ? '02' : '03'}`, 'hex');
  const pkcs8 = der(0x30, Buffer.concat([Buffer.from('020100', 'hex'), algorithm, der(0x04, der(0x04, dk))]));
  return createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
}

/** node:crypto's X25519 private key from its 32 raw bytes (PKCS#8, RFC 8410). */
function nodeX25519PrivateKey(raw: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), raw]), format: 'der', type: 'pkcs8' });
}

const DEFAULT_ENGINE = kemEngine();

/** `body`'s tests once for each KEM engine this Node offers, with that engine in use. */
function onEachEngine(title: string, body: (engine: KemEngine) => void): void {
  for (const engine of kemEngines()) {
    describe(`${title}, on ${engine}`, () => {
      before(() => useKemEngine(engine));
      after(() => useKemEngine(DEFAULT_ENGINE));
      body(engine);
    });
  }
}

const NOBLE: KemEngine = '@noble/post-quantum';

describe('the KEM engine', () => {
  it('is OpenSSL\'s through node:crypto on a Node that has ML-KEM, with @noble/post-quantum beside it', () => {
    const hasMlKem = typeof (crypto as { encapsulate?: unknown }).encapsulate === 'function';
    expect(kemEngines()).to.deep.equal(hasMlKem ? ['node:crypto', NOBLE] : [NOBLE]);
    expect(DEFAULT_ENGINE).to.equal(hasMlKem ? 'node:crypto' : NOBLE);
  });
});

interface AcvpGroup {
  parameterSet: string;
  function?: string;
  tests: Record<string, any>[];
}

onEachEngine('ML-KEM (FIPS 203) against the NIST ACVP samples', (engine) => {
  const acvp = fixture('ml-kem-acvp.json');
  const groups = (set: 'keyGen' | 'encapDecap', fn?: string): AcvpGroup[] => acvp[set].testGroups.filter((g: AcvpGroup) => g.function === fn);

  it('makes the published encapsulation key from the seed d ‖ z that transit stores, and a decapsulation key that opens what is sealed to it', () => {
    for (const group of groups('keyGen')) {
      const kem = ML_KEMS[group.parameterSet]!;
      for (const t of group.tests) {
        const seed = Buffer.concat([hex(t.d), hex(t.z)]);
        expect(same(kem.publicKeyOf(seed), hex(t.ek)), `${group.parameterSet} tcId ${t.tcId} ek`).to.equal(true);
        const key = kem.decapsulationKeyOf(seed);
        // @noble's decapsulation key is the expanded dk itself; OpenSSL's is an object of its own.
        if (engine === NOBLE) expect(same(key as Uint8Array, hex(t.dk)), `${group.parameterSet} tcId ${t.tcId} dk`).to.equal(true);
        const { enc, sharedSecret } = kem.encap(hex(t.ek));
        expect(same(kem.decap(enc, key), sharedSecret), `${group.parameterSet} tcId ${t.tcId} round trip`).to.equal(true);
      }
    }
  });

  if (engine === NOBLE) {
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
  } else {
    // node:crypto takes no encapsulation randomness, so the encapsulation samples are checked from
    // the other side: their ciphertexts decapsulate to their keys under the published dk.
    it('decapsulates the published encapsulations to their shared keys, and refuses to encapsulate with given randomness', () => {
      for (const group of groups('encapDecap', 'encapsulation')) {
        const kem = ML_KEMS[group.parameterSet]!;
        for (const t of group.tests) {
          expect(same(kem.decap(hex(t.c), expandedDecapsulationKey(engine, group.parameterSet, hex(t.dk))), hex(t.k)), `${group.parameterSet} tcId ${t.tcId}`).to.equal(true);
        }
        expect(() => kem.encap(hex(group.tests[0]!.ek), hex(group.tests[0]!.m))).to.throw(/randomness/);
      }
    });
  }

  it('decapsulates valid ciphertexts to their key, and modified ones to the implicit-rejection key', () => {
    const reasons = new Set<string>();
    for (const group of groups('encapDecap', 'decapsulation')) {
      const kem = ML_KEMS[group.parameterSet]!;
      for (const t of group.tests) {
        reasons.add(t.reason);
        expect(same(kem.decap(hex(t.c), expandedDecapsulationKey(engine, group.parameterSet, hex(t.dk))), hex(t.k)), `${group.parameterSet} tcId ${t.tcId} (${t.reason})`).to.equal(true);
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

onEachEngine('X-Wing (MLKEM768-X25519) against its draft vectors', (engine) => {
  const kem = HPKE_KEMS.mlKem768X25519;
  const { vectors } = fixture('x-wing.json');

  it(`makes the public key from the seed${engine === NOBLE ? ', encapsulates with eseed to ct and ss,' : ''} and decapsulates ct to ss`, () => {
    expect(vectors).to.have.length(3);
    for (const v of vectors) {
      expect(same(kem.publicKeyOf(hex(v.seed)), hex(v.pk))).to.equal(true);
      if (engine === NOBLE) {
        const { enc, sharedSecret } = kem.encap(hex(v.pk), hex(v.eseed));
        expect(same(enc, hex(v.ct))).to.equal(true);
        expect(same(sharedSecret, hex(v.ss))).to.equal(true);
      }
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

onEachEngine('HPKE (RFC 9180) with the post-quantum KEMs', (engine) => {
  const { vectors } = fixture('hpke-pq.json');
  const suiteOf = (v: any): HpkeSuite => ({
    kem: Object.values(HPKE_KEMS).find((k) => k.id === v.kem_id)!,
    kdf: Object.values(HPKE_KDFS).find((k) => k.id === v.kdf_id)!,
    aead: Object.values(HPKE_AEADS).find((a) => a.id === v.aead_id)!,
  });

  it(`reproduces draft-ietf-hpke-pq's vectors: keys, ${engine === NOBLE ? 'encapsulation, ' : ''}shared secret, key schedule, and the first message sealed and opened`, () => {
    expect(vectors.map((v: any) => v.kem_id)).to.deep.equal([0x41, 0x42, 0x647a]);
    for (const v of vectors) {
      const suite = suiteOf(v);
      expect(same(suite.kem.publicKeyOf(hex(v.skRm)), hex(v.pkRm)), suite.kem.name).to.equal(true);
      // Encapsulation from ikmE only where the engine takes given randomness (@noble).
      if (engine === NOBLE) {
        const { enc, sharedSecret } = suite.kem.encap(hex(v.pkRm), hex(v.ikmE));
        expect(same(enc, hex(v.enc))).to.equal(true);
        expect(same(sharedSecret, hex(v.shared_secret))).to.equal(true);
      }
      expect(same(suite.kem.decap(hex(v.enc), suite.kem.decapsulationKeyOf(hex(v.skRm))), hex(v.shared_secret))).to.equal(true);
      const keys = keySchedule(suite, hex(v.shared_secret), hex(v.info));
      expect(keys.key.toString('hex')).to.equal(v.key);
      expect(keys.baseNonce.toString('hex')).to.equal(v.base_nonce);
      expect(keys.exporterSecret().toString('hex')).to.equal(v.exporter_secret);
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

describe('the two KEM engines together', () => {
  after(() => useKemEngine(DEFAULT_ENGINE));

  for (const which of ['mlKem768', 'mlKem1024', 'mlKem768X25519'] as const) {
    it(`${HPKE_KEMS[which].name}: make the same public key from a seed, and each opens what the other seals to it`, function () {
      if (kemEngines().length < 2) this.skip();
      const kem = HPKE_KEMS[which];
      const seed = randomBytes(kem.seedBytes);
      const made = (engine: KemEngine) => {
        useKemEngine(engine);
        return { publicKey: Buffer.from(kem.publicKeyOf(seed)), sealed: kem.encap(kem.publicKeyOf(seed)) };
      };
      const opens = (engine: KemEngine, enc: Uint8Array) => {
        useKemEngine(engine);
        return Buffer.from(kem.decap(enc, kem.decapsulationKeyOf(seed)));
      };
      const node = made('node:crypto');
      const noble = made(NOBLE);
      expect(node.publicKey.equals(noble.publicKey)).to.equal(true);
      expect(opens(NOBLE, node.sealed.enc).equals(Buffer.from(node.sealed.sharedSecret))).to.equal(true);
      expect(opens('node:crypto', noble.sealed.enc).equals(Buffer.from(noble.sealed.sharedSecret))).to.equal(true);
    });
  }
});
