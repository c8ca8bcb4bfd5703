/**
 * The one-time password of root token generation, in modern Vault's encoding: the OTP is a base62
 * string as long as a root token, and the encoded token is base64 (standard alphabet, no padding) of
 * the token's bytes XOR the OTP's bytes. `vault operator generate-root -decode` reverses it.
 */
import { randomInt } from 'node:crypto';
import { BadRequestError } from '../errors.js';

/**
 * Characters in a root token (`hvs.` and 24 base62 characters, see generateServiceTokenId): the
 * OTP must be exactly as long. Clients read it as `otp_length`.
 */
export const OTP_LENGTH = 28;

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh OTP: `length` uniformly random base62 characters. */
export function generateOtp(length = OTP_LENGTH): string {
  let otp = '';
  for (let i = 0; i < length; i++) otp += BASE62[randomInt(BASE62.length)];
  return otp;
}

/**
 * Fewest distinct byte values a client's OTP must hold. The OTP is XORed with the root token, so
 * one of equal bytes (28 NULs sends the token in the clear) or of a handful of values hides next
 * to nothing. A uniformly random base62 OTP of OTP_LENGTH characters has fewer than 10 distinct
 * characters with probability about 4.9e-14 (the count of such strings, summed over k < 10 as
 * C(62,k)·k!·S(28,k) with S the Stirling numbers of the second kind, over 62^28), so no OTP that
 * `vault operator generate-root -generate-otp` or this server makes is refused.
 */
export const MIN_OTP_DISTINCT_BYTES = 10;

/**
 * Checks an OTP a client chose: exactly `length` bytes, and not plainly non-random.
 * @throws BadRequestError naming `otp`.
 */
export function requireUsableOtp(otp: string, length = OTP_LENGTH): void {
  const bytes = Buffer.from(otp, 'utf8');
  if (bytes.length !== length) throw new BadRequestError(`'otp' must be ${length} characters long (otp_length), got ${bytes.length}`);
  const distinct = new Set(bytes).size;
  if (distinct < MIN_OTP_DISTINCT_BYTES) {
    throw new BadRequestError(
      `'otp' is not random: it holds ${distinct} distinct characters, fewer than ${MIN_OTP_DISTINCT_BYTES}; start without an otp to have one generated, or use "operator generate-root -generate-otp"`,
    );
  }
}

/** The root token XOR the OTP, base64 without padding. */
export function encodeToken(token: string, otp: string): string {
  return xor(Buffer.from(token, 'utf8'), Buffer.from(otp, 'utf8')).toString('base64').replace(/=+$/, '');
}

/**
 * Reverses `encodeToken`.
 * @throws BadRequestError when the encoded token is not base64 or its length is not the OTP's.
 */
export function decodeToken(encoded: string, otp: string): string {
  const text = encoded.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new BadRequestError("'encoded_token' must be base64");
  const bytes = Buffer.from(text, 'base64');
  const pad = Buffer.from(otp, 'utf8');
  if (bytes.length !== pad.length) {
    throw new BadRequestError(`'encoded_token' holds ${bytes.length} bytes but the 'otp' has ${pad.length}: they must be the same length`);
  }
  return xor(bytes, pad).toString('utf8');
}

function xor(a: Buffer, b: Buffer): Buffer {
  if (a.length !== b.length) throw new BadRequestError(`the token (${a.length} bytes) and the OTP (${b.length} bytes) differ in length`);
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}
