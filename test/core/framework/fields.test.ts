import { expect } from 'chai';
import fc from 'fast-check';
import {
  CoercionError,
  MAX_DURATION_SECONDS,
  afterDuration,
  coerceField,
  goDuration,
  isUnset,
  parseBool,
  parseDurationExact,
  parseDurationSeconds,
  type FieldSpec,
  type FieldType,
} from '../../../core/framework/fields.js';

const field = (type: FieldType): FieldSpec => ({ type, description: `a ${type} field` });
const coerce = (type: FieldType, raw: unknown): unknown => coerceField(field(type), raw);

/** Go's strconv.ParseBool vocabulary. */
const TRUE_WORDS = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const FALSE_WORDS = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** Nanoseconds per unit, as Go's time.ParseDuration has them (plus Vault's `d`). */
const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n, us: 1_000n, 'µs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n, d: 86_400_000_000_000n,
};
const NS_PER_SECOND = 1_000_000_000n;

describe('framework field types', () => {
  describe('isUnset', () => {
    it('treats undefined, null and the empty string as not given', () => {
      expect([undefined, null, ''].map(isUnset)).to.deep.equal([true, true, true]);
    });

    it('treats false, 0, "0", a blank string and empty collections as given', () => {
      expect([false, 0, '0', ' ', [], {}].map(isUnset)).to.deep.equal([false, false, false, false, false, false]);
    });
  });

  describe('bool', () => {
    it('accepts every word of Go ParseBool, as hvac ("True") and node-vault ("1") send them', () => {
      fc.assert(fc.property(fc.constantFrom(...TRUE_WORDS), (word) => {
        expect(parseBool(word)).to.equal(true);
      }));
      fc.assert(fc.property(fc.constantFrom(...FALSE_WORDS), (word) => {
        expect(parseBool(word)).to.equal(false);
      }));
    });

    it('accepts JSON booleans and the numbers 0 and 1', () => {
      expect([true, false, 1, 0].map((v) => coerce('bool', v))).to.deep.equal([true, false, true, false]);
    });

    it('refuses any other string', () => {
      const vocabulary = new Set([...TRUE_WORDS, ...FALSE_WORDS]);
      fc.assert(fc.property(fc.string().filter((s) => !vocabulary.has(s)), (word) => {
        expect(() => parseBool(word)).to.throw(CoercionError, 'expected a boolean');
      }));
    });

    it('refuses words Go does not know, padding, other numbers, lists and objects', () => {
      for (const raw of ['yes', 'no', 'on', 'tRUE', ' true', 'true ', 2, -1, 0.5, [true], { value: true }]) {
        expect(() => coerce('bool', raw), JSON.stringify(raw)).to.throw(CoercionError);
      }
    });
  });

  describe('int', () => {
    it('accepts integers and integer strings, signs and surrounding spaces included', () => {
      expect([12, '12', '-3', '+7', ' 42 ', '0'].map((v) => coerce('int', v))).to.deep.equal([12, 12, -3, 7, 42, 0]);
    });

    it('reads a JSON boolean as 1 or 0, as Vault weak decoding does', () => {
      expect([true, false].map((v) => coerce('int', v))).to.deep.equal([1, 0]);
    });

    it('refuses fractions, words, hex and numbers beyond 2^53', () => {
      for (const raw of [1.5, '1.5', '12abc', 'twelve', '0x10', '1e3', '', ' ', 9007199254740993, '9007199254740993', Infinity, NaN]) {
        expect(() => coerce('int', raw), String(raw)).to.throw(CoercionError, 'expected an integer');
      }
    });

    it('refuses lists, objects and null', () => {
      for (const raw of [[1], { n: 1 }, null]) {
        expect(() => coerce('int', raw)).to.throw(CoercionError);
      }
    });

    it('round-trips every safe integer written as a string', () => {
      fc.assert(fc.property(fc.maxSafeInteger(), (n) => {
        expect(coerce('int', String(n))).to.equal(n);
      }));
    });
  });

  describe('duration', () => {
    it('reads a number or a numeric string as seconds', () => {
      expect([90, '90', 0, '0'].map(parseDurationSeconds)).to.deep.equal([90, 90, 0, 0]);
    });

    it('reads Go-style unit strings in whole seconds', () => {
      const cases: [string, number][] = [
        ['90s', 90], ['15m', 900], ['1h', 3600], ['1h30m', 5400], ['2d', 172800], ['1.5h', 5400],
        ['.5m', 30], ['1m30s', 90], ['768h', 2764800], ['1500ms', 1], ['250ms', 0], ['2000000us', 2], ['3000000000ns', 3],
      ];
      for (const [text, seconds] of cases) expect(parseDurationSeconds(text), text).to.equal(seconds);
    });

    it('drops the fraction of a second from a fractional number', () => {
      expect(parseDurationSeconds(1.9)).to.equal(1);
    });

    it('keeps fractions of a second when asked for the exact value', () => {
      expect(parseDurationExact('250ms')).to.equal(0.25);
      expect(parseDurationExact('1s500ms')).to.equal(1.5);
      expect(parseDurationExact(2.5)).to.equal(2.5);
    });

    it('reads decimal fractions of a unit exactly ("4.1m" is 246 seconds, as in Go)', () => {
      expect(parseDurationSeconds('4.1m')).to.equal(246);
      expect(parseDurationSeconds('1.1h')).to.equal(3960);
      expect(parseDurationSeconds('0.3m')).to.equal(18);
    });

    it('turns any sum of integer amounts of units into the right number of seconds', () => {
      // Six parts of at most 10,000 days stay under the longest duration taken (106751d23h47m16s).
      const part = fc.record({ amount: fc.integer({ min: 0, max: 10_000 }), unit: fc.constantFrom(...Object.keys(UNIT_NANOS)) });
      fc.assert(fc.property(fc.array(part, { minLength: 1, maxLength: 6 }), (parts) => {
        const text = parts.map((p) => `${p.amount}${p.unit}`).join('');
        const nanos = parts.reduce((sum, p) => sum + BigInt(p.amount) * UNIT_NANOS[p.unit]!, 0n);
        expect(parseDurationSeconds(text), text).to.equal(Number(nanos / NS_PER_SECOND));
      }), { numRuns: 500 });
    });

    it('turns decimal amounts of a unit into seconds the way Go does (truncated to the nanosecond)', () => {
      const part = fc.record({
        whole: fc.integer({ min: 0, max: 1000 }),
        fraction: fc.stringMatching(/^\d{1,9}$/),
        unit: fc.constantFrom(...Object.keys(UNIT_NANOS)),
      });
      fc.assert(fc.property(fc.array(part, { minLength: 1, maxLength: 4 }), (parts) => {
        const text = parts.map((p) => `${p.whole}.${p.fraction}${p.unit}`).join('');
        const nanos = parts.reduce((sum, p) => {
          const unit = UNIT_NANOS[p.unit]!;
          return sum + BigInt(p.whole) * unit + (BigInt(p.fraction) * unit) / 10n ** BigInt(p.fraction.length);
        }, 0n);
        expect(parseDurationSeconds(text), text).to.equal(Number(nanos / NS_PER_SECOND));
      }), { numRuns: 500 });
    });

    it('reads a decimal amount that is a whole number of seconds as exactly that number', () => {
      // 0.1m = 6 s, 0.01h = 36 s, 0.01d = 864 s: these decimals always land on whole seconds.
      const exact = fc.constantFrom({ unit: 'm', places: 1, step: 6 }, { unit: 'h', places: 2, step: 36 }, { unit: 'd', places: 2, step: 864 });
      fc.assert(fc.property(exact, fc.integer({ min: 0, max: 1_000_000 }), ({ unit, places, step }, n) => {
        const digits = String(n).padStart(places + 1, '0');
        const text = `${digits.slice(0, -places)}.${digits.slice(-places)}${unit}`;
        expect(parseDurationSeconds(text), text).to.equal(n * step);
      }), { numRuns: 1000 });
    });

    it('refuses negative durations', () => {
      for (const raw of [-1, '-5s', '-1']) expect(() => parseDurationSeconds(raw), String(raw)).to.throw(CoercionError);
    });

    it('refuses unknown units, missing units between parts, spaces inside and the empty string', () => {
      for (const raw of ['5x', '1h30', '1h 30m', 'h', '1.5', '', ' ', 'forever', '1w']) {
        expect(() => parseDurationSeconds(raw), JSON.stringify(raw)).to.throw(CoercionError);
      }
    });

    it('refuses booleans, lists, objects, null, infinities and NaN', () => {
      for (const raw of [true, ['1h'], { h: 1 }, null, Infinity, NaN]) {
        expect(() => coerce('duration', raw), JSON.stringify(raw)).to.throw(CoercionError);
      }
    });

    it('refuses a duration too long to count in seconds', () => {
      expect(() => parseDurationSeconds('99999999999999999999d')).to.throw(CoercionError, 'out of range');
    });

    it('takes durations up to Go\'s longest time.Duration, 2562047h47m16s, in every spelling, and no longer', () => {
      for (const longest of ['2562047h47m16s', '9223372036', 9223372036, '106751d23h47m16s']) {
        expect(parseDurationSeconds(longest), String(longest)).to.equal(MAX_DURATION_SECONDS);
      }
      for (const tooLong of ['2562047h47m17s', '9223372037', 9223372037, '8760000000h', '87600000h', 1e15]) {
        expect(() => parseDurationSeconds(tooLong), String(tooLong)).to.throw(CoercionError, 'at most 9223372036 seconds');
        expect(() => parseDurationExact(tooLong), String(tooLong)).to.throw(CoercionError, 'out of range');
      }
    });

    it('keeps now plus the longest duration a valid date, and caps a longer one stored before the bound', () => {
      const now = new Date('2026-01-01T00:00:00Z');
      expect(afterDuration(now, MAX_DURATION_SECONDS).toISOString()).to.equal('2318-04-12T23:47:16.000Z');
      expect(afterDuration(now, 8_760_000_000 * 3600).toISOString()).to.equal('2318-04-12T23:47:16.000Z');
      expect(afterDuration(now, 90).toISOString()).to.equal('2026-01-01T00:01:30.000Z');
    });

    it('prints durations as Go does', () => {
      expect([0, 45, 300, 90, 3600, 1080000, 3725].map(goDuration)).to.deep.equal(['0s', '45s', '5m0s', '1m30s', '1h0m0s', '300h0m0s', '1h2m5s']);
    });
  });

  describe('string types', () => {
    it('string keeps text as given and writes numbers and booleans as text', () => {
      expect(['Hello World', 12, true].map((v) => coerce('string', v))).to.deep.equal(['Hello World', '12', 'true']);
    });

    it('string refuses lists, objects and null', () => {
      for (const raw of [['a'], { a: 1 }, null]) expect(() => coerce('string', raw)).to.throw(CoercionError, 'expected a string');
    });

    it('lowercase-string lower-cases its value', () => {
      expect(coerce('lowercase-string', 'MyKey')).to.equal('mykey');
    });

    it('name accepts word characters with "-" and "." inside', () => {
      for (const ok of ['a', 'my-key', 'key_2', 'v1.2', 'A9', '_private']) expect(coerce('name', ok)).to.equal(ok);
    });

    it('name refuses slashes, spaces, non-ASCII letters, and a leading or trailing "-" or "."', () => {
      for (const bad of ['a/b', 'a b', '-a', 'a-', '.a', 'a.', '..', 'ключ']) {
        expect(() => coerce('name', bad), bad).to.throw(CoercionError, 'must contain only');
      }
    });
  });

  describe('list types', () => {
    it('comma-string-list splits on commas, trims, and drops empty items', () => {
      expect(coerce('comma-string-list', 'a, b,,c ,')).to.deep.equal(['a', 'b', 'c']);
    });

    it('comma-string-list splits each item of a JSON list too', () => {
      expect(coerce('comma-string-list', ['a,b', 'c', null, 3])).to.deep.equal(['a', 'b', 'c', '3']);
    });

    it('string-list keeps commas inside items and wraps a single value in a list', () => {
      expect(coerce('string-list', ['a,b', 'c'])).to.deep.equal(['a,b', 'c']);
      expect(coerce('string-list', 'a,b')).to.deep.equal(['a,b']);
    });

    it('list types refuse items that are objects or nested lists', () => {
      expect(() => coerce('string-list', [{}])).to.throw(CoercionError);
      expect(() => coerce('comma-string-list', [['a']])).to.throw(CoercionError);
    });

    it('comma-int-list reads integers from a comma string and from a list', () => {
      expect(coerce('comma-int-list', '1, 2,3')).to.deep.equal([1, 2, 3]);
      expect(coerce('comma-int-list', [4, '5,6'])).to.deep.equal([4, 5, 6]);
    });

    it('comma-int-list refuses an item that is not an integer', () => {
      expect(() => coerce('comma-int-list', '1,x')).to.throw(CoercionError, 'expected an integer, got "x"');
    });
  });

  describe('map types', () => {
    it('map accepts an object or a JSON-encoded object', () => {
      expect(coerce('map', { a: 1 })).to.deep.equal({ a: 1 });
      expect(coerce('map', '{"a":1}')).to.deep.equal({ a: 1 });
    });

    it('map refuses text that is not JSON, JSON that is not an object, lists and scalars', () => {
      for (const raw of ['nope', '[1]', '"text"', [1], 5, true]) {
        expect(() => coerce('map', raw), JSON.stringify(raw)).to.throw(CoercionError);
      }
    });

    it('header-map turns every value into a list of strings', () => {
      expect(coerce('header-map', { 'X-One': 'v', 'X-Two': ['1', 2] })).to.deep.equal({ 'X-One': ['v'], 'X-Two': ['1', '2'] });
    });

    it('header-map refuses a header value that is an object', () => {
      expect(() => coerce('header-map', { 'X-One': { nested: true } })).to.throw(CoercionError, 'expected a string');
    });
  });

  it('error messages never echo a long value in full', () => {
    const long = 'x'.repeat(500);
    expect(() => coerce('int', long)).to.throw(CoercionError).with.property('message').that.does.not.include(long);
  });
});
