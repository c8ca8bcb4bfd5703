import { createHash, createHmac } from 'node:crypto';
import { expect } from 'chai';
import { DISPATCH_RULES, WasmCrypto, planBatch, type DispatchRule } from '../../wasm/index.js';
import { chunk } from '../../wasm/arena.js';
import { nodeGcmSeal } from '../../wasm/node-paths.js';
import { loadCrypto } from './support.js';

const rule: DispatchRule = { paths: ['wasm'], fast: 'wasm', maxItemBytes: 100, minItems: 3 };

describe('wasm crypto core: dispatch', function () {
  it('sends items up to the size limit to the batch path and larger ones to node:crypto', function () {
    const sizes = [10, 100, 101, 5, 4000, 0];
    expect(planBatch(rule, sizes.length, (i) => sizes[i]!)).to.deep.equal({ path: 'wasm', fast: [0, 1, 3, 5], node: [2, 4] });
  });

  it('sends the whole batch to node:crypto when fewer items than the minimum qualify', function () {
    const sizes = [10, 5000, 20];
    expect(planBatch(rule, sizes.length, (i) => sizes[i]!)).to.deep.equal({ path: 'wasm', fast: [], node: [0, 1, 2] });
  });

  it('follows a forced path for every item, and refuses a path the primitive does not have', function () {
    const sizes = [1, 1_000_000];
    expect(planBatch(rule, 2, (i) => sizes[i]!, 'wasm')).to.deep.equal({ path: 'wasm', fast: [0, 1], node: [] });
    expect(planBatch(rule, 2, (i) => sizes[i]!, 'node')).to.deep.equal({ path: 'wasm', fast: [], node: [0, 1] });
    expect(() => planBatch(rule, 2, (i) => sizes[i]!, 'hybrid')).to.throw(RangeError);
  });

  it('uses another batch path for a batch with few qualifying items, where the rule says so', function () {
    const withFew: DispatchRule = {
      paths: ['hybrid', 'wasm'],
      fast: 'hybrid',
      few: { path: 'wasm', maxItems: 2, maxItemBytes: 50 },
      maxItemBytes: 100,
      minItems: 1,
    };
    expect(planBatch(withFew, 3, () => 10).path).to.equal('hybrid');
    expect(planBatch(withFew, 3, (i) => (i === 0 ? 1000 : 10))).to.deep.equal({ path: 'wasm', fast: [1, 2], node: [0] });
    expect(planBatch(withFew, 3, (i) => [1000, 10, 80][i]!)).to.deep.equal({ path: 'wasm', fast: [1], node: [0, 2] });
  });

  it('has a rule for every primitive whose batch paths include its chosen ones', function () {
    for (const [name, r] of Object.entries(DISPATCH_RULES)) {
      expect(r.paths, name).to.include(r.fast);
      if (r.few !== undefined) expect(r.paths, name).to.include(r.few.path);
      expect(r.minItems, name).to.be.at.least(1);
    }
  });

  it('takes the hybrid path for AES-192 or mixed key lengths unless the bitsliced path is forced', async function () {
    const core = await loadCrypto();
    const nonce = new Uint8Array(12);
    const plaintext = new Uint8Array(40).fill(1);
    const k192 = new Uint8Array(24).fill(2);
    const mixed = [new Uint8Array(16).fill(3), new Uint8Array(32).fill(4)];
    expect(core.gcmEncryptBatch(k192, [{ nonce, plaintext }])[0]!.toString('hex')).to.equal(nodeGcmSeal(k192, nonce, plaintext).toString('hex'));
    expect(core.gcmEncryptBatch(mixed, [{ nonce, plaintext }, { nonce, plaintext }]).map((c) => c.toString('hex'))).to.deep.equal(
      mixed.map((k) => nodeGcmSeal(k, nonce, plaintext).toString('hex')),
    );
    expect(() => core.gcmEncryptBatch(k192, [{ nonce, plaintext }], { path: 'wasm' })).to.throw(RangeError);
    expect(() => core.gcmEncryptBatch(mixed, [{ nonce, plaintext }, { nonce, plaintext }], { path: 'wasm' })).to.throw(RangeError);
  });

  it('returns results in input order when one batch is split between both paths', async function () {
    const core = await loadCrypto();
    const limit = DISPATCH_RULES.sha256.maxItemBytes;
    const inputs = [limit + 1, 3, limit, 5 * limit, 0, 64, limit + 17, 1].map((n) => new Uint8Array(Math.max(n, 0)).fill(n & 0xff));
    expect(core.hashBatch('sha256', inputs).map((d) => d.toString('hex'))).to.deep.equal(inputs.map((m) => createHash('sha256').update(m).digest('hex')));
    const key = new Uint8Array(32).fill(9);
    const items = inputs.map((plaintext, i) => ({ nonce: new Uint8Array(12).fill(i), plaintext }));
    expect(core.gcmEncryptBatch(key, items).map((c) => c.toString('hex'))).to.deep.equal(items.map((it) => nodeGcmSeal(key, it.nonce, it.plaintext).toString('hex')));
  });
});

describe('wasm crypto core: arena', function () {
  it('cuts runs to fit the arena and gives an oversized item a run of its own', function () {
    const costs = [10, 10, 10, 50, 10, 10];
    expect(chunk([0, 1, 2, 3, 4, 5], 40, 5, (i) => costs[i]!).map((r) => r.items)).to.deep.equal([[0, 1, 2], [3], [4, 5]]);
  });

  it('processes batches larger than a small arena in chunks, on every kernel', async function () {
    const small = await WasmCrypto.load({ arenaBytes: 64 * 1024, warmUp: false });
    const inputs = Array.from({ length: 300 }, (_, i) => new Uint8Array(i * 3).fill(i & 0xff));
    inputs.push(new Uint8Array(200 * 1024).fill(7));
    const key = new Uint8Array(32).fill(3);
    expect(small.hashBatch('sha512', inputs, { path: 'wasm' }).map((d) => d.toString('hex'))).to.deep.equal(inputs.map((m) => createHash('sha512').update(m).digest('hex')));
    expect(small.hmacBatch('sha256', key, inputs, { path: 'wasm' }).map((d) => d.toString('hex'))).to.deep.equal(inputs.map((m) => createHmac('sha256', key).update(m).digest('hex')));
    const items = inputs.map((plaintext, i) => ({ nonce: new Uint8Array(12).fill(i & 0xff), plaintext }));
    const sealed = small.gcmEncryptBatch(key, items, { path: 'hybrid' });
    expect(sealed.map((c) => c.toString('hex'))).to.deep.equal(items.map((it) => nodeGcmSeal(key, it.nonce, it.plaintext).toString('hex')));
    const opened = small.gcmDecryptBatch(key, items.map((it, i) => ({ nonce: it.nonce, ciphertext: sealed[i]! })), { path: 'hybrid' });
    expect(opened.every((p, i) => p !== null && p.equals(inputs[i]!))).to.equal(true);
    const keys = items.map((_, i) => new Uint8Array(16).fill(i & 0xff));
    const sealedWasm = small.gcmEncryptBatch(keys, items, { path: 'wasm' });
    expect(sealedWasm.map((c) => c.toString('hex'))).to.deep.equal(items.map((it, i) => nodeGcmSeal(keys[i]!, it.nonce, it.plaintext).toString('hex')));
  });

  it('HMACs messages laid back to back in one buffer as node:crypto does, at every length and across arena chunks', async function () {
    const small = await WasmCrypto.load({ arenaBytes: 64 * 1024, warmUp: false });
    const key = Buffer.from('5d3c6a9e-8f7b-4c1d-9e2a-0b1c2d3e4f50', 'utf8');
    // Empty messages, block edges, the dispatch limit either side, and enough to need several chunks.
    const lengths = [0, 1, 55, 56, 63, 64, 88, 133, 767, 768, 769, 5000, ...Array.from({ length: 900 }, (_, i) => (i * 37) % 300)];
    const messages = lengths.map((length, i) => Buffer.alloc(length, i & 0xff));
    const ends: number[] = [];
    let at = 0;
    for (const m of messages) ends.push((at += m.length));
    const digests = small.hmacSha256Packed(key, Buffer.concat(messages), ends);
    expect(digests.length).to.equal(32 * messages.length);
    const expected = messages.map((m) => createHmac('sha256', key).update(m).digest('hex'));
    expect(messages.map((_, i) => digests.subarray(32 * i, 32 * i + 32).toString('hex'))).to.deep.equal(expected);
    expect(small.hmacSha256Packed(key, Buffer.alloc(0), []).length).to.equal(0);
  });

  it('zeroes every byte a batch used in linear memory', async function () {
    const core = await WasmCrypto.load({ arenaBytes: 1024 * 1024, warmUp: false });
    const secret = new Uint8Array(48).fill(0xa5);
    core.hmacBatch('sha256', secret, [secret, secret], { path: 'wasm' });
    core.hmacSha256Packed(secret, Buffer.concat([secret, secret]), [48, 96]);
    core.gcmEncryptBatch(secret.subarray(0, 32), [{ nonce: secret.subarray(0, 12), plaintext: secret }], { path: 'hybrid' });
    core.gcmEncryptBatch([secret.subarray(0, 32)], [{ nonce: secret.subarray(0, 12), plaintext: secret }], { path: 'wasm' });
    core.hkdfSha256Batch(secret, [secret], 64, secret, { path: 'wasm' });
    core.hashBatch('sha256', Array.from({ length: 9 }, () => secret), { path: 'wasm' });
    core.hashBatch('sha256', [secret, secret.subarray(1)], { path: 'wasm' });
    // Last, so that no later batch overwrites what they left: a single item's own sealing and opening paths.
    const sealed = Buffer.from(core.gcmSealBase64(secret.subarray(0, 32), [{ plaintext: secret, aad: secret }], secret.subarray(0, 12))[0]!, 'base64');
    const [opened] = core.gcmDecryptBatch(secret.subarray(0, 32), [{ nonce: sealed.subarray(0, 12), ciphertext: sealed.subarray(12), aad: secret }]);
    expect(opened).to.deep.equal(Buffer.from(secret));
    const { kernels } = core as unknown as { kernels: { memory: { buffer: ArrayBuffer }; keyCacheRegion(): number; keyCacheSize(): number } };
    const bytes = new Uint8Array(kernels.memory.buffer);
    const longestRun = (from: number, to: number): number => {
      let run = 0;
      let longest = 0;
      for (let i = from; i < to; i++) {
        run = bytes[i] === 0xa5 ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      return longest;
    };
    // The key cache keeps the last keys of the bitsliced GCM path on purpose, until forgetKeys.
    const cache = kernels.keyCacheRegion();
    const cacheEnd = cache + kernels.keyCacheSize();
    expect(longestRun(cache, cacheEnd)).to.be.at.least(32);
    expect(Math.max(longestRun(0, cache), longestRun(cacheEnd, bytes.length))).to.be.lessThan(4);
    core.forgetKeys();
    expect(longestRun(0, bytes.length)).to.be.lessThan(4);
  });

  it('returns results as Buffers of their own, which the next batch leaves alone', async function () {
    const core = await loadCrypto();
    const inputs = Array.from({ length: 9 }, (_, i) => new Uint8Array(64).fill(i));
    const first = core.hashBatch('sha256', inputs, { path: 'wasm' });
    const expected = inputs.map((m) => createHash('sha256').update(m).digest());
    core.hashBatch('sha256', inputs.map((m) => m.map((b) => b ^ 0xff)), { path: 'wasm' });
    for (const [i, d] of first.entries()) {
      expect(Buffer.isBuffer(d)).to.equal(true);
      expect(d).to.be.instanceOf(Buffer);
      expect(d.length).to.equal(32);
      expect(d.equals(expected[i]!)).to.equal(true);
      expect(d.toString('base64')).to.equal(expected[i]!.toString('base64'));
      expect(Buffer.isBuffer(d.subarray(1, 3))).to.equal(true);
    }
    expect(Buffer.concat(first).equals(Buffer.concat(expected))).to.equal(true);
    first[0]!.fill(0);
    expect(first[1]!.equals(expected[1]!)).to.equal(true);
  });

  it('refuses malformed arguments before touching the kernels', async function () {
    const core = await loadCrypto();
    expect(() => core.gcmEncryptBatch(new Uint8Array(15), [{ nonce: new Uint8Array(12), plaintext: new Uint8Array(1) }])).to.throw(RangeError);
    expect(() => core.gcmEncryptBatch(new Uint8Array(16), [{ nonce: new Uint8Array(16), plaintext: new Uint8Array(1) }])).to.throw(RangeError);
    expect(() => core.hmacBatch('sha256', [new Uint8Array(1)], [new Uint8Array(1), new Uint8Array(2)])).to.throw(RangeError);
    expect(() => core.hkdfSha256Batch(new Uint8Array(1), [new Uint8Array(1)], 255 * 32 + 1)).to.throw(RangeError);
    expect(() => core.hkdfSha256Batch(new Uint8Array(1), [new Uint8Array(1)], 0)).to.throw(RangeError);
  });

  it('makes nonces with one random fill, each 12 bytes and distinct', function () {
    const nonces = WasmCrypto.randomNonces(1000);
    expect(nonces).to.have.length(1000);
    expect(nonces.every((n) => n.length === 12)).to.equal(true);
    expect(new Set(nonces.map((n) => n.toString('hex'))).size).to.equal(1000);
  });

  it('hands out pooled nonces once: distinct across pool refills, and earlier ones never change', function () {
    // Single nonces come from a 16 KB pool (~1,365 per fill); 5,000 of them cross several refills.
    const singles = Array.from({ length: 5000 }, () => WasmCrypto.randomNonceBlock(1));
    const copies = singles.map((n) => Buffer.from(n).toString('hex'));
    const blocks = [WasmCrypto.randomNonceBlock(300), WasmCrypto.randomNonceBlock(2000)];
    const more = Array.from({ length: 2000 }, () => WasmCrypto.randomNonceBlock(1).toString('hex'));
    expect(singles.map((n) => n.toString('hex'))).to.deep.equal(copies);
    const all = [...copies, ...more, ...blocks.flatMap((b) => Array.from({ length: b.length / 12 }, (_, i) => b.subarray(i * 12, i * 12 + 12).toString('hex')))];
    expect(all).to.have.length(5000 + 2000 + 2300);
    expect(new Set(all).size).to.equal(all.length);
  });
});
