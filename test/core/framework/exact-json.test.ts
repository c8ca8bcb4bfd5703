/**
 * Numbers kept exactly as written: found outside strings only, parsed and written back with every
 * digit, and everything without such a number left to JSON.parse and JSON.stringify.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { ExactNumber, parseExact, scanJson, stringifyExact } from '../../../core/framework/exact-json.js';

const hasInexactNumber = (text: string): boolean => scanJson(text).inexact;

describe('exact JSON numbers', () => {
  describe('scanJson: a number JSON.parse would change', () => {
    it('finds integers past 2^53 (in any spelling), decimals with more digits than a double keeps, and numbers out of range', () => {
      for (const text of ['12345678901234567891', '[-9007199254740993]', '{"a":{"b":0.12345678901234567890123}}', '1e400', '[1E-400]', '9007199254740992.0', '1e21']) {
        expect(hasInexactNumber(text), text).to.equal(true);
      }
    });

    it('passes numbers a double keeps, and digits inside strings or keys', () => {
      for (const text of ['9007199254740991', '-9007199254740991', '0.1', '1.5e-7', '2.5E-3', '123456789012345', '{"12345678901234567891":"12345678901234567891"}', '["a\\"12345678901234567891", "b\\\\", 1]', 'true', '{}']) {
        expect(hasInexactNumber(text), text).to.equal(false);
      }
    });

    it('agrees with a round trip through JSON.parse and JSON.stringify for any integer', () => {
      fc.assert(
        fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (n) => {
          const text = `{"n":${n}}`;
          expect(hasInexactNumber(text), text).to.equal(JSON.stringify(JSON.parse(text)) !== text);
        }),
        { numRuns: 2000 },
      );
    });
  });

  describe('parseExact and stringifyExact', () => {
    it('keep every digit of a number JSON.parse would change, and the rest as JSON.parse makes it', () => {
      const text = '{"big":12345678901234567891,"neg":-98765432109876543210,"dec":0.12345678901234567890123,"huge":1e400,"n":42,"s":"12345678901234567891","list":[1,2.5,12345678901234567891]}';
      const parsed = parseExact(text) as Record<string, unknown>;
      expect(parsed.big).to.be.instanceOf(ExactNumber);
      expect((parsed.big as ExactNumber).text).to.equal('12345678901234567891');
      expect(parsed.n).to.equal(42);
      expect(parsed.s).to.equal('12345678901234567891');
      expect(stringifyExact(parsed)).to.equal(text);
    });

    it('are JSON.parse and JSON.stringify for text without such a number', () => {
      const value = { a: [1, 'two', { three: 3.5 }], b: null, c: true, d: 'x"y' };
      expect(stringifyExact(value)).to.equal(JSON.stringify(value));
      expect(parseExact(JSON.stringify(value))).to.deep.equal(value);
    });

    it('keep the last of two members with one name, and a member named __proto__ as an own member, as JSON.parse does', () => {
      const parsed = parseExact('{"a":1,"a":12345678901234567891,"__proto__":{"polluted":true}}') as Record<string, unknown>;
      expect((parsed.a as ExactNumber).text).to.equal('12345678901234567891');
      expect(Object.getPrototypeOf(parsed)).to.equal(Object.prototype);
      expect(Object.hasOwn(parsed, '__proto__')).to.equal(true);
    });

    it('give anything else that serializes an ExactNumber the double JSON.parse would have made', () => {
      expect(JSON.stringify({ n: new ExactNumber('12345678901234567891') })).to.equal('{"n":12345678901234567000}');
    });
  });
});
