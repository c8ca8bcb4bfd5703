import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { parseBody, readBody } from '../../../core/http/body.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import { DEFAULT_JSON_LIMITS } from '../../../core/http/json-limits.js';
import { BadRequestError } from '../../../core/errors.js';
import { exactBody, stringifyExact } from '../../../core/framework/exact-json.js';

describe('request bodies', () => {
  describe('the listener\'s JSON limits', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

    it('refuses a body over a limit with 400 before parsing it, and parses one within it', () => {
      expect(() => parseBody(Buffer.from(`{"a":${nested(DEFAULT_JSON_LIMITS.depth)}}`), 'application/json')).to.throw(BadRequestError, /nested deeper than 500 levels, over the listener's max_json_depth/);
      expect(parseBody(Buffer.from(`{"a":${nested(DEFAULT_JSON_LIMITS.depth - 1)}}`), 'application/json')).to.have.property('a');
      const limits = { ...DEFAULT_JSON_LIMITS, arrayElements: 2 };
      expect(() => parseBody(Buffer.from('{"a":[1,2,3]}'), 'application/json', limits)).to.throw(BadRequestError, /max_json_array_element_count/);
      expect(parseBody(Buffer.from('{"a":[1,2]}'), 'application/json', limits)).to.deep.equal({ a: [1, 2] });
    });

    it('does not apply to a form body, which has no nesting', () => {
      expect(parseBody(Buffer.from('a=1&b=2&c=3'), 'application/x-www-form-urlencoded', { ...DEFAULT_JSON_LIMITS, strings: 1 })).to.deep.equal({ a: '1', b: '2', c: '3' });
    });
  });

  describe('reading', () => {
    it('gathers a 30 MB body\'s chunks into one buffer with turns of the event loop between the copies, byte for byte', async () => {
      const chunks = Array.from({ length: 480 }, (_, i) => Buffer.alloc(64 * 1024, i % 251));
      const req = Object.assign(new Readable({ read() {} }), { headers: {} }) as unknown as IncomingMessage & Readable;
      for (const chunk of chunks) req.push(chunk);
      req.push(null);
      const { result, turns } = await turnsDuring(() => readBody(req, { bytes: 32 * 1024 * 1024, setting: 'max_request_size' }));
      expect(result.equals(Buffer.concat(chunks))).to.equal(true);
      // Every chunk was there at once: copied in one go, the body would come without a turn.
      expect(turns).to.be.at.least(5);
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
