import { createCipheriv, createHash, createHmac, hkdfSync } from 'node:crypto';
import { expect } from 'chai';
import { hkdf as nobleHkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import type { HashAlgorithm, HmacAlgorithm, WasmCrypto } from '../../wasm/index.js';
import { EDGE_SIZES, loadCrypto, pathName, pathsOf } from './support.js';

/** Bytes of a random length, with the edge sizes (0, 1, 15, 16, 17, 63, 64, 65, 4097) drawn often. */
function bytes(maxLength: number): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...EDGE_SIZES).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })) },
    { weight: 3, arbitrary: fc.nat({ max: maxLength }).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })) },
  );
}

/** Batches of 1 to 40 items; `size: 'max'` so fast-check does not keep them small. */
const batchOf = <T>(item: fc.Arbitrary<T>): fc.Arbitrary<T[]> => fc.array(item, { minLength: 1, maxLength: 40, size: 'max' });
const RUNS = { numRuns: 100 };

const hex = (b: Uint8Array | null | undefined): string | null => (b === null || b === undefined ? null : Buffer.from(b).toString('hex'));

function nodeSeal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Buffer {
  const cipher = createCipheriv(`aes-${key.length * 8}-gcm` as 'aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([body, cipher.getAuthTag()]);
}

/** Every item of the batch under deterministic sizes: the edge sizes for text and AAD. */
function edgeBatch(): { plaintext: Uint8Array; aad: Uint8Array; nonce: Uint8Array }[] {
  return EDGE_SIZES.flatMap((n, i) =>
    EDGE_SIZES.slice(0, 4).map((m, j) => ({
      plaintext: new Uint8Array(n).map((_, k) => k * 7 + i),
      aad: new Uint8Array(m).map((_, k) => k + j),
      nonce: new Uint8Array(12).map((_, k) => k * 31 + i * 5 + j),
    })),
  );
}

describe('wasm crypto core: differential tests against node:crypto', function () {
  let core: WasmCrypto;
  before(async function () {
    core = await loadCrypto();
  });

  for (const path of pathsOf('hybrid', 'wasm')) {
    const opts = path === undefined ? {} : { path };
    describe(`AES-GCM on the ${pathName(path)} path`, function () {
      const item = fc.record({ nonce: fc.uint8Array({ minLength: 12, maxLength: 12 }), plaintext: bytes(300), aad: bytes(80) });
      // The bitsliced path does AES-128/256 with one key length per batch; AES-192 is checked on the others.
      const keySizes = path === 'wasm' ? [16, 32] : [16, 24, 32];
      const aesKey = fc.constantFrom(...keySizes).chain((n) => fc.uint8Array({ minLength: n, maxLength: n }));

      it('matches node:crypto and round-trips for random batches under one key', function () {
        fc.assert(
          fc.property(aesKey, batchOf(item), (key, items) => {
            const sealed = core.gcmEncryptBatch(key, items, opts);
            expect(sealed.map(hex)).to.deep.equal(items.map((it) => hex(nodeSeal(key, it.nonce, it.plaintext, it.aad))));
            const opened = core.gcmDecryptBatch(key, items.map((it, i) => ({ nonce: it.nonce, aad: it.aad, ciphertext: sealed[i]! })), opts);
            expect(opened.map(hex)).to.deep.equal(items.map((it) => hex(it.plaintext)));
          }),
          RUNS,
        );
      });

      it('matches node:crypto for random batches with one key per item', function () {
        fc.assert(
          // One key length per batch, so every path (the bitsliced one included) takes the whole batch.
          fc.property(fc.constantFrom(...keySizes), batchOf(fc.tuple(fc.uint8Array({ minLength: 32, maxLength: 32 }), item)), (size, rows) => {
            const pairs = rows.map(([k, it]) => [k.subarray(0, size), it] as const);
            const keys = pairs.map(([k]) => k);
            const items = pairs.map(([, it]) => it);
            const sealed = core.gcmEncryptBatch(keys, items, opts);
            expect(sealed.map(hex)).to.deep.equal(pairs.map(([k, it]) => hex(nodeSeal(k, it.nonce, it.plaintext, it.aad))));
            const opened = core.gcmDecryptBatch(keys, items.map((it, i) => ({ nonce: it.nonce, aad: it.aad, ciphertext: sealed[i]! })), opts);
            expect(opened.map(hex)).to.deep.equal(items.map((it) => hex(it.plaintext)));
          }),
          RUNS,
        );
      });

      it('gives base64(nonce ‖ ciphertext ‖ tag) as node:crypto makes it, with nonces from one block (gcmSealBase64)', function () {
        fc.assert(
          fc.property(aesKey, batchOf(item), fc.boolean(), (key, items, perItemKeys) => {
            const nonces = Buffer.concat(items.map((it) => it.nonce));
            const keys = items.map((_, i) => key.map((b) => b ^ i));
            const texts = core.gcmSealBase64(perItemKeys ? keys : key, items, nonces, opts);
            const expected = items.map((it, i) => Buffer.concat([it.nonce, nodeSeal(perItemKeys ? keys[i]! : key, it.nonce, it.plaintext, it.aad)]).toString('base64'));
            expect(texts).to.deep.equal(expected);
          }),
          RUNS,
        );
      });

      it('packs edge sizes and 1,000-item batches exactly, even after other kernels left the arena dirty (gcmSealBase64)', function () {
        const key = new Uint8Array(32).fill(9);
        const edge = edgeBatch();
        const many = Array.from({ length: 1000 }, (_, i) => ({ plaintext: new Uint8Array(i % 97).fill(i), aad: new Uint8Array(i % 5).fill(3) }));
        for (const items of [edge, many]) {
          const nonces = Buffer.alloc(items.length * 12).map((_, k) => k * 13);
          // Hash and HMAC batches use the arena too; their wipes must not matter to the packing.
          core.hashBatch('sha256', many.map((it) => it.plaintext));
          core.hmacBatch('sha256', key, many.map((it) => it.plaintext));
          const texts = core.gcmSealBase64(key, items, nonces, opts);
          texts.forEach((text, i) => {
            const nonce = nonces.subarray(i * 12, i * 12 + 12);
            expect(text).to.equal(Buffer.concat([nonce, nodeSeal(key, nonce, items[i]!.plaintext, items[i]!.aad)]).toString('base64'));
          });
        }
      });

      it('seals a single item as node:crypto does, for every key size and sizes on both sides of the single-item kernel limit (gcmSealBase64)', function () {
        const single = fc.record({ nonce: fc.uint8Array({ minLength: 12, maxLength: 12 }), plaintext: bytes(320), aad: bytes(80) });
        fc.assert(
          fc.property(aesKey, single, (key, it) => {
            const texts = core.gcmSealBase64(key, [{ plaintext: it.plaintext, aad: it.aad }], it.nonce, opts);
            expect(texts).to.deep.equal([Buffer.concat([it.nonce, nodeSeal(key, it.nonce, it.plaintext, it.aad)]).toString('base64')]);
          }),
          RUNS,
        );
      });

      it('opens a single item as node:crypto seals it, for every key size and sizes on both sides of the single-item kernel limit, and refuses it with a bit flipped', function () {
        const single = fc.record({ nonce: fc.uint8Array({ minLength: 12, maxLength: 12 }), plaintext: bytes(320), aad: bytes(80), flip: fc.nat() });
        fc.assert(
          fc.property(aesKey, single, (key, it) => {
            const sealed = nodeSeal(key, it.nonce, it.plaintext, it.aad);
            const [opened] = core.gcmDecryptBatch(key, [{ nonce: it.nonce, ciphertext: sealed, aad: it.aad }], opts);
            expect(hex(opened)).to.equal(hex(it.plaintext));
            const tampered = Buffer.from(sealed);
            tampered[it.flip % tampered.length]! ^= 1;
            expect(core.gcmDecryptBatch(key, [{ nonce: it.nonce, ciphertext: tampered, aad: it.aad }], opts)).to.deep.equal([null]);
            expect(core.gcmDecryptBatch(key, [{ nonce: it.nonce, ciphertext: sealed.subarray(0, 15), aad: it.aad }], opts)).to.deep.equal([null]);
          }),
          RUNS,
        );
      });

      it('handles every edge size of plaintext and AAD in one batch', function () {
        const key = new Uint8Array(32).fill(7);
        const items = edgeBatch();
        const sealed = core.gcmEncryptBatch(key, items, opts);
        expect(sealed.map(hex)).to.deep.equal(items.map((it) => hex(nodeSeal(key, it.nonce, it.plaintext, it.aad))));
      });

      it('rejects exactly the items with a flipped bit in ciphertext, tag, nonce or AAD', function () {
        const target = fc.constantFrom('ciphertext', 'tag', 'nonce', 'aad');
        const tampered = fc.record({ it: item, flip: fc.option(fc.tuple(target, fc.nat(), fc.integer({ min: 0, max: 7 })), { freq: 2 }) });
        fc.assert(
          fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), batchOf(tampered), (key, rows) => {
            const sealed = core.gcmEncryptBatch(key, rows.map((r) => r.it), opts);
            const expectOk: boolean[] = [];
            const inputs = rows.map((r, i) => {
              const ciphertext = Buffer.from(sealed[i]!);
              const nonce = Buffer.from(r.it.nonce);
              const aad = Buffer.from(r.it.aad);
              let ok = true;
              if (r.flip !== null) {
                const [where, at, bit] = r.flip;
                const textLen = ciphertext.length - 16;
                if (where === 'ciphertext' && textLen > 0) {
                  ciphertext[at % textLen]! ^= 1 << bit;
                  ok = false;
                } else if (where === 'tag') {
                  ciphertext[textLen + (at % 16)]! ^= 1 << bit;
                  ok = false;
                } else if (where === 'nonce') {
                  nonce[at % 12]! ^= 1 << bit;
                  ok = false;
                } else if (where === 'aad' && aad.length > 0) {
                  aad[at % aad.length]! ^= 1 << bit;
                  ok = false;
                }
              }
              expectOk.push(ok);
              return { nonce, aad, ciphertext };
            });
            const opened = core.gcmDecryptBatch(key, inputs, opts);
            expect(opened.map((p) => p !== null)).to.deep.equal(expectOk);
            opened.forEach((p, i) => {
              if (p !== null) expect(hex(p)).to.equal(hex(rows[i]!.it.plaintext));
            });
          }),
          RUNS,
        );
      });

      it('rejects inputs shorter than a tag and a wrong key, item by item', function () {
        const key = new Uint8Array(16).fill(1);
        const nonce = new Uint8Array(12);
        const [good] = core.gcmEncryptBatch(key, [{ nonce, plaintext: new Uint8Array(20) }], opts);
        const opened = core.gcmDecryptBatch(key, [
          { nonce, ciphertext: good! },
          { nonce, ciphertext: good!.subarray(0, 15) },
          { nonce, ciphertext: new Uint8Array(0) },
          { nonce, ciphertext: good! },
        ], opts);
        expect(opened.map((p) => p !== null)).to.deep.equal([true, false, false, true]);
        const other = new Uint8Array(16).fill(2);
        expect(core.gcmDecryptBatch([key, other], [{ nonce, ciphertext: good! }, { nonce, ciphertext: good! }], opts).map((p) => p !== null)).to.deep.equal([true, false]);
      });
    });
  }

  for (const path of pathsOf('wasm')) {
    const opts = path === undefined ? {} : { path };
    describe(`hashes, HMAC and HKDF on the ${pathName(path)} path`, function () {
      const hashAlgs: HashAlgorithm[] = ['sha224', 'sha256', 'sha384', 'sha512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'];
      for (const alg of hashAlgs) {
        it(`${alg} matches node:crypto on random batches and edge sizes`, function () {
          fc.assert(
            fc.property(batchOf(bytes(400)), (inputs) => {
              expect(core.hashBatch(alg, inputs, opts).map(hex)).to.deep.equal(inputs.map((m) => createHash(alg).update(m).digest('hex')));
            }),
            RUNS,
          );
          const edge = EDGE_SIZES.map((n) => new Uint8Array(n).map((_, k) => k * 13));
          expect(core.hashBatch(alg, edge, opts).map(hex)).to.deep.equal(edge.map((m) => createHash(alg).update(m).digest('hex')));
          expect(hex(core.hash(alg, edge[8]!, opts))).to.equal(createHash(alg).update(edge[8]!).digest('hex'));
        });
      }

      for (const alg of ['sha224', 'sha256'] as HashAlgorithm[]) {
        it(`${alg} matches node:crypto on batches whose inputs all have one length, and on mixed lengths`, function () {
          const digest = (m: Uint8Array): string => createHash(alg).update(m).digest('hex');
          // Lengths around the padding boundaries: last block with message bytes and the length
          // (1, 55, 65), with message bytes and a padding-only block after it (56, 63, 120), or
          // padding only (0, 64, 128); counts that fill eight lanes, leave five to seven, or four or fewer.
          for (const len of [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 4097]) {
            for (const count of [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17]) {
              const inputs = Array.from({ length: count }, (_, i) => new Uint8Array(len).map((_, k) => k * 31 + i * 7 + len));
              expect(core.hashBatch(alg, inputs, opts).map(hex), `${count} × ${len} B`).to.deep.equal(inputs.map(digest));
            }
          }
          const mixed = [0, 1, 55, 56, 63, 64, 65, 4097, 64, 64, 64, 64, 64, 64, 64, 64].map((len, i) => new Uint8Array(len).fill(i + 1));
          expect(core.hashBatch(alg, mixed, opts).map(hex)).to.deep.equal(mixed.map(digest));
          fc.assert(
            fc.property(fc.nat({ max: 300 }), fc.integer({ min: 1, max: 40 }), fc.infiniteStream(fc.uint8Array({ minLength: 300, maxLength: 300 })), (len, count, stream) => {
              const inputs = [...stream.take(count)].map((m) => m.subarray(0, len));
              expect(core.hashBatch(alg, inputs, opts).map(hex)).to.deep.equal(inputs.map(digest));
            }),
            RUNS,
          );
        });
      }

      const hmacKey = fc.oneof(bytes(200), fc.constantFrom(0, 64, 65, 127, 128, 129).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })));
      for (const alg of ['sha256', 'sha384', 'sha512'] as HmacAlgorithm[]) {
        it(`HMAC-${alg} matches node:crypto with one key and with a key per item`, function () {
          fc.assert(
            fc.property(hmacKey, batchOf(fc.tuple(hmacKey, bytes(300))), (shared, rows) => {
              const inputs = rows.map(([, m]) => m);
              expect(core.hmacBatch(alg, shared, inputs, opts).map(hex)).to.deep.equal(inputs.map((m) => createHmac(alg, shared).update(m).digest('hex')));
              expect(core.hmacBatch(alg, rows.map(([k]) => k), inputs, opts).map(hex)).to.deep.equal(rows.map(([k, m]) => createHmac(alg, k).update(m).digest('hex')));
            }),
            RUNS,
          );
        });
      }

      it('HKDF-SHA-256 matches node:crypto with one IKM and with an IKM per item', function () {
        const length = fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constantFrom(32, 33, 64, 255 * 32));
        fc.assert(
          fc.property(bytes(100), bytes(80), length, batchOf(fc.tuple(bytes(100), bytes(120))), (ikm, salt, len, rows) => {
            // node's hkdfSync takes at most 1024 bytes of info; longer infos are checked against @noble/hashes.
            if (path === 'node') rows = rows.map(([k, info]) => [k, info.subarray(0, 1024)]);
            const infos = rows.map(([, info]) => info);
            const ref = (k: Uint8Array, info: Uint8Array): string =>
              (info.length <= 1024 ? Buffer.from(hkdfSync('sha256', k, salt, info, len)) : Buffer.from(nobleHkdf(sha256, k, salt, info, len))).toString('hex');
            expect(core.hkdfSha256Batch(ikm, infos, len, salt, opts).map(hex)).to.deep.equal(infos.map((info) => ref(ikm, info)));
            expect(core.hkdfSha256Batch(rows.map(([k]) => k), infos, len, salt, opts).map(hex)).to.deep.equal(rows.map(([k, info]) => ref(k, info)));
          }),
          { numRuns: 60 },
        );
      });
    });
  }
});
