import { expect } from 'chai';
import { MAX_JSON_DEPTH, parseBody } from '../../../core/http/body.js';
import { exactBody, scanJson, stringifyExact } from '../../../core/framework/exact-json.js';

const nestedDeeperThan = (text: string, limit: number): boolean => scanJson(text, limit).tooDeep;

describe('request bodies', () => {
  describe('nesting depth', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

    it('accepts nesting up to the limit and refuses one level more', () => {
      expect(nestedDeeperThan(nested(3), 3)).to.equal(false);
      expect(nestedDeeperThan(nested(4), 3)).to.equal(true);
      expect(nestedDeeperThan('{"a":{"b":[{"c":1}]}}', 4)).to.equal(false);
      expect(nestedDeeperThan('{"a":{"b":[{"c":1}]}}', 3)).to.equal(true);
    });

    it('does not count brackets inside strings', () => {
      expect(nestedDeeperThan(`{"a":"${'[{'.repeat(10)}"}`, 1)).to.equal(false);
    });

    it('sees the end of a string after escaped quotes and escaped backslashes', () => {
      // "x\"[[" is one string; "y\\" ends at its second quote, so the brackets after it count.
      expect(nestedDeeperThan('{"a":"x\\"[[","b":"y\\\\","c":[[1]]}', 2)).to.equal(true);
      expect(nestedDeeperThan('{"a":"x\\"[[","b":"y\\\\","c":[[1]]}', 3)).to.equal(false);
      expect(nestedDeeperThan('["\\\\\\"[[["]', 1)).to.equal(false);
    });

    it('refuses a body nested deeper than MAX_JSON_DEPTH with 400', () => {
      expect(() => parseBody(Buffer.from(`{"a":${nested(MAX_JSON_DEPTH + 1)}}`), 'application/json')).to.throw(/nested deeper than 500 levels/);
      expect(parseBody(Buffer.from(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`), 'application/json')).to.have.property('a');
    });
  });

  describe('numbers JSON.parse would change', () => {
    it('keeps the text of a body with such a number for a backend that keeps every digit, and of no other body', () => {
      const text = '{"data":{"n":12345678901234567891,"s":"12345678901234567891"}}';
      const body = parseBody(Buffer.from(text), 'application/json') as Record<string, unknown>;
      expect(JSON.stringify(body)).to.equal('{"data":{"n":12345678901234567000,"s":"12345678901234567891"}}');
      expect(stringifyExact(exactBody(body))).to.equal(text);
      const plain = '{"data":{"n":9007199254740991,"s":"12345678901234567891"}}';
      expect(exactBody(parseBody(Buffer.from(plain), 'application/json') as Record<string, unknown>)).to.equal(undefined);
    });
  });
});
