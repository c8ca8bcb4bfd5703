/** Transit HMAC: the hmac path and HMAC verification through verify (docs/transit.md, "Ciphertexts, signatures and HMACs" and "Batches"). */
import { expect } from 'chai';
import { TransitHarness, sharedWasm } from './harness.js';

const b64 = (text: string | Buffer): string => Buffer.from(text).toString('base64');

describe('transit hmac', function () {
  this.timeout(30_000);
  let t: TransitHarness;

  before(async () => {
    t = await TransitHarness.create();
    await t.write('keys/mac', { type: 'aes256-gcm96' });
  });

  describe('generating', () => {
    it('returns vault:v1:<base64> with sha2-256 by default', async () => {
      const res = await t.write('hmac/mac', { input: b64('hello') });
      expect(res.status, res.error).to.equal(200);
      expect(res.data.hmac).to.match(/^vault:v1:[A-Za-z0-9+/]+={0,2}$/);
      expect(Buffer.from(res.data.hmac.slice('vault:v1:'.length), 'base64')).to.have.length(32);
    });

    const sizes: Record<string, number> = {
      sha1: 20,
      'sha2-224': 28,
      'sha2-256': 32,
      'sha2-384': 48,
      'sha2-512': 64,
      'sha3-224': 28,
      'sha3-256': 32,
      'sha3-384': 48,
      'sha3-512': 64,
    };
    for (const [algorithm, size] of Object.entries(sizes)) {
      it(`takes ${algorithm} in the URL or the body and gives a ${size}-byte HMAC`, async () => {
        const url = await t.write(`hmac/mac/${algorithm}`, { input: b64('data') });
        const body = await t.write('hmac/mac', { input: b64('data'), algorithm });
        expect(url.status, url.error).to.equal(200);
        expect(url.data.hmac).to.equal(body.data.hmac);
        expect(Buffer.from(url.data.hmac.split(':')[2], 'base64')).to.have.length(size);
      });
    }

    it('lets the URL algorithm win over the body', async () => {
      const both = await t.write('hmac/mac/sha2-512', { input: b64('data'), algorithm: 'sha2-256' });
      const url = await t.write('hmac/mac/sha2-512', { input: b64('data') });
      expect(both.data.hmac).to.equal(url.data.hmac);
    });

    it('refuses an unknown algorithm, and none', async () => {
      for (const algorithm of ['md5', 'none', 'SHA2-256']) {
        const res = await t.write('hmac/mac', { input: b64('data'), algorithm });
        expect(res.status).to.equal(400);
        expect(res.error).to.equal(`unsupported algorithm "${algorithm}"`);
      }
    });

    it('answers 400 encryption key not found for a missing key', async () => {
      const res = await t.write('hmac/nope', { input: b64('x') });
      expect(res).to.include({ status: 400, error: 'encryption key not found' });
    });

    it('requires input, but an empty input is data', async () => {
      expect(await t.write('hmac/mac', {})).to.include({ status: 400, error: 'missing input for HMAC' });
      const empty = await t.write('hmac/mac', { input: '' });
      expect(empty.status, empty.error).to.equal(200);
      expect(empty.data.hmac).to.match(/^vault:v1:/);
    });

    it('refuses input that is not standard base64, naming the field', async () => {
      for (const input of ['abc', 'ab-_', 'a===']) {
        const res = await t.write('hmac/mac', { input });
        expect(res.status).to.equal(400);
        expect(res.error).to.match(/^unable to decode input as base64: illegal base64 data at input byte \d+$/);
      }
    });

    it('gives the same HMAC for the same input and version, and a different one per version', async () => {
      await t.write('keys/rotating', {});
      const v1 = (await t.write('hmac/rotating', { input: b64('same') })).data.hmac;
      expect((await t.write('hmac/rotating', { input: b64('same') })).data.hmac).to.equal(v1);
      await t.write('keys/rotating/rotate');
      const v2 = (await t.write('hmac/rotating', { input: b64('same') })).data.hmac;
      expect(v2).to.match(/^vault:v2:/);
      expect(v2.split(':')[2]).to.not.equal(v1.split(':')[2]);
      const again = await t.write('hmac/rotating', { input: b64('same'), key_version: 1 });
      expect(again.data.hmac).to.equal(v1);
    });

    it('checks key_version against the latest and min_encryption_version', async () => {
      await t.write('keys/versions', {});
      await t.write('keys/versions/rotate');
      await t.write('keys/versions/rotate');
      expect(await t.write('hmac/versions', { input: b64('x'), key_version: 4 })).to.include({
        status: 400,
        error: 'key version does not exist; latest key version is 3',
      });
      expect(await t.write('hmac/versions', { input: b64('x'), key_version: -1 })).to.include({
        status: 400,
        error: 'key version does not exist (cannot be negative)',
      });
      await t.write('keys/versions/config', { min_encryption_version: 2 });
      expect(await t.write('hmac/versions', { input: b64('x'), key_version: 1 })).to.include({
        status: 400,
        error: 'cannot generate HMAC: version is too old (disallowed by policy)',
      });
      expect((await t.write('hmac/versions', { input: b64('x'), key_version: 2 })).data.hmac).to.match(/^vault:v2:/);
      expect((await t.write('hmac/versions', { input: b64('x'), key_version: '3' })).data.hmac).to.match(/^vault:v3:/);
    });

    it('refuses a version below min_decryption_version even when min_encryption_version is 0', async () => {
      await t.write('keys/archived', {});
      await t.write('keys/archived/rotate');
      await t.write('keys/archived/config', { min_decryption_version: 2 });
      const res = await t.write('hmac/archived', { input: b64('x'), key_version: 1 });
      expect(res).to.include({ status: 400, error: 'cannot generate HMAC: version is too old (disallowed by policy)' });
    });

    it('works with every key type, hmac keys included', async () => {
      for (const type of ['aes128-gcm96', 'chacha20-poly1305', 'ed25519', 'ecdsa-p256', 'rsa-2048', 'hmac']) {
        await t.write(`keys/any-${type}`, { type });
        const res = await t.write(`hmac/any-${type}`, { input: b64('x') });
        expect(res.status, `${type}: ${res.error}`).to.equal(200);
        expect(res.data.hmac).to.match(/^vault:v1:/);
      }
    });
  });

  describe('batches', () => {
    it('keeps input order, echoes references and reports bad items per item with 200', async () => {
      const res = await t.write('hmac/mac', {
        batch_input: [
          { input: b64('one'), reference: 'r1' },
          { input: 'not base64!' },
          { reference: 'r3' },
          { input: b64('four'), reference: 4 },
        ],
      });
      expect(res.status, res.error).to.equal(200);
      const [one, bad, missing, four] = res.data.batch_results;
      expect(one).to.have.all.keys('hmac', 'reference');
      expect(one.reference).to.equal('r1');
      expect(one.hmac).to.equal((await t.write('hmac/mac', { input: b64('one') })).data.hmac);
      expect(bad).to.deep.equal({ error: 'unable to decode input as base64: illegal base64 data at input byte 3', reference: '' });
      expect(missing).to.deep.equal({ error: 'missing input for HMAC', reference: 'r3' });
      expect(four.reference).to.equal('4');
      expect(four.hmac).to.equal((await t.write('hmac/mac', { input: b64('four') })).data.hmac);
    });

    it('ignores the top-level input and uses the request reference for items without one', async () => {
      const res = await t.write('hmac/mac', { input: b64('ignored'), reference: 'req', batch_input: [{ input: b64('a') }, { input: b64('b'), reference: 'own' }] });
      expect(res.data.batch_results.map((r: { reference: string }) => r.reference)).to.deep.equal(['req', 'own']);
      expect(res.data.batch_results[0].hmac).to.equal((await t.write('hmac/mac', { input: b64('a') })).data.hmac);
    });

    it('applies the top-level algorithm and key_version to every item', async () => {
      const res = await t.write('hmac/rotating/sha2-384', { key_version: 1, batch_input: [{ input: b64('a') }, { input: b64('b') }] });
      for (const [i, text] of ['a', 'b'].entries()) {
        const one = await t.write('hmac/rotating/sha2-384', { key_version: 1, input: b64(text) });
        expect(res.data.batch_results[i].hmac).to.equal(one.data.hmac);
        expect(one.data.hmac).to.match(/^vault:v1:/);
      }
    });

    it('refuses an empty batch, and a batch that is not a list of objects', async () => {
      expect(await t.write('hmac/mac', { batch_input: [] })).to.include({ status: 400, error: 'missing batch input to process' });
      expect((await t.write('hmac/mac', { batch_input: 'nope' })).status).to.equal(400);
      expect((await t.write('hmac/mac', { batch_input: [1, 2] })).status).to.equal(400);
      const nested = await t.write('hmac/mac', { batch_input: [{ input: { a: 1 } }] });
      expect(nested).to.include({ status: 400, error: 'failed to parse batch input: batch_input[0].input must be a string' });
    });

    it('computes a batch of HMAC-SHA-256 in one WASM call', async () => {
      const wasm = await sharedWasm();
      const original = wasm.hmacBatch;
      let calls = 0;
      wasm.hmacBatch = function (this: typeof wasm, ...args: Parameters<typeof original>) {
        calls++;
        return original.apply(this, args);
      };
      try {
        const res = await t.write('hmac/mac', { batch_input: Array.from({ length: 200 }, (_, i) => ({ input: b64(`item ${i}`) })) });
        expect(res.data.batch_results).to.have.length(200);
        const verified = await t.write('verify/mac', {
          batch_input: res.data.batch_results.map((r: { hmac: string }, i: number) => ({ input: b64(`item ${i}`), hmac: r.hmac })),
        });
        expect(verified.data.batch_results.every((r: { valid?: boolean }) => r.valid === true)).to.equal(true);
      } finally {
        wasm.hmacBatch = original;
      }
      expect(calls).to.equal(2);
    });
  });

  describe('verifying', () => {
    let mac: string;
    before(async () => {
      mac = (await t.write('hmac/mac', { input: b64('payload') })).data.hmac;
    });

    it('accepts the HMAC of the same input and refuses another input', async () => {
      expect((await t.write('verify/mac', { input: b64('payload'), hmac: mac })).data).to.deep.equal({ valid: true });
      expect((await t.write('verify/mac', { input: b64('payload!'), hmac: mac })).data).to.deep.equal({ valid: false });
    });

    it('refuses a tampered or truncated HMAC', async () => {
      const raw = Buffer.from(mac.split(':')[2]!, 'base64');
      raw[0]! ^= 1;
      expect((await t.write('verify/mac', { input: b64('payload'), hmac: `vault:v1:${raw.toString('base64')}` })).data.valid).to.equal(false);
      expect((await t.write('verify/mac', { input: b64('payload'), hmac: `vault:v1:${raw.subarray(0, 16).toString('base64')}` })).data.valid).to.equal(false);
    });

    it('uses hash_algorithm (URL or body) as the HMAC algorithm', async () => {
      const sha512 = (await t.write('hmac/mac/sha2-512', { input: b64('payload') })).data.hmac;
      expect((await t.write('verify/mac/sha2-512', { input: b64('payload'), hmac: sha512 })).data.valid).to.equal(true);
      expect((await t.write('verify/mac', { input: b64('payload'), hmac: sha512, hash_algorithm: 'sha2-512' })).data.valid).to.equal(true);
      expect((await t.write('verify/mac', { input: b64('payload'), hmac: sha512 })).data.valid).to.equal(false);
      const sha3 = (await t.write('hmac/mac/sha3-224', { input: b64('payload') })).data.hmac;
      expect((await t.write('verify/mac/sha3-224', { input: b64('payload'), hmac: sha3 })).data.valid).to.equal(true);
      expect(await t.write('verify/mac/md5', { input: b64('payload'), hmac: sha3 })).to.include({ status: 400, error: 'invalid hash algorithm "md5"' });
    });

    it('verifies HMACs of older versions until min_decryption_version passes them', async () => {
      await t.write('keys/old', {});
      const v1 = (await t.write('hmac/old', { input: b64('x') })).data.hmac;
      await t.write('keys/old/rotate');
      expect((await t.write('verify/old', { input: b64('x'), hmac: v1 })).data.valid).to.equal(true);
      await t.write('keys/old/config', { min_decryption_version: 2 });
      expect(await t.write('verify/old', { input: b64('x'), hmac: v1 })).to.include({
        status: 400,
        error: 'cannot verify HMAC: version is too old (disallowed by policy)',
      });
      expect(await t.write('verify/old', { input: b64('x'), hmac: v1.replace('vault:v1:', 'vault:v3:') })).to.include({
        status: 400,
        error: 'invalid HMAC: version is too new',
      });
    });

    it('answers malformed HMACs with Vault texts', async () => {
      const cases: [string, string][] = [
        ['abc', 'invalid HMAC to verify: no prefix'],
        ['vault:v1', 'invalid HMAC: wrong number of fields'],
        ['vault:vx:AAAA', 'invalid HMAC: version number could not be decoded'],
        ['vault:v1:***', 'unable to decode verification HMAC as base64: illegal base64 data at input byte 0'],
      ];
      for (const [hmac, error] of cases) expect(await t.write('verify/mac', { input: b64('x'), hmac })).to.include({ status: 400, error });
    });

    it('answers encryption key not found for a missing key', async () => {
      expect(await t.write('verify/nope', { input: b64('x'), hmac: mac })).to.include({ status: 400, error: 'encryption key not found' });
    });

    it('verifies a batch, omitting valid when false and echoing references', async () => {
      const res = await t.write('verify/mac', {
        reference: 'req',
        batch_input: [
          { input: b64('payload'), hmac: mac, reference: 'good' },
          { input: b64('other'), hmac: mac },
          { input: b64('payload'), hmac: 'nope', reference: 'bad' },
          { hmac: mac },
        ],
      });
      expect(res.status, res.error).to.equal(200);
      expect(res.data.batch_results).to.deep.equal([
        { valid: true, reference: 'good' },
        { reference: 'req' },
        { error: 'invalid HMAC to verify: no prefix', reference: 'bad' },
        { error: 'missing input', reference: 'req' },
      ]);
    });
  });

  describe('verify takes exactly one of signature, hmac and cmac', () => {
    it('refuses both, and neither, in a single request', async () => {
      expect(await t.write('verify/mac', { input: b64('x'), hmac: 'vault:v1:AAAA', signature: 'vault:v1:AAAA' })).to.include({
        status: 400,
        error: "provide one of 'signature', 'hmac' or 'cmac'",
      });
      expect(await t.write('verify/mac', { input: b64('x') })).to.include({ status: 400, error: "none of 'signature', 'hmac' or 'cmac' was given to verify" });
    });

    it('refuses a batch that mixes them, misses them, or gives both in one item', async () => {
      const cases: [Record<string, string>[], string][] = [
        [[{ input: 'AA==', hmac: 'x' }, { input: 'AA==', signature: 'y' }], "elements of batch_input must all provide either 'signature', 'hmac' or 'cmac'"],
        [[{ input: 'AA==', signature: 'y' }, { input: 'AA==' }], "some elements of batch_input are missing 'signature'"],
        [[{ input: 'AA==' }, { input: 'AA==', hmac: 'x' }], "some elements of batch_input are missing 'hmac'"],
        [[{ input: 'AA==' }], "no batch_input elements have 'signature', 'hmac' or 'cmac'"],
        [[{ input: 'AA==', hmac: 'x', signature: 'y' }], "batch_input[0] provides 'signature' and 'hmac'; provide one of them"],
      ];
      for (const [batch_input, error] of cases) expect(await t.write('verify/mac', { batch_input })).to.include({ status: 400, error });
    });
  });
});
