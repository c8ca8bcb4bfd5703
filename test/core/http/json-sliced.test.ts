import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { parseBody, SLICED_BODY_BYTES } from '../../../core/http/body.js';
import { ASCII_TEXT_CHARS, parseJsonInTurns, safeCut } from '../../../core/http/json-sliced.js';
import { AsciiText } from '../../../core/large-text.js';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from '../../../core/http/json-limits.js';
import { BadRequestError } from '../../../core/errors.js';
import { exactBody, stringifyExact } from '../../../core/framework/exact-json.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import { largeObjectBytes } from '../../helpers/heap.js';

const OPEN: JsonLimits = { depth: 10_000, stringLength: 64 * 1024 * 1024, objectEntries: 1_000_000, arrayElements: 1_000_000, strings: -1 };

/** What the large-body path makes of `text`, whatever its size. */
async function sliced(text: string, limits: JsonLimits = OPEN): Promise<unknown> {
  const raw = Buffer.from(text, 'utf8');
  return (await parseJsonInTurns(raw, 0, raw.length, limits)).value;
}

/** A random JSON value with strings, numbers, literals, escapes, non-ASCII text and nesting. */
function randomValue(depth: number, next: () => number): unknown {
  const pick = next() % (depth > 4 ? 5 : 8);
  const strings = ['', 'a', 'ünï', '\u2028', '"quoted"', '\\', '\ud83d\ude00', 'line\nbreak', '__proto__', '0', 'x'.repeat(next() % 300)];
  switch (pick) {
    case 0:
      return strings[next() % strings.length];
    case 1:
      return (next() % 2000) - 1000 + (next() % 3 === 0 ? 0.5 : 0);
    case 2:
      return [true, false, null][next() % 3];
    case 3:
      return 1e21 * (next() % 7);
    case 4:
      return randomBytes(next() % 200).toString('base64');
    case 5:
    case 6: {
      const out: unknown[] = [];
      for (let i = next() % 30; i > 0; i--) out.push(randomValue(depth + 1, next));
      return out;
    }
    default: {
      const out: Record<string, unknown> = {};
      for (let i = next() % 12; i > 0; i--) {
        const key = strings[next() % strings.length]!;
        Object.defineProperty(out, key, { value: randomValue(depth + 1, next), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
  }
}

describe('large request bodies parsed in slices', () => {
  it('makes what JSON.parse makes of the same text, for random bodies large and small', async () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let round = 0; round < 40; round++) {
      const items = Array.from({ length: 1 + (next() % 400) }, () => randomValue(0, next));
      const text = JSON.stringify(round % 2 === 0 ? { batch_input: items, n: round } : items, null, round % 3 === 0 ? 2 : undefined);
      expect(await sliced(text)).to.deep.equal(JSON.parse(text), `round ${round}`);
    }
  });

  it('keeps members in JSON.parse\'s order, the last of two with one name, and __proto__ as a member', async () => {
    const big = 'b'.repeat(200_000);
    const text = `{"z":1,"__proto__":{"polluted":true},"a":"${big}","7":2,"z":3,"a":"${big}x"}`;
    const parsed = (await sliced(text)) as Record<string, unknown>;
    expect(parsed).to.deep.equal(JSON.parse(text));
    expect(Object.keys(parsed)).to.deep.equal(Object.keys(JSON.parse(text) as object));
    expect(Object.getPrototypeOf(parsed)).to.equal(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  it('decodes a string larger than a slice with its escapes and multi-byte characters wherever the pieces are cut', async () => {
    for (const unit of ['é', '\ud83d\ude00', '\\', '"', '\n', '\u0001', 'a\\u00e9', '\u20ac', '\u007f']) {
      const value = unit.repeat(Math.ceil(300_000 / unit.length)) + 'end';
      const text = JSON.stringify({ plaintext: value });
      expect(await sliced(text)).to.deep.equal({ plaintext: value }, JSON.stringify(unit));
    }
  });

  it('cuts a string\'s bytes only where both halves decode as the whole does', () => {
    const raw = Buffer.from('ab\\u00e9\\\\\\"€😀', 'utf8');
    for (let cut = 1; cut < raw.length; cut++) {
      const at = safeCut(raw, 0, cut);
      const whole = JSON.parse(`"${raw.toString('utf8')}"`) as string;
      const halves = (JSON.parse(`"${raw.toString('utf8', 0, at)}"`) as string) + (JSON.parse(`"${raw.toString('utf8', at)}"`) as string);
      expect(halves, `cut at ${cut} moved to ${at}`).to.equal(whole);
    }
  });

  it('refuses malformed JSON with a 400, as JSON.parse would', async () => {
    const filler = `"${'f'.repeat(100_000)}"`;
    for (const text of [
      `[${filler},]`,
      `[${filler} 1]`,
      `{"a":${filler},}`,
      `{"a" ${filler}}`,
      `{${filler}}`,
      `[${filler}`,
      `[${filler}]]`,
      `[${filler}] x`,
      `["${'g'.repeat(100_000)}\u0001"]`,
      // A raw control character (JSON takes them only escaped) in a middle piece of a string the
      // body's own member holds, which is kept as its bytes, and of one inside an array.
      `{"plaintext":"${'g'.repeat(300_000)}\u0001${'g'.repeat(300_000)}"}`,
      `{"plaintext":"${'g'.repeat(300_000)}\t${'g'.repeat(300_000)}"}`,
      `["${'g'.repeat(300_000)}\u001f${'g'.repeat(300_000)}"]`,
      `["${'g'.repeat(100_000)}`,
      `[${filler},{"a":1,}]`,
      `[${filler},tru]`,
      `[${filler},01]`,
      `{"a":[${filler}}`,
    ]) {
      expect(() => JSON.parse(text), text.slice(-20)).to.throw(SyntaxError);
      let failure: unknown;
      await sliced(text).catch((err: unknown) => (failure = err));
      expect(failure, text.slice(-20)).to.be.instanceOf(BadRequestError);
      expect((failure as Error).message).to.match(/^failed to parse JSON input: /);
    }
  });

  it('holds a large body to the listener\'s limits with the same errors as a small one, before parsing it', async () => {
    const items = (n: number) => JSON.stringify({ batch_input: Array.from({ length: n }, (_, i) => ({ plaintext: `${'p'.repeat(64)}${i}` })) });
    const limits = { ...DEFAULT_JSON_LIMITS, arrayElements: 20_000, strings: -1 };
    const over = Buffer.from(items(20_001));
    expect(over.length).to.be.above(SLICED_BODY_BYTES);
    let failure: unknown;
    await (parseBody(over, 'application/json', limits) as Promise<unknown>).catch((err: unknown) => (failure = err));
    expect(failure).to.be.instanceOf(BadRequestError);
    expect((failure as Error).message).to.equal('failed to parse JSON input: an array of more than 20000 elements, over the listener\'s max_json_array_element_count');
    const within = Buffer.from(items(20_000));
    expect(await parseBody(within, 'application/json', limits)).to.deep.equal(JSON.parse(within.toString()));
    const deep = Buffer.from(`{"a":${'['.repeat(501)}${']'.repeat(501)},"b":"${'x'.repeat(SLICED_BODY_BYTES)}"}`);
    await (parseBody(deep, 'application/json') as Promise<unknown>).then(
      () => expect.fail('a body nested too deep was parsed'),
      (err: Error) => expect(err.message).to.match(/nested deeper than 500 levels, over the listener's max_json_depth/),
    );
  });

  it('keeps the text of a large body with a number JSON.parse changes, trims it as a small body is trimmed, and reads a large form as a form', async () => {
    const text = `{"data":{"n":12345678901234567891,"s":"${'s'.repeat(SLICED_BODY_BYTES)}"}}`;
    const body = (await parseBody(Buffer.from(`\ufeff \n${text}\u00a0 `), 'application/json')) as Record<string, unknown>;
    expect(stringifyExact(exactBody(body))).to.equal(text);
    const plain = `{"data":{"n":1,"s":"${'s'.repeat(SLICED_BODY_BYTES)}"}}`;
    expect(exactBody((await parseBody(Buffer.from(plain), 'application/json')) as Record<string, unknown>)).to.equal(undefined);
    expect(parseBody(Buffer.from(' '.repeat(SLICED_BODY_BYTES + 1)), 'application/json')).to.equal(undefined);
    const form = `a=${'x'.repeat(SLICED_BODY_BYTES)}&b=2`;
    expect(parseBody(Buffer.from(form), 'application/x-www-form-urlencoded')).to.deep.equal({ a: 'x'.repeat(SLICED_BODY_BYTES), b: '2' });
  });

  it('gives the event loop turns while it checks and parses a 100,000-item batch or a 30 MB string', async () => {
    const batch = Buffer.from(JSON.stringify({ batch_input: Array.from({ length: 100_000 }, () => ({ plaintext: randomBytes(48).toString('base64') })) }));
    const limits = { ...DEFAULT_JSON_LIMITS, arrayElements: 200_000, strings: -1, stringLength: 32 * 1024 * 1024 };
    const parsedBatch = await turnsDuring(() => parseBody(batch, 'application/json', limits) as Promise<unknown>);
    expect(parsedBatch.result).to.deep.equal(JSON.parse(batch.toString()));
    const big = Buffer.from(JSON.stringify({ plaintext: randomBytes(22_500_000).toString('base64') }));
    const parsedBig = await turnsDuring(() => parseBody(big, 'application/json', limits) as Promise<unknown>);
    // The member comes as an AsciiText: its JSON is the same.
    expect(JSON.stringify(parsedBig.result) === big.toString()).to.equal(true);
    // Each took several slices of work; in one go (JSON.parse) neither would give the loop a single turn.
    expect(parsedBatch.turns).to.be.at.least(3);
    expect(parsedBig.turns).to.be.at.least(3);
  });

  it('gives a 30 MB member of plain ASCII as its bytes (an AsciiText), making no string of it, on the heap or off it', async () => {
    const text = randomBytes(22_500_000).toString('base64');
    const raw = Buffer.from(JSON.stringify({ plaintext: text }));
    const before = largeObjectBytes();
    const external = process.memoryUsage().external;
    const { value } = await parseJsonInTurns(raw, 0, raw.length, OPEN);
    const grown = largeObjectBytes() - before;
    const grownOutside = process.memoryUsage().external - external;
    const plaintext = (value as { plaintext: unknown }).plaintext;
    expect(plaintext).to.be.instanceOf(AsciiText);
    // A join of its pieces puts all 30 MB on the heap; a Latin-1 copy of its bytes, outside it.
    expect(grown).to.be.below(text.length / 4);
    expect(grownOutside).to.be.below(text.length / 4);
    expect((plaintext as AsciiText).toString() === text).to.equal(true);
    expect((plaintext as AsciiText).chars(1000, 1010)).to.equal(text.slice(1000, 1010));
  });

  it('gives an AsciiText only for a plain member of the body over a megabyte: a string inside an array or an object, or with an escape, stays a string', async () => {
    const long = 'A'.repeat(ASCII_TEXT_CHARS + 1);
    for (const body of [{ a: [long] }, { a: { b: long } }, { a: `${long}\n` }, { a: `${long}é` }, [long]]) {
      const text = JSON.stringify(body);
      const parsed = await sliced(text);
      expect(parsed).to.deep.equal(JSON.parse(text));
    }
    const short = 'A'.repeat(ASCII_TEXT_CHARS);
    expect(await sliced(JSON.stringify({ a: short }))).to.deep.equal({ a: short });
    expect(((await sliced(JSON.stringify({ a: long, b: 1 }))) as { a: unknown }).a).to.be.instanceOf(AsciiText);
  });

  it('decodes a large string that turns out not to be plain after many plain pieces (an escape, a non-ASCII character) exactly', async () => {
    const plain = 'A'.repeat(300 * 1024);
    for (const tail of ['\\n', '\\u00e9', 'é', '\ud83d\ude00', '\\\\\\"']) {
      const text = `["${plain}${tail}${plain}"]`;
      expect(await sliced(text)).to.deep.equal(JSON.parse(text));
    }
  });
});
