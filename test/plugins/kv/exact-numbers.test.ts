/**
 * kv keeps the numbers a client writes with every digit, as Vault does (Go's json.Number): an
 * integer past 2^53, a decimal with more digits than a double keeps and a number out of a
 * double's range read back as written, through version 1 and version 2 (write, read, patch,
 * subkeys, custom metadata) and through response wrapping. The answers are read as raw text: a
 * client's JSON.parse would round them again.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import type { TestClient, TestResponse } from '../../helpers/http.js';

const BIG = '12345678901234567891';
const NEGATIVE = '-98765432109876543210';
const DECIMAL = '0.12345678901234567890123';
const HUGE = '1e400';
/** A secret as raw JSON text, with every kind of number JSON.parse would change, nested too. */
const SECRET = `{"big":${BIG},"negative":${NEGATIVE},"decimal":${DECIMAL},"huge":${HUGE},"small":42,"text":"${BIG}","nested":{"list":[${BIG},1.5]}}`;

describe('kv numbers with every digit', function () {
  this.timeout(30_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  let client: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    client = server.client;
    expect((await client.post('sys/mounts/kv', { type: 'kv', options: { version: '2' } })).status).to.equal(204);
    expect((await client.post('sys/mounts/plain', { type: 'kv' })).status).to.equal(204);
  });
  after(() => server.close());

  const sendRaw = (method: string, path: string, text: string, contentType = 'application/json') =>
    client.send(method, path, { rawBody: text, headers: { 'Content-Type': contentType } });
  /** The raw JSON text of the object at `data`, `data.data`, … (one "data" per level) in an answer. */
  const dataText = (res: TestResponse, levels: number): string => {
    expect(res.status, res.text).to.equal(200);
    let start = -1;
    for (let level = 0; level < levels; level++) start = res.text.indexOf('"data":{', start + 1) + '"data":'.length;
    let depth = 0;
    for (let i = start; i < res.text.length; i++) {
      if (res.text[i] === '{') depth++;
      else if (res.text[i] === '}' && --depth === 0) return res.text.slice(start, i + 1);
    }
    throw new Error(`no object at level ${levels} in ${res.text}`);
  };
  /** Version 2 answers the secret at data.data, version 1 at data. */
  const V2 = 2;
  const V1 = 1;

  it('version 2 writes and reads back every digit, at the current version and by number', async () => {
    const written = await sendRaw('POST', 'kv/data/app', `{"data":${SECRET}}`);
    expect(written.status, written.text).to.equal(200);
    const read = await client.get('kv/data/app');
    expect(dataText(read, V2)).to.equal(SECRET);
    expect(dataText(await client.get('kv/data/app?version=1'), V2)).to.equal(SECRET);
  });

  it('version 2 patches with every digit, of the patch and of the data it merges into', async () => {
    await sendRaw('POST', 'kv/data/patched', `{"data":${SECRET}}`);
    const patched = await sendRaw('PATCH', 'kv/data/patched', `{"data":{"added":98765432109876543211,"small":null}}`, 'application/merge-patch+json');
    expect(patched.status, patched.text).to.equal(200);
    const expected = SECRET.replace(',"small":42', '').replace(/}$/, ',"added":98765432109876543211}');
    expect(dataText(await client.get('kv/data/patched'), V2)).to.equal(expected);
  });

  it('version 2 lists a big number as a value, not an object, in subkeys', async () => {
    await sendRaw('POST', 'kv/data/shape', `{"data":${SECRET}}`);
    const subkeys = await client.get('kv/subkeys/shape');
    expect(subkeys.status, subkeys.text).to.equal(200);
    expect(subkeys.body.data.subkeys).to.deep.equal({ big: null, negative: null, decimal: null, huge: null, small: null, text: null, nested: { list: null } });
  });

  it('keeps every digit of a number given as custom metadata, as its text', async () => {
    expect((await sendRaw('POST', 'kv/metadata/app', `{"custom_metadata":{"id":${BIG},"plain":7}}`)).status).to.equal(204);
    expect((await client.get('kv/metadata/app')).body.data.custom_metadata).to.deep.equal({ id: BIG, plain: '7' });
    const patched = await sendRaw('PATCH', 'kv/metadata/app', `{"custom_metadata":{"other":${NEGATIVE}}}`, 'application/merge-patch+json');
    expect(patched.status, patched.text).to.equal(204);
    expect((await client.get('kv/metadata/app')).body.data.custom_metadata).to.deep.equal({ id: BIG, plain: '7', other: NEGATIVE });
  });

  it('version 1 writes and reads back every digit', async () => {
    expect((await sendRaw('POST', 'plain/app', SECRET)).status).to.equal(204);
    expect(dataText(await client.get('plain/app'), V1)).to.equal(SECRET);
  });

  it('keeps every digit through response wrapping', async () => {
    await sendRaw('POST', 'kv/data/wrapped', `{"data":${SECRET}}`);
    const wrapped = await client.get('kv/data/wrapped', { headers: { 'X-Vault-Wrap-TTL': '5m' } });
    expect(wrapped.status, wrapped.text).to.equal(200);
    const unwrapped = await client.post('sys/wrapping/unwrap', { token: wrapped.body.wrap_info.token });
    expect(dataText(unwrapped, V2)).to.equal(SECRET);
  });

  it('answers a secret without such numbers exactly as before', async () => {
    const plain = '{"user":"app","port":5432,"ratio":0.25,"tags":["a"],"none":null}';
    await sendRaw('POST', 'kv/data/ordinary', `{"data":${plain}}`);
    expect(dataText(await client.get('kv/data/ordinary'), V2)).to.equal(plain);
  });
});
