import { expect } from 'chai';
import type { WasmCrypto } from '../../wasm/index.js';
import { loadCrypto, pathName, pathsOf } from './support.js';
import { GCM_REJECT_VECTOR, GCM_VECTORS, HASH_VECTORS, HKDF_VECTORS, HMAC_VECTORS } from './vectors.js';

describe('wasm crypto core: known-answer vectors', function () {
  let core: WasmCrypto;
  before(async function () {
    core = await loadCrypto();
  });

  for (const path of pathsOf('wasm')) {
    describe(`hashes on the ${pathName(path)} path`, function () {
      for (const v of HASH_VECTORS) {
        it(`${v.alg}: ${v.source}`, function () {
          expect(core.hash(v.alg, v.input, path === undefined ? {} : { path }).toString('hex')).to.equal(v.digest.toString('hex'));
        });
      }

      it('hashes all vectors of one algorithm in one batch, whatever their lengths', function () {
        for (const alg of new Set(HASH_VECTORS.map((v) => v.alg))) {
          const vs = HASH_VECTORS.filter((v) => v.alg === alg);
          const got = core.hashBatch(alg, vs.map((v) => v.input), path === undefined ? {} : { path });
          expect(got.map((d) => d.toString('hex'))).to.deep.equal(vs.map((v) => v.digest.toString('hex')));
        }
      });

      it('hashes batches of one SHA-224/256 vector repeated (the same-length kernel), in groups of eight and four', function () {
        const small = HASH_VECTORS.filter((v) => (v.alg === 'sha224' || v.alg === 'sha256') && v.input.length < 1000);
        for (const v of small) {
          for (const count of [4, 5, 8, 9, 13]) {
            const got = core.hashBatch(v.alg, Array.from({ length: count }, () => v.input), path === undefined ? {} : { path });
            expect(got.map((d) => d.toString('hex')), `${v.source} × ${count}`).to.deep.equal(Array.from({ length: count }, () => v.digest.toString('hex')));
          }
        }
      });
    });

    describe(`HMAC on the ${pathName(path)} path`, function () {
      for (const v of HMAC_VECTORS) {
        for (const alg of ['sha256', 'sha384', 'sha512'] as const) {
          const expected = v[alg];
          if (expected === undefined) continue;
          it(`HMAC-${alg}: ${v.source}`, function () {
            const opts = path === undefined ? {} : { path };
            expect(core.hmacBatch(alg, v.key, [v.data], opts)[0]!.toString('hex')).to.equal(expected.toString('hex'));
            expect(core.hmacBatch(alg, [v.key, v.key], [v.data, v.data], opts).map((d) => d.toString('hex'))).to.deep.equal([
              expected.toString('hex'),
              expected.toString('hex'),
            ]);
          });
        }
      }
    });

    describe(`HKDF-SHA-256 on the ${pathName(path)} path`, function () {
      for (const v of HKDF_VECTORS) {
        it(v.source, function () {
          const opts = path === undefined ? {} : { path };
          expect(core.hkdfSha256Batch(v.ikm, [v.info], v.okm.length, v.salt, opts)[0]!.toString('hex')).to.equal(v.okm.toString('hex'));
          expect(core.hkdfSha256Batch([v.ikm], [v.info], v.okm.length, v.salt, opts)[0]!.toString('hex')).to.equal(v.okm.toString('hex'));
        });
      }
    });
  }

  for (const path of pathsOf('hybrid', 'wasm')) {
    describe(`AES-GCM on the ${pathName(path)} path`, function () {
      const opts = path === undefined ? {} : { path };
      for (const v of GCM_VECTORS) {
        it(`encrypts and decrypts ${v.source}`, function () {
          const [sealed] = core.gcmEncryptBatch(v.key, [{ nonce: v.nonce, plaintext: v.plaintext, aad: v.aad }], opts);
          expect(sealed!.subarray(0, v.plaintext.length).toString('hex')).to.equal(v.ciphertext.toString('hex'));
          expect(sealed!.subarray(v.plaintext.length, v.plaintext.length + v.tag.length).toString('hex')).to.equal(v.tag.toString('hex'));
          const [opened] = core.gcmDecryptBatch(v.key, [{ nonce: v.nonce, ciphertext: sealed!, aad: v.aad }], opts);
          expect(opened!.toString('hex')).to.equal(v.plaintext.toString('hex'));
        });
      }

      it('runs the vectors of each key length in one batch with one key per item', function () {
        for (const keyLength of [16, 32]) {
          const vs = GCM_VECTORS.filter((v) => v.key.length === keyLength);
          const sealed = core.gcmEncryptBatch(vs.map((v) => v.key), vs.map((v) => ({ nonce: v.nonce, plaintext: v.plaintext, aad: v.aad })), opts);
          sealed.forEach((s, i) => {
            const v = vs[i]!;
            expect(s.subarray(0, v.plaintext.length + v.tag.length).toString('hex')).to.equal(Buffer.concat([v.ciphertext, v.tag]).toString('hex'));
          });
        }
      });

      it(`rejects ${GCM_REJECT_VECTOR.source}`, function () {
        const v = GCM_REJECT_VECTOR;
        const [opened] = core.gcmDecryptBatch(v.key, [{ nonce: v.nonce, ciphertext: Buffer.concat([v.ciphertext, v.tag]), aad: v.aad }], opts);
        expect(opened).to.equal(null);
      });
    });
  }
});
