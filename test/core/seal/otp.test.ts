/** The root generation OTP encoding, as `vault operator generate-root -decode` reads it. */
import { expect } from 'chai';
import { decodeToken, encodeToken, generateOtp, OTP_LENGTH } from '../../../core/seal/otp.js';
import { generateServiceTokenId } from '../../../core/auth/token-store.js';
import { BadRequestError } from '../../../core/errors.js';

describe('root token OTP encoding', () => {
  it("encodes base64 of token XOR OTP without padding (hand-computed: 'ab' ⊕ 'AB' = 0x20 0x20 → 'ICA')", () => {
    expect(encodeToken('ab', 'AB')).to.equal('ICA');
  });

  it('decodes what it encodes, for a token of the shape root generation mints', () => {
    const token = generateServiceTokenId();
    const otp = generateOtp();
    const encoded = encodeToken(token, otp);
    expect(encoded).to.not.contain('=');
    expect(decodeToken(encoded, otp)).to.equal(token);
  });

  it('decodes the padded form a client may add', () => {
    expect(decodeToken('ICA=', 'AB')).to.equal('ab');
  });

  it('decode refuses an OTP of another length than the encoded token', () => {
    expect(() => decodeToken('ICA', 'ABC')).to.throw(BadRequestError, /same length/);
  });

  it('decode refuses an encoded token that is not base64', () => {
    expect(() => decodeToken('not base64!', 'AB')).to.throw(BadRequestError, /base64/);
  });

  it('generates base62 OTPs as long as a root token, each different', () => {
    expect(OTP_LENGTH).to.equal(generateServiceTokenId().length);
    const a = generateOtp();
    expect(a).to.match(new RegExp(`^[A-Za-z0-9]{${OTP_LENGTH}}$`));
    expect(generateOtp()).to.not.equal(a);
  });
});
