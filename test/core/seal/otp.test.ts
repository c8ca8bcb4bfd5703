/** The root generation OTP encoding, as `vault operator generate-root -decode` reads it. */
import { expect } from 'chai';
import { decodeToken, encodeToken, generateOtp, MIN_OTP_DISTINCT_BYTES, OTP_LENGTH, requireUsableOtp } from '../../../core/seal/otp.js';
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

  it('refuses a client OTP of 28 NUL bytes, which would send the token in the clear, naming otp', () => {
    const nul = '\0'.repeat(OTP_LENGTH);
    expect(encodeToken('hvs.abcdefghijklmnopqrstuvwx', nul)).to.equal(Buffer.from('hvs.abcdefghijklmnopqrstuvwx').toString('base64').replace(/=+$/, ''));
    expect(() => requireUsableOtp(nul)).to.throw(BadRequestError, /^'otp' is not random: it holds 1 distinct characters/);
  });

  it(`refuses a client OTP of fewer than ${MIN_OTP_DISTINCT_BYTES} distinct characters, and one of the wrong length`, () => {
    expect(() => requireUsableOtp('abcdefghi'.repeat(4).slice(0, OTP_LENGTH))).to.throw(BadRequestError, /holds 9 distinct characters, fewer than 10/);
    expect(() => requireUsableOtp('abcdefghij'.repeat(3).slice(0, OTP_LENGTH))).to.not.throw();
    expect(() => requireUsableOtp('tooshort')).to.throw(BadRequestError, "'otp' must be 28 characters long (otp_length), got 8");
  });

  it("accepts the OTPs the server generates and hvac's fixed test OTP", () => {
    for (let i = 0; i < 2000; i++) requireUsableOtp(generateOtp());
    requireUsableOtp('BMjzW3wAsEzINXCM05Wbas3u9zSl');
  });
});
