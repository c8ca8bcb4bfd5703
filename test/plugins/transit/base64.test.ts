/** Strict base64: what Go's decoder accepts and refuses, which Node's decoder would let through. */
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeBase64, decodeBase64Each, encodeBase64, encodeBase64Batch } from '../../../plugins/transit/crypto/base64.js';

describe('strict base64', () => {
  it('round-trips any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(decodeBase64(Buffer.from(bytes).toString('base64'), 'x').equals(Buffer.from(bytes))).to.equal(true);
      }),
    );
  });

  it('encodes Buffers and plain Uint8Array views (with an offset into a larger buffer) alike', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat(8), (bytes, offset) => {
        const backing = new Uint8Array(offset + bytes.length + 3);
        backing.set(bytes, offset);
        const view = backing.subarray(offset, offset + bytes.length);
        const expected = Buffer.from(bytes).toString('base64');
        expect(encodeBase64(view)).to.equal(expected);
        expect(encodeBase64(Buffer.from(backing.buffer, offset, bytes.length))).to.equal(expected);
      }),
    );
  });

  it('encodes a batch of head ‖ body items like one encoding per item, for every length modulo 3', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ head: fc.option(fc.uint8Array({ maxLength: 20 }), { nil: undefined }), body: fc.uint8Array({ maxLength: 70 }) })), (items) => {
        const encoded = encodeBase64Batch(
          items.map((item) => item.head),
          items.map((item) => item.body),
        );
        expect(encoded).to.deep.equal(items.map((item) => Buffer.concat([item.head ?? new Uint8Array(0), item.body]).toString('base64')));
      }),
    );
  });

  it('encodes a batch larger than one encoding piece (32 KB) item by item exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 60, maxLength: 140 }), { minLength: 600, maxLength: 900 }), (bodies) => {
        const heads = bodies.map((_, i) => (i % 3 === 0 ? undefined : new Uint8Array(12).fill(i)));
        const encoded = encodeBase64Batch(heads, bodies);
        expect(encoded).to.deep.equal(bodies.map((body, i) => Buffer.concat([heads[i] ?? new Uint8Array(0), body]).toString('base64')));
      }),
      { numRuns: 10 },
    );
  });

  describe('decoding many texts at once (decodeBase64Each)', () => {
    /** What decodeBase64 makes of a text: its bytes in hex, or "refused". */
    const strict = (text: unknown): string => {
      if (typeof text !== 'string') return 'not a string';
      try {
        return decodeBase64(text, 'x').toString('hex');
      } catch {
        return 'refused';
      }
    };

    it('takes every well-formed text, decoded as decodeBase64 does', () => {
      fc.assert(
        fc.property(fc.array(fc.uint8Array({ maxLength: 100 }), { maxLength: 40 }), (items) => {
          const decoded = decodeBase64Each(items.map((bytes) => Buffer.from(bytes).toString('base64')));
          expect(decoded.map((bytes) => bytes?.toString('hex'))).to.deep.equal(items.map((bytes) => Buffer.from(bytes).toString('hex')));
        }),
      );
    });

    it('takes nothing decodeBase64 refuses, and gives what it takes as decodeBase64 would, whatever the characters', () => {
      // Valid texts with one character replaced, inserted or dropped, from every ASCII character, and others.
      const odd = fc.oneof(fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)), fc.constantFrom('é', 'ÿ', '€', '\u{1F600}', '=', '==', '-', '_', '\n', '\r\n', ' '));
      const mangled = fc
        .tuple(fc.uint8Array({ maxLength: 40 }), fc.nat(), odd, fc.constantFrom('replace', 'insert', 'drop', 'keep'))
        .map(([bytes, at, char, how]) => {
          const text = Buffer.from(bytes).toString('base64');
          const i = text.length === 0 ? 0 : at % text.length;
          if (how === 'replace') return text.slice(0, i) + char + text.slice(i + 1);
          if (how === 'insert') return text.slice(0, i) + char + text.slice(i);
          if (how === 'drop') return text.slice(0, i) + text.slice(i + 1);
          return text;
        });
      const value = fc.oneof({ weight: 8, arbitrary: mangled }, { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 3, '', true) });
      fc.assert(
        fc.property(fc.array(value, { maxLength: 30 }), (texts) => {
          const decoded = decodeBase64Each(texts);
          texts.forEach((text, i) => {
            const bytes = decoded[i];
            if (bytes !== undefined) expect(bytes.toString('hex'), JSON.stringify(text)).to.equal(strict(text));
          });
        }),
        { numRuns: 2000 },
      );
    });
  });

  it('ignores line breaks, as Go does', () => {
    expect(decodeBase64('aGVs\nbG8=\r\n', 'x').toString()).to.equal('hello');
  });

  for (const bad of ['aGVsbG8', 'aGVs_G8=', 'aGVs-G8=', 'aGVs bG8=', 'aG=sbG8=', 'ab=c', '====', 'aGVsbG8=a===', '!!!!']) {
    it(`refuses ${JSON.stringify(bad)} naming the field`, () => {
      expect(() => decodeBase64(bad, 'plaintext')).to.throw(/unable to decode plaintext as base64: illegal base64 data at input byte \d+/);
    });
  }
});
