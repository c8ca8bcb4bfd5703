/** Strict base64: what Go's decoder accepts and refuses, which Node's decoder would let through. */
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeBase64, encodeBase64, encodeBase64Batch } from '../../../plugins/transit/crypto/base64.js';

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

  it('ignores line breaks, as Go does', () => {
    expect(decodeBase64('aGVs\nbG8=\r\n', 'x').toString()).to.equal('hello');
  });

  for (const bad of ['aGVsbG8', 'aGVs_G8=', 'aGVs-G8=', 'aGVs bG8=', 'aG=sbG8=', 'ab=c', '====', 'aGVsbG8=a===', '!!!!']) {
    it(`refuses ${JSON.stringify(bad)} naming the field`, () => {
      expect(() => decodeBase64(bad, 'plaintext')).to.throw(/unable to decode plaintext as base64: illegal base64 data at input byte \d+/);
    });
  }
});
