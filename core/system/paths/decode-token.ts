/**
 * `sys/decode-token`: the root token from root generation's encoded_token and its OTP, computed as
 * `vault operator generate-root -decode` does. Needs no token (as in Vault and OpenBao): it holds no
 * state, and only the holder of the OTP learns anything.
 */
import { BadRequestError } from '../../errors.js';
import { definePath } from '../../framework/index.js';
import { decodeToken } from '../../seal/otp.js';

export function decodeTokenPath() {
  return definePath({
    pattern: 'decode-token',
    fields: {
      encoded_token: { type: 'string', description: 'The encoded_token root generation answered.', sensitive: true },
      otp: { type: 'string', description: 'The one-time password the attempt was started with.', sensitive: true },
    },
    unauthenticated: true,
    operations: {
      update: {
        summary: 'Decode an encoded root token with its OTP.',
        handler: async (_req, input) => {
          if (!input.encoded_token || !input.otp) throw new BadRequestError("provided 'encoded_token' or 'otp' is empty");
          return { data: { token: decodeToken(input.encoded_token, input.otp) } };
        },
      },
    },
    synopsis: 'Decode the encoded root token of a root generation.',
    description: 'Takes encoded_token (base64 of the token XOR the OTP) and otp, and answers the token.',
  });
}
