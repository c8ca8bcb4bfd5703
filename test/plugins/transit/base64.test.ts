/** Strict base64: what Go's decoder accepts and refuses, which Node's decoder would let through. */
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeBase64 } from '../../../plugins/transit/crypto/base64.js';

describe('strict base64', () => {
  it('round-trips any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(decodeBase64(Buffer.from(bytes).toString('base64'), 'x').equals(Buffer.from(bytes))).to.equal(true);
      }),
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
