/** Transit random bytes (https://developer.hashicorp.com/vault/api-docs/secret/transit#generate-random-bytes): counts and sources in the URL or the body. */
import { expect } from 'chai';
import { TransitHarness } from './harness.js';

const bytesOf = (data: { random_bytes: string }, format = 'base64'): Buffer => Buffer.from(data.random_bytes, format as BufferEncoding);

describe('transit random', () => {
  let t: TransitHarness;
  before(async () => {
    t = await TransitHarness.create();
  });

  it('returns 32 bytes in base64 by default, different each time', async () => {
    const a = await t.write('random');
    const b = await t.write('random');
    expect(a.status, a.error).to.equal(200);
    expect(a.data.random_bytes).to.match(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(bytesOf(a.data)).to.have.length(32);
    expect(a.data.random_bytes).to.not.equal(b.data.random_bytes);
  });

  it('takes the count from the body or the URL, the URL winning', async () => {
    expect(bytesOf((await t.write('random', { bytes: 10 })).data)).to.have.length(10);
    expect(bytesOf((await t.write('random', { bytes: '7' })).data)).to.have.length(7);
    expect(bytesOf((await t.write('random/64')).data)).to.have.length(64);
    expect(bytesOf((await t.write('random/5', { bytes: 99 })).data)).to.have.length(5);
    expect(bytesOf((await t.write('random/all/12', { bytes: 99 })).data)).to.have.length(12);
  });

  it('encodes as hex on request', async () => {
    const res = await t.write('random/16', { format: 'hex' });
    expect(res.data.random_bytes).to.match(/^[0-9a-f]{32}$/);
  });

  it('takes the source platform or all, in the URL or the body', async () => {
    for (const [path, body] of [['random/platform', {}], ['random/all', {}], ['random', { source: 'all' }], ['random/platform/8', {}], ['random/all', { bytes: 8 }]] as const) {
      const res = await t.write(path, body);
      expect(res.status, `${path}: ${res.error}`).to.equal(200);
    }
    expect(bytesOf((await t.write('random/all', { bytes: 8 })).data)).to.have.length(8);
  });

  it('answers seal with a 400 saying entropy augmentation is not available', async () => {
    for (const [path, body] of [['random/seal', {}], ['random/seal/16', {}], ['random', { source: 'seal' }]] as const) {
      const res = await t.write(path, body);
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/entropy augmentation/);
    }
  });

  it('refuses an unknown source', async () => {
    expect(await t.write('random/dice/8')).to.include({ status: 400, error: 'unsupported entropy source "dice"; must be "platform" or "seal", or "all"' });
    expect(await t.write('random', { source: 'dice' })).to.include({ status: 400, error: 'unsupported entropy source "dice"; must be "platform" or "seal", or "all"' });
  });

  it('allows 1 to 131072 bytes, with Vault texts outside', async () => {
    expect(bytesOf((await t.write('random/1')).data)).to.have.length(1);
    expect(bytesOf((await t.write('random', { bytes: 131072 })).data)).to.have.length(131072);
    for (const [path, body] of [['random', { bytes: 0 }], ['random/0', {}], ['random/-5', {}], ['random/all/0', {}]] as const) {
      expect(await t.write(path, body)).to.include({ status: 400, error: '"bytes" cannot be less than 1' });
    }
    for (const [path, body] of [['random', { bytes: 131073 }], ['random/131073', {}], ['random/platform/99999999999999999999', {}]] as const) {
      expect(await t.write(path, body)).to.include({ status: 400, error: '"bytes" should be less than 131072' });
    }
  });

  it('refuses a URL count that is not a number, and an unknown format', async () => {
    expect(await t.write('random/lots')).to.include({ status: 400, error: 'error parsing url-set byte count: strconv.Atoi: parsing "lots": invalid syntax' });
    expect(await t.write('random/all/1e3')).to.include({ status: 400, error: 'error parsing url-set byte count: strconv.Atoi: parsing "1e3": invalid syntax' });
    expect(await t.write('random', { format: 'base32' })).to.include({ status: 400, error: 'unsupported encoding format "base32"; must be "hex" or "base64"' });
    expect((await t.write('random', { bytes: 'ten' })).status).to.equal(400);
  });
});
