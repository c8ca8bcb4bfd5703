/**
 * An AsciiText (a text of megabytes kept as bytes: core/large-text.ts) reads, writes, hashes and
 * crosses the plugin boundary as the string it holds would, at every layer it passes.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { AsciiText, AsciiTextBuilder, bodyAsciiText, WINDOW_CHARS } from '../../core/large-text.js';
import { jsonBody } from '../../core/http/json-pieces.js';
import { hashToJson, hashToJsonRuns } from '../../core/audit/hash-structure.js';
import { AuditHmac } from '../../core/audit/salt.js';
import { compileFields } from '../../core/framework/schema.js';
import { toWireValue } from '../../core/plugins/isolation/wire-values.js';
import { decodeBase64, decodeBase64InTurns, encodeBase64InTurns } from '../../core/tools/base64.js';

/** An AsciiText of `text` in pieces cut at `cuts`, as the builder makes one. */
function pieced(text: string, cuts: readonly number[]): AsciiText {
  const builder = new AsciiTextBuilder();
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    builder.text(text.slice(at, cut));
    at = cut;
  }
  return builder.build();
}

/** The bytes of a JSON body, joined. */
async function bodyText(value: unknown): Promise<string> {
  const body = await jsonBody(value);
  return (Buffer.isBuffer(body) ? body : Buffer.concat(body.pieces)).toString('utf8');
}

describe('AsciiText', () => {
  const base64 = randomBytes(3 * 1024 * 1024).toString('base64');

  it('reads its characters across its pieces, from any start, as the string would', () => {
    const text = pieced(base64, [5, 70_000, 2_000_001]);
    expect(text.length).to.equal(base64.length);
    expect(text.toString() === base64).to.equal(true);
    for (const [start, end] of [[0, 9], [3, 8], [69_990, 70_010], [2_000_000, 2_000_000 + WINDOW_CHARS], [base64.length - 2, base64.length]] as const) {
      expect(text.chars(start, end)).to.equal(base64.slice(start, end));
      expect(text.from(start).chars(0, 20)).to.equal(base64.slice(start, start + 20));
    }
    expect(text.from(70_000).toString() === base64.slice(70_000)).to.equal(true);
    expect(JSON.stringify({ a: text }) === JSON.stringify({ a: base64 })).to.equal(true);
  });

  it('is built from base64 of bytes of any length, whole quanta between pieces, as Buffer encodes them', async () => {
    const bytes = randomBytes(5 * 1024 * 1024 + 2);
    const built = new AsciiTextBuilder().text('vault:v1:').base64(bytes.subarray(0, 3 * 100_000)).base64(bytes.subarray(3 * 100_000)).build();
    expect(built.toString() === `vault:v1:${bytes.subarray(0, 300_000).toString('base64')}${bytes.subarray(300_000).toString('base64')}`).to.equal(true);
    const encoded = await encodeBase64InTurns(bytes);
    expect(encoded.toString() === bytes.toString('base64')).to.equal(true);
    expect((await decodeBase64InTurns(encoded, 'plaintext')).equals(bytes)).to.equal(true);
  });

  it('is decoded in windows with the bytes and the errors of decodeBase64, wherever a mistake stands, as a string is', async () => {
    const good = randomBytes(3 * 1024 * 1024 + 1).toString('base64');
    const at = [0, 17, WINDOW_CHARS - 1, WINDOW_CHARS, 2 * WINDOW_CHARS + 3, good.length - 5];
    const cases = [good, good.slice(0, -4), `${good.slice(0, -1)}*`];
    for (const where of at) for (const bad of ['*', '-', '_', '=', ' ', '\u00e9']) cases.push(good.slice(0, where) + bad + good.slice(where + 1));
    cases.push(good.replace(/(.{76})/g, '$1\n'));
    for (const text of cases) {
      const expected = (() => {
        try {
          return decodeBase64(text, 'plaintext');
        } catch (err) {
          return (err as Error).message;
        }
      })();
      const got = async (value: string | AsciiText) => decodeBase64InTurns(value, 'plaintext').catch((err: Error) => err.message);
      expect(await got(text)).to.deep.equal(expected);
      if (/^[\x20-\x7e]*$/.test(text) && !text.includes('\\')) expect(await got(bodyAsciiText(Buffer.from(text, 'latin1')))).to.deep.equal(expected);
    }
  });

  it('refuses text JSON would have to escape, which could not be written between its quotes as it is', () => {
    for (const bad of ['"', '\\', '\n', 'é', '\u0001']) expect(() => new AsciiTextBuilder().text(`ab${bad}`)).to.throw(TypeError);
  });

  it('is written into a response body, small or large, as the string is', async () => {
    const text = pieced(base64, [1, 1_000_000]);
    expect(await bodyText({ data: { ciphertext: text, key_version: 1 } })).to.equal(JSON.stringify({ data: { ciphertext: base64, key_version: 1 } }));
    expect(await bodyText({ list: [1, text, 'x'] })).to.equal(JSON.stringify({ list: [1, base64, 'x'] }));
    const small = pieced('vault:v1:abc', [3]);
    expect(await bodyText({ data: { ciphertext: small } })).to.equal('{"data":{"ciphertext":"vault:v1:abc"}}');
  });

  it('is hashed into an audit entry as the string is, in slices or at once, and written raw where a key is exempt', async () => {
    const hmac = new AuditHmac('salt');
    const text = pieced(base64, [7, 300_000, 600_001]);
    const expected = hashToJson({ plaintext: base64, n: 1 }, hmac);
    expect(hashToJson({ plaintext: text, n: 1 }, hmac)).to.equal(expected);
    expect((await hashToJsonRuns({ plaintext: text, n: 1 }, hmac))!.join('')).to.equal(expected);
    expect(hashToJson({ plaintext: text }, hmac, ['plaintext']) === JSON.stringify({ plaintext: base64 })).to.equal(true);
    expect(hashToJson({ plaintext: text }, undefined) === JSON.stringify({ plaintext: base64 })).to.equal(true);
  });

  it('reaches a large-string field as it is, and a string field as its string', () => {
    const text = pieced(base64, [10]);
    const fields = compileFields({
      plaintext: { type: 'large-string', description: 'kept' },
      name: { type: 'string', description: 'made a string' },
    });
    const { input } = fields.parse({ plaintext: text, name: text });
    expect(input.plaintext).to.equal(text);
    expect(typeof input.name).to.equal('string');
    expect(input.name === base64).to.equal(true);
    expect(fields.parse({ plaintext: 'short' }).input.plaintext).to.equal('short');
  });

  it('crosses to an isolated plugin, and back, as its string', () => {
    const text = pieced(base64, [10]);
    const wire = toWireValue({ data: { plaintext: text, n: 1 } }) as { data: { plaintext: unknown } };
    expect(typeof wire.data.plaintext).to.equal('string');
    expect(wire.data.plaintext === base64).to.equal(true);
  });
});
