/**
 * The hash tool, as transit serves it at `hash(/:algorithm)` and the sys backend at
 * `sys/tools/hash(/:algorithm)`: a digest of base64 input data, hex or base64. Each backend brings
 * its own digest function (transit's runs in the WASM core; the sys backend's is node:crypto); an
 * input of megabytes is decoded and hashed in pieces between turns of the event loop.
 */
import { createHash } from 'node:crypto';
import { BadRequestError } from '../errors.js';
import { nextTurn } from '../event-loop.js';
import { definePath, type FieldSpecs } from '../framework/index.js';
import { decodeBase64, decodeBase64Chunks, decodeBase64InTurns, isLongText } from './base64.js';
import { AsciiText } from '../large-text.js';

/** Vault's hash names for digests → node:crypto's (sha1 is not offered by Vault's hash paths). */
export const HASH_ALGORITHMS = {
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-224': 'sha3-224',
  'sha3-256': 'sha3-256',
  'sha3-384': 'sha3-384',
  'sha3-512': 'sha3-512',
} as const;

export type HashAlgorithmName = keyof typeof HASH_ALGORITHMS;
export type NodeHashName = (typeof HASH_ALGORITHMS)[HashAlgorithmName];

const HASH_FIELDS = {
  algorithm: {
    type: 'string',
    description: 'Hash algorithm, in the URL or the body: sha2-224, sha2-256 (default), sha2-384, sha2-512, sha3-224, sha3-256, sha3-384, sha3-512.',
    default: 'sha2-256',
  },
  input: { type: 'large-string', description: 'Base64 input data (required; may be empty).' },
  format: { type: 'string', description: 'Encoding of the sum: hex (default) or base64.', default: 'hex' },
} as const satisfies FieldSpecs;

/** The hash path at `base` (`hash` or `tools/hash`), digesting with `digest`. */
export function hashToolPath(base: string, digest: (algorithm: NodeHashName, data: Buffer) => Buffer) {
  return definePath({
    pattern: `${base}/:algorithm?`,
    fields: HASH_FIELDS,
    operations: {
      update: {
        summary: 'Hash input data.',
        handler: async (req, input) => {
          // An empty input is a valid one (the digest of nothing); the framework reads "" as unset.
          const text = input.input ?? (req.data.input === '' ? '' : undefined);
          if (text === undefined) throw new BadRequestError('input missing');
          const algorithm = (HASH_ALGORITHMS as Readonly<Record<string, NodeHashName>>)[input.algorithm];
          // An AsciiText is decoded straight into the hash, a window at a time (and checked first, as a string is, whatever else is wrong).
          const streamed = text instanceof AsciiText ? await digestBase64(algorithm, text) : undefined;
          const long = isLongText(text);
          const data = streamed ? undefined : long ? await decodeBase64InTurns(text, 'input') : decodeBase64(text as string, 'input');
          const format = input.format;
          if (format !== 'hex' && format !== 'base64') throw new BadRequestError(`unsupported encoding format ${format}; must be "hex" or "base64"`);
          if (!algorithm) throw new BadRequestError(`unsupported algorithm ${input.algorithm}`);
          const sum = streamed ?? (long ? await digestInTurns(algorithm, data!) : digest(algorithm, data!));
          return { data: { sum: sum.toString(format) } };
        },
      },
    },
    synopsis: 'Generate a hash sum for input data.',
    description: 'Returns sum, the digest of the base64-decoded input with the given algorithm, as hex or base64.',
  });
}

/**
 * The digest of an AsciiText's base64, decoded into the hash a window at a time
 * (decodeBase64Chunks); without an algorithm the text is only checked, and an empty sum given.
 */
async function digestBase64(algorithm: NodeHashName | undefined, text: AsciiText): Promise<Buffer> {
  const hash = algorithm ? createHash(algorithm) : undefined;
  await decodeBase64Chunks(text, 'input', (bytes) => hash?.update(bytes));
  return hash ? hash.digest() : Buffer.alloc(0);
}

/** Bytes digestInTurns hashes between turns of the event loop: a few milliseconds' work. */
const TURN_BYTES = 1536 * 1024;

/**
 * The digest of megabytes (a 30 MB input), TURN_BYTES at a time with a turn of the event loop
 * after each, with node:crypto's streaming hash: the same sum as `digest`, without holding every
 * other client up while it is computed.
 */
async function digestInTurns(algorithm: NodeHashName, data: Buffer): Promise<Buffer> {
  const hash = createHash(algorithm);
  for (let at = 0; at < data.length; at += TURN_BYTES) {
    if (at > 0) await nextTurn();
    hash.update(data.subarray(at, at + TURN_BYTES));
  }
  return hash.digest();
}
