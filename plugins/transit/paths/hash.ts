/** `hash(/:algorithm)`: a digest of input data (spec §4 Hash; reference transit.md §6), through the WASM core. */
import { BadRequestError } from '../../../core/errors.js';
import { definePath, type FieldSpecs, type FieldValues, type LogicalRequest } from '../../../core/framework/index.js';
import type { HashAlgorithm } from '../../../wasm/index.js';
import type { TransitContext } from '../context.js';
import { decodeBase64 } from '../crypto/base64.js';
import { givenText } from './hmac.js';
import { NODE_HASH_NAMES } from '../crypto/hmac.js';

type HashInput = FieldValues<typeof HASH_FIELDS>;

/** Vault's algorithm names → the WASM core's (node's names). sha1 is not offered here (Vault's hash path has none). */
const ALGORITHMS = Object.fromEntries(Object.entries(NODE_HASH_NAMES).filter(([name]) => name !== 'sha1')) as Readonly<Record<string, HashAlgorithm>>;

const HASH_FIELDS = {
  algorithm: {
    type: 'string',
    description: 'Hash algorithm, in the URL or the body: sha2-224, sha2-256 (default), sha2-384, sha2-512, sha3-224, sha3-256, sha3-384, sha3-512.',
    default: 'sha2-256',
  },
  input: { type: 'string', description: 'Base64 input data (required; may be empty).' },
  format: { type: 'string', description: 'Encoding of the sum: hex (default) or base64.', default: 'hex' },
} as const satisfies FieldSpecs;

export function hashPath(ctx: TransitContext) {
  return definePath({
    pattern: 'hash/:algorithm?',
    fields: HASH_FIELDS,
    operations: { update: { summary: 'Hash input data.', handler: async (req, input) => hashHandler(ctx, req, input) } },
    synopsis: 'Generate a hash sum for input data.',
    description: 'Returns sum, the digest of the base64-decoded input with the given algorithm, as hex or base64.',
  });
}

function hashHandler(ctx: TransitContext, req: LogicalRequest, input: HashInput) {
  const text = givenText(req, 'input', input.input);
  if (text === undefined) throw new BadRequestError('input missing');
  const data = decodeBase64(text, 'input');
  const format = input.format;
  if (format !== 'hex' && format !== 'base64') throw new BadRequestError(`unsupported encoding format ${format}; must be "hex" or "base64"`);
  const algorithm = ALGORITHMS[input.algorithm];
  if (!algorithm) throw new BadRequestError(`unsupported algorithm ${input.algorithm}`);
  return { data: { sum: ctx.wasm.hash(algorithm, data).toString(format) } };
}
