import { expect } from 'chai';
import { checkJsonLimits, DEFAULT_JSON_LIMITS, type JsonLimits } from '../../../core/http/json-limits.js';
import { BadRequestError } from '../../../core/errors.js';

const limits = (overrides: Partial<JsonLimits>): JsonLimits => ({ ...DEFAULT_JSON_LIMITS, ...overrides });

/** The 400's message for a body over a limit, or undefined when it passes. */
function refusal(text: string, overrides: Partial<JsonLimits> = {}): string | undefined {
  try {
    checkJsonLimits(Buffer.from(text), limits(overrides));
    return undefined;
  } catch (err) {
    expect(err).to.be.instanceOf(BadRequestError);
    return (err as Error).message;
  }
}

describe('JSON limits of a request body', () => {
  it('has Vault\'s defaults for its four limits and OpenBao\'s for the strings of a request', () => {
    expect(DEFAULT_JSON_LIMITS).to.deep.equal({ depth: 500, stringLength: 1024 * 1024, objectEntries: 10_000, arrayElements: 10_000, strings: 100_000 });
  });

  describe('max_json_depth', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    it('accepts nesting up to the limit and refuses one level more, naming the setting', () => {
      expect(refusal(nested(3), { depth: 3 })).to.equal(undefined);
      expect(refusal(nested(4), { depth: 3 })).to.equal("failed to parse JSON input: nested deeper than 3 levels, over the listener's max_json_depth");
      expect(refusal('{"a":{"b":[{"c":1}]}}', { depth: 4 })).to.equal(undefined);
      expect(refusal('{"a":{"b":[{"c":1}]}}', { depth: 3 })).to.match(/max_json_depth/);
    });

    it('does not count brackets inside strings, after escaped quotes and escaped backslashes', () => {
      expect(refusal(`{"a":"${'[{'.repeat(10)}"}`, { depth: 1 })).to.equal(undefined);
      // "x\"[[" is one string; "y\\" ends at its second quote, so the brackets after it count.
      expect(refusal('{"a":"x\\"[[","b":"y\\\\","c":[[1]]}', { depth: 2 })).to.match(/max_json_depth/);
      expect(refusal('{"a":"x\\"[[","b":"y\\\\","c":[[1]]}', { depth: 3 })).to.equal(undefined);
      expect(refusal('["\\\\\\"[[["]', { depth: 1 })).to.equal(undefined);
    });
  });

  describe('max_json_string_value_length', () => {
    it('refuses a value or a name longer than the limit, in bytes as written', () => {
      expect(refusal('{"a":"12345"}', { stringLength: 5 })).to.equal(undefined);
      expect(refusal('{"a":"123456"}', { stringLength: 5 })).to.equal("failed to parse JSON input: a string longer than 5 bytes, over the listener's max_json_string_value_length");
      expect(refusal('{"abcdef":1}', { stringLength: 5 })).to.match(/max_json_string_value_length/);
      // Two characters of two bytes each: four bytes.
      expect(refusal('["éé"]', { stringLength: 3 })).to.match(/max_json_string_value_length/);
      expect(refusal('["éé"]', { stringLength: 4 })).to.equal(undefined);
    });
  });

  describe('max_json_object_entry_count', () => {
    const object = (members: number) => `{${Array.from({ length: members }, (_, i) => `"k${i}":[${i},"v",{"x":1}]`).join(',')}}`;
    it('counts the members of each object, not their values, and refuses one more than the limit', () => {
      expect(refusal(object(3), { objectEntries: 3 })).to.equal(undefined);
      expect(refusal(object(4), { objectEntries: 3 })).to.equal("failed to parse JSON input: an object of more than 3 members, over the listener's max_json_object_entry_count");
      // Three objects of two members each: none over two.
      expect(refusal('{"a":{"b":1,"c":"d"},"e":{"f":null,"g":true}}', { objectEntries: 2 })).to.equal(undefined);
    });
  });

  describe('max_json_array_element_count', () => {
    it('counts every kind of element of each array and refuses one more than the limit', () => {
      expect(refusal('[1,"two",{"a":[1,2]},[3],true,null,-1.5e3]', { arrayElements: 7 })).to.equal(undefined);
      expect(refusal('[1,"two",{"a":[1,2]},[3],true,null,-1.5e3,false]', { arrayElements: 7 })).to.equal("failed to parse JSON input: an array of more than 7 elements, over the listener's max_json_array_element_count");
      expect(refusal('{"batch_input":[{"plaintext":"YQ=="},{"plaintext":"Yg=="},{"plaintext":"Yw=="}]}', { arrayElements: 2 })).to.match(/max_json_array_element_count/);
    });
  });

  describe('max_request_json_strings', () => {
    it('counts names and values across the whole body, and a negative limit turns it off', () => {
      const batch = (items: number) => JSON.stringify({ batch_input: Array.from({ length: items }, () => ({ plaintext: 'YQ==' })) });
      // One name, then two strings an item.
      expect(refusal(batch(2), { strings: 5 })).to.equal(undefined);
      expect(refusal(batch(3), { strings: 5 })).to.equal("failed to parse JSON input: more than 5 strings (names and values), over the listener's max_request_json_strings");
      expect(refusal(batch(3), { strings: -1 })).to.equal(undefined);
    });
  });

  it('leaves malformed JSON to the parser, which names what is wrong', () => {
    for (const text of ['{"a":', ']]]', '{"a" 1}', '"unterminated', '[1,,2]']) expect(refusal(text)).to.equal(undefined);
  });
});
