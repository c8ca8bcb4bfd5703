/** Transit hash (https://developer.hashicorp.com/vault/api-docs/secret/transit#hash-data): digests through the WASM core, checked against node:crypto. */
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { TransitHarness } from './harness.js';

const NODE_NAMES: Record<string, string> = {
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-224': 'sha3-224',
  'sha3-256': 'sha3-256',
  'sha3-384': 'sha3-384',
  'sha3-512': 'sha3-512',
};

describe('transit hash', () => {
  let t: TransitHarness;
  before(async () => {
    t = await TransitHarness.create();
  });

  it('hashes with sha2-256 into hex by default', async () => {
    const res = await t.write('hash', { input: Buffer.from('abc').toString('base64') });
    expect(res.status, res.error).to.equal(200);
    expect(res.data).to.deep.equal({ sum: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' });
  });

  for (const [algorithm, node] of Object.entries(NODE_NAMES)) {
    it(`${algorithm} from the URL or the body equals node:crypto's ${node}, for inputs of many sizes`, async () => {
      for (const size of [0, 1, 55, 56, 64, 111, 112, 128, 1000, 70_000]) {
        const data = randomBytes(size);
        const expected = createHash(node).update(data).digest('hex');
        const url = await t.write(`hash/${algorithm}`, { input: data.toString('base64') });
        expect(url.data.sum, `${algorithm} ${size}`).to.equal(expected);
        const body = await t.write('hash', { input: data.toString('base64'), algorithm, format: 'base64' });
        expect(body.data.sum, `${algorithm} ${size}`).to.equal(Buffer.from(expected, 'hex').toString('base64'));
      }
    });
  }

  it('lets the URL algorithm win over the body', async () => {
    const res = await t.write('hash/sha3-512', { input: 'AA==', algorithm: 'sha2-224' });
    expect(res.data.sum).to.equal(createHash('sha3-512').update(Buffer.alloc(1)).digest('hex'));
  });

  it('hashes an empty input, but requires the field', async () => {
    expect((await t.write('hash', { input: '' })).data.sum).to.equal(createHash('sha256').digest('hex'));
    expect(await t.write('hash', {})).to.include({ status: 400, error: 'input missing' });
  });

  it('refuses bad base64, an unknown format and an unknown algorithm with Vault texts', async () => {
    const bad = await t.write('hash', { input: 'abc' });
    expect(bad.status).to.equal(400);
    expect(bad.error).to.match(/^unable to decode input as base64: illegal base64 data at input byte \d+$/);
    expect(await t.write('hash', { input: 'AA==', format: 'binary' })).to.include({ status: 400, error: 'unsupported encoding format binary; must be "hex" or "base64"' });
    for (const algorithm of ['sha1', 'md5', 'none', 'SHA2-256']) {
      expect(await t.write(`hash/${algorithm}`, { input: 'AA==' })).to.include({ status: 400, error: `unsupported algorithm ${algorithm}` });
    }
  });
});
