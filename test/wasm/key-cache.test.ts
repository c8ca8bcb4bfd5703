import { createCipheriv, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import type { WasmCrypto } from '../../wasm/index.js';
import { startUnsealedServer } from '../helpers/server.js';
import { resolve } from '../../core/di/container.js';
import { SERVICES } from '../../core/plugins/services.js';
import { loadCrypto } from './support.js';

// The bitsliced GCM path keeps the last few keys' round keys and prepared hash keys between calls
// (wasm/assembly/keycache.ts). These check that a cached schedule is used only for the very same
// key bytes and length, that every other path is unaffected, and that forgetKeys (and sealing the
// server) leaves nothing behind.

/** base64(nonce ‖ ciphertext ‖ tag) as node:crypto makes it: what gcmSealBase64 answers per item. */
function nodeSealBase64(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): string {
  const cipher = createCipheriv(`aes-${key.length * 8}-gcm` as 'aes-256-gcm', key, nonce);
  if (aad !== undefined) cipher.setAAD(aad);
  return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]).toString('base64');
}

/** The linear memory and where the key cache lies in it (the kernels are private; tests read them as dispatch.test.ts does). */
function cacheBytes(core: WasmCrypto): Uint8Array {
  const { kernels } = core as unknown as { kernels: { memory: { buffer: ArrayBuffer }; keyCacheRegion(): number; keyCacheSize(): number } };
  return new Uint8Array(kernels.memory.buffer, kernels.keyCacheRegion(), kernels.keyCacheSize());
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  return Buffer.from(haystack.buffer, haystack.byteOffset, haystack.length).indexOf(needle) >= 0;
}

describe('wasm crypto core: key cache of the bitsliced GCM path', function () {
  let core: WasmCrypto;
  before(async function () {
    core = await loadCrypto();
  });

  /** Seals one item the way transit's single encrypt does (gcmSealBase64 of one item, dispatched), checks it against node:crypto and opens it again. */
  function sealOne(key: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): string {
    const nonce = randomBytes(12);
    const before = core.dispatched['aes-gcm'].wasm;
    const text = core.gcmSealBase64(key, [aad === undefined ? { plaintext } : { plaintext, aad }], nonce)[0]!;
    expect(core.dispatched['aes-gcm'].wasm, 'took the bitsliced path').to.equal(before + 1);
    expect(text).to.equal(nodeSealBase64(key, nonce, plaintext, aad));
    const body = Buffer.from(text, 'base64');
    const [opened] = core.gcmDecryptBatch(key, [{ nonce: body.subarray(0, 12), ciphertext: body.subarray(12), ...(aad ? { aad } : {}) }]);
    expect(opened?.toString('hex')).to.equal(Buffer.from(plaintext).toString('hex'));
    return text;
  }

  it('seals one key many times in a row as node:crypto does (hits), AES-128 and AES-256, with and without AAD', function () {
    for (const size of [16, 32]) {
      const key = randomBytes(size);
      for (let i = 0; i < 40; i++) sealOne(key, randomBytes(i % 3 === 0 ? 64 : i * 5), i % 2 === 0 ? undefined : randomBytes(i));
    }
  });

  it('seals under alternating keys, more keys than the cache holds, as node:crypto does (misses and replacement)', function () {
    const a = randomBytes(32);
    const b = randomBytes(32);
    for (let i = 0; i < 20; i++) sealOne(i % 2 === 0 ? a : b, randomBytes(64), i % 3 === 0 ? randomBytes(20) : undefined);
    const many = Array.from({ length: 7 }, (_, i) => randomBytes(i % 2 === 0 ? 32 : 16));
    for (let round = 0; round < 4; round++) {
      for (const key of many) sealOne(key, randomBytes(64));
      for (const key of [...many].reverse()) sealOne(key, randomBytes(64), randomBytes(13));
    }
  });

  it('tells keys apart by every byte and by length: an AES-128 key that is the first half of a cached AES-256 key, keys that differ in one byte', function () {
    const long = randomBytes(32);
    sealOne(long, randomBytes(64));
    sealOne(long.subarray(0, 16), randomBytes(64));
    sealOne(long, randomBytes(64));
    for (const at of [0, 15, 16, 31]) {
      const other = Buffer.from(long);
      other[at]! ^= 0x80;
      sealOne(other, randomBytes(64));
      sealOne(long, randomBytes(64));
      const short = Buffer.from(long.subarray(0, 16));
      if (at < 16) {
        short[at]! ^= 0x01;
        sealOne(short, randomBytes(64), randomBytes(5));
      }
    }
  });

  it('never uses a stale schedule when the key buffer is changed in place between calls', function () {
    for (const size of [16, 32]) {
      const key = randomBytes(size);
      const plaintext = randomBytes(64);
      for (let i = 0; i < size; i++) {
        const before = sealOne(key, plaintext);
        key[i]! ^= 1 << (i % 8);
        expect(sealOne(key, plaintext), `byte ${i} changed`).to.not.equal(before);
        // The same nonce, to see that only the key changed what came out.
        const nonce = randomBytes(12);
        expect(core.gcmSealBase64(key, [{ plaintext }], nonce)[0]).to.equal(nodeSealBase64(key, nonce, plaintext));
      }
      key.set(randomBytes(size));
      sealOne(key, plaintext, randomBytes(7));
    }
  });

  it('matches node:crypto for random sequences of single seals over a few keys, some changed in place', function () {
    const keys = [randomBytes(32), randomBytes(32), randomBytes(16), randomBytes(32), randomBytes(16), randomBytes(32)];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            key: fc.nat({ max: keys.length - 1 }),
            mutate: fc.option(fc.nat({ max: 31 }), { freq: 4 }),
            size: fc.nat({ max: 200 }),
            aad: fc.option(fc.uint8Array({ maxLength: 40 })),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        (steps) => {
          for (const step of steps) {
            const key = keys[step.key]!;
            if (step.mutate !== null) key[step.mutate % key.length]! ^= 0x5a;
            sealOne(key, randomBytes(step.size), step.aad ?? undefined);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('opens single items under cached keys, and rejects an item under a different cached key', function () {
    const a = randomBytes(32);
    const b = randomBytes(32);
    const nonce = randomBytes(12);
    const plaintext = randomBytes(64);
    const [sealed] = core.gcmEncryptBatch(a, [{ nonce, plaintext }]);
    for (let i = 0; i < 3; i++) {
      expect(core.gcmDecryptBatch(b, [{ nonce, ciphertext: sealed! }])[0]).to.equal(null);
      expect(core.gcmDecryptBatch(a, [{ nonce, ciphertext: sealed! }])[0]?.equals(plaintext)).to.equal(true);
      const tampered = Buffer.from(sealed!);
      tampered[5]! ^= 1;
      expect(core.gcmDecryptBatch(a, [{ nonce, ciphertext: tampered }])[0]).to.equal(null);
    }
  });

  it('keeps the GHASH powers a long item prepared for the key, and uses them correctly for short and long items after it', function () {
    const key = randomBytes(32);
    // 250 bytes are 16 blocks: enough for H^2..H^8 to be prepared (ghash.ts LAZY_POWERS).
    for (const size of [250, 16, 250, 64, 0, 255, 17]) sealOne(key, randomBytes(size), size === 16 ? randomBytes(33) : undefined);
    const items = Array.from({ length: 6 }, (_, i) => ({ nonce: randomBytes(12), plaintext: randomBytes(40 * i + 3), aad: randomBytes(i * 9) }));
    const sealed = core.gcmEncryptBatch(key, items, { path: 'wasm' });
    items.forEach((it, i) => expect(Buffer.concat([it.nonce, sealed[i]!]).toString('base64')).to.equal(nodeSealBase64(key, it.nonce, it.plaintext, it.aad)));
    sealOne(key, randomBytes(64));
  });

  it('leaves cached keys intact through batches with a key per item, hybrid batches and other kernels', function () {
    const key = randomBytes(32);
    sealOne(key, randomBytes(64));
    const items = Array.from({ length: 9 }, () => ({ nonce: randomBytes(12), plaintext: randomBytes(64) }));
    const keys = items.map(() => randomBytes(32));
    const perItem = core.gcmEncryptBatch(keys, items, { path: 'wasm' });
    items.forEach((it, i) => expect(Buffer.concat([it.nonce, perItem[i]!]).toString('base64')).to.equal(nodeSealBase64(keys[i]!, it.nonce, it.plaintext)));
    const hybrid = core.gcmEncryptBatch(key, items, { path: 'hybrid' });
    items.forEach((it, i) => expect(Buffer.concat([it.nonce, hybrid[i]!]).toString('base64')).to.equal(nodeSealBase64(key, it.nonce, it.plaintext)));
    core.hmacBatch('sha256', key, items.map((it) => it.plaintext), { path: 'wasm' });
    sealOne(key, randomBytes(64));
    // wipe() forgets the keys too.
    core.wipe();
    expect(cacheBytes(core).every((b) => b === 0)).to.equal(true);
    sealOne(key, randomBytes(64));
  });

  it('seals correctly after forgetKeys, with the keys it forgot and with others', function () {
    const a = randomBytes(32);
    const b = randomBytes(16);
    sealOne(a, randomBytes(64));
    sealOne(b, randomBytes(64));
    core.forgetKeys();
    sealOne(a, randomBytes(64), randomBytes(10));
    sealOne(a, randomBytes(64));
    core.forgetKeys();
    core.forgetKeys();
    sealOne(b, randomBytes(64));
    sealOne(randomBytes(32), randomBytes(64));
    sealOne(b, randomBytes(64));
  });

  it('holds the keys it caches in its region, and forgetKeys zeroes all of it', function () {
    const keys = [randomBytes(32), randomBytes(16), randomBytes(32)];
    for (const key of keys) sealOne(key, randomBytes(250));
    let cache = cacheBytes(core);
    // The right region: each key, its round keys and its hash key are there.
    for (const key of keys) expect(contains(cache, key)).to.equal(true);
    expect(cache.some((b) => b !== 0)).to.equal(true);
    core.forgetKeys();
    cache = cacheBytes(core);
    expect(cache.every((b) => b === 0)).to.equal(true);
  });

  it('is wiped when the server seals', async function () {
    const server = await startUnsealedServer();
    try {
      const wasm = resolve(server.host.pluginServices, SERVICES.WasmCrypto);
      expect((await server.client.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
      expect((await server.client.post('transit/keys/k', {})).status).to.be.oneOf([200, 204]);
      // The start-up warm-up left its all-zero key's schedule; from here on only transit's key is there.
      wasm.forgetKeys();
      const encrypted = await server.client.post('transit/encrypt/k', { plaintext: Buffer.alloc(64, 7).toString('base64') });
      expect(encrypted.status).to.equal(200);
      expect(cacheBytes(wasm).some((b) => b !== 0)).to.equal(true);
      expect((await server.client.put('sys/seal')).status).to.equal(204);
      expect(cacheBytes(wasm).every((b) => b === 0)).to.equal(true);
    } finally {
      await server.close();
    }
  });

  it('keeps no schedule of a transit key once it is deleted, or of versions once they are trimmed', async function () {
    const server = await startUnsealedServer();
    try {
      const wasm = resolve(server.host.pluginServices, SERVICES.WasmCrypto);
      const c = server.client;
      expect((await c.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
      const plaintext = Buffer.alloc(64, 7).toString('base64');
      const exportedKey = async (name: string, version: number): Promise<Buffer> => {
        const res = await c.get(`transit/export/encryption-key/${name}/${version}`);
        expect(res.status).to.equal(200);
        return Buffer.from(res.body.data.keys[String(version)], 'base64');
      };

      expect((await c.post('transit/keys/gone', { exportable: true })).status).to.be.oneOf([200, 204]);
      expect((await c.post('transit/encrypt/gone', { plaintext })).status).to.equal(200);
      const gone = await exportedKey('gone', 1);
      expect(contains(cacheBytes(wasm), gone), 'cached after use').to.equal(true);
      expect((await c.post('transit/keys/gone/config', { deletion_allowed: true })).status).to.be.oneOf([200, 204]);
      expect((await c.delete('transit/keys/gone')).status).to.equal(204);
      expect(contains(cacheBytes(wasm), gone), 'dropped with the key').to.equal(false);

      expect((await c.post('transit/keys/old', { exportable: true })).status).to.be.oneOf([200, 204]);
      expect((await c.post('transit/encrypt/old', { plaintext })).status).to.equal(200);
      const first = await exportedKey('old', 1);
      expect((await c.post('transit/keys/old/rotate', {})).status).to.be.oneOf([200, 204]);
      expect((await c.post('transit/keys/old/config', { min_encryption_version: 2, min_decryption_version: 2 })).status).to.be.oneOf([200, 204]);
      expect(contains(cacheBytes(wasm), first), 'still cached while version 1 exists').to.equal(true);
      expect((await c.post('transit/keys/old/trim', { min_available_version: 2 })).status).to.equal(200);
      expect(contains(cacheBytes(wasm), first), 'dropped with its version').to.equal(false);
    } finally {
      await server.close();
    }
  });
});
