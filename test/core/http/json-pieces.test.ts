/** The JSON of response bodies in pieces: the bytes JSON.stringify gives, with turns of the event loop between pieces. */
import { expect } from 'chai';
import { jsonBody, PIECE_CHARS } from '../../../core/http/json-pieces.js';
import { JsonText } from '../../../core/framework/json-text.js';
import { turnsDuring } from '../../helpers/event-loop.js';

async function bytesOf(value: unknown): Promise<Buffer> {
  const body = jsonBody(value);
  return body instanceof Promise ? Buffer.concat((await body).pieces) : body;
}

/** A string of `length` characters with a surrogate pair across each piece boundary, escapes and a lone surrogate. */
function awkwardString(length: number): string {
  const chars = Array.from({ length }, (_, i) => String.fromCharCode(0x61 + (i % 26)));
  for (let boundary = PIECE_CHARS; boundary < length - 1; boundary += PIECE_CHARS) {
    chars[boundary - 1] = '\ud83d';
    chars[boundary] = '\ude00';
  }
  chars[5] = '"';
  chars[6] = '\\';
  chars[7] = '\n';
  chars[8] = '\u0001';
  chars[9] = 'é';
  chars[2 * PIECE_CHARS + 3] = '\udc00';
  return chars.join('');
}

describe('JSON of response bodies in pieces', () => {
  const results = Array.from({ length: 40_000 }, (_, i) => ({ ciphertext: `vault:v1:${'A'.repeat(40 + (i % 7))}`, key_version: 1, reference: i % 3 ? '' : `ref ${i}` }));
  const shapes: Record<string, unknown> = {
    'a batch answer in its envelope': { request_id: 'r', lease_id: '', renewable: false, lease_duration: 0, data: { batch_results: results }, wrap_info: null, warnings: null, auth: null },
    'a long string with surrogate pairs across piece boundaries, escapes and a lone surrogate': { data: { ciphertext: awkwardString(3 * PIECE_CHARS + 5) } },
    'a large array with one huge element among small ones': [1, 'two', { big: awkwardString(PIECE_CHARS + 10), n: 3 }, ...results.slice(0, 100), [awkwardString(2 * PIECE_CHARS)]],
    'members JSON leaves out or turns into null': {
      data: { batch_results: results, skipped: undefined, fn: () => 1, sym: Symbol('s'), date: new Date(0), map: new Map([[1, 2]]) },
      list: [undefined, () => 1, Symbol('s'), null, ...results.slice(0, 30_000)],
      empty: { a: [], o: {} },
    },
    'a small body': { data: { ciphertext: 'vault:v1:abc', key_version: 1 }, warnings: null },
  };
  for (const [name, value] of Object.entries(shapes)) {
    it(`gives the bytes of JSON.stringify for ${name}`, async () => {
      expect((await bytesOf(value)).equals(Buffer.from(JSON.stringify(value), 'utf8'))).to.equal(true);
    });
  }

  it('answers a small body at once, in one Buffer', () => {
    expect(jsonBody(shapes['a small body'])).to.be.instanceOf(Buffer);
  });

  it('gives the event loop a turn for each piece of a large body', async () => {
    const body = { data: { batch_results: Array.from({ length: 5 }, () => results).flat() } };
    const chars = JSON.stringify(body).length;
    const { turns } = await turnsDuring(async () => jsonBody(body));
    expect(turns).to.be.at.least(Math.floor(chars / PIECE_CHARS));
  });

  describe('JSON text a backend wrote (JsonText)', () => {
    /** A JsonText of `value` whose plain value must not be asked for: the HTTP layer sends the text. */
    const written = (value: unknown) =>
      new JsonText(JSON.stringify(value), () => {
        throw new Error('the plain value was made');
      });

    it('sends the text where it stands in a small body, with what JSON leaves out left out around it', async () => {
      const value = { request_id: 'r', data: { batch_results: written(results.slice(0, 3)), gone: undefined }, warnings: ['é'], list: [undefined, 1] };
      const expected = { request_id: 'r', data: { batch_results: results.slice(0, 3) }, warnings: ['é'], list: [null, 1] };
      const body = jsonBody(value);
      expect(body).to.be.instanceOf(Buffer);
      expect((body as Buffer).equals(Buffer.from(JSON.stringify(expected), 'utf8'))).to.equal(true);
    });

    it('sends the text in pieces in a large body, whether it is the large part or sits beside it', async () => {
      const text = written(results);
      expect(text.text.length).to.be.greaterThan(PIECE_CHARS);
      const beside = { data: { batch_results: text, other: results.slice(0, 10_000) }, note: written({ a: 'b' }) };
      const expected = { data: { batch_results: results, other: results.slice(0, 10_000) }, note: { a: 'b' } };
      expect((await bytesOf(beside)).equals(Buffer.from(JSON.stringify(expected), 'utf8'))).to.equal(true);
      expect((await bytesOf(text)).equals(Buffer.from(JSON.stringify(results), 'utf8'))).to.equal(true);
    });

    it('sends it where it stands among the elements of a large array, not only as a member of an object', async () => {
      const list = [...results.slice(0, 30_000), written({ n: 1 }), ...results.slice(0, 10_000)];
      const expected = [...results.slice(0, 30_000), { n: 1 }, ...results.slice(0, 10_000)];
      expect(JSON.stringify(expected).length).to.be.greaterThan(PIECE_CHARS);
      expect((await bytesOf({ data: { list } })).equals(Buffer.from(JSON.stringify({ data: { list: expected } }), 'utf8'))).to.equal(true);
    });

    it('gives everything else the plain value, made once', () => {
      let made = 0;
      const text = new JsonText('[1]', () => {
        made++;
        return [1];
      });
      expect(JSON.stringify({ a: text, b: text })).to.equal('{"a":[1],"b":[1]}');
      expect(made).to.equal(1);
    });
  });
});
