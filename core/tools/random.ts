/**
 * The random tool, as transit serves it at `random(/:source)(/:bytes)` and the sys backend at
 * `sys/tools/random(/:source)(/:bytes)`: random bytes from the platform's CSPRNG. The framework's
 * optional segment may only come last, so the three URL shapes are three paths; a single segment
 * is a source if it names one and a byte count otherwise, as in Vault. A byte count in the URL wins
 * over the body's `bytes`.
 */
import { randomBytes } from 'node:crypto';
import { BadRequestError } from '../errors.js';
import { definePath, parseGoInt, type AnyPathDefinition, type FieldSpecs, type FieldValues } from '../framework/index.js';

type RandomInput = FieldValues<typeof RANDOM_FIELDS>;

/** Vault's limit (helper/random APIMaxBytes): 128 KiB. */
const MAX_RANDOM_BYTES = 128 * 1024;

const SOURCES = ['platform', 'seal', 'all'];

const RANDOM_FIELDS = {
  bytes: { type: 'int', description: 'Number of bytes, 1 to 131072 (default 32); a count in the URL wins.', default: 32 },
  format: { type: 'string', description: 'Encoding of random_bytes: base64 (default) or hex.', default: 'base64' },
  source: {
    type: 'string',
    description:
      'Entropy source, in the URL or the body: platform (default, the CSPRNG of the host) or all (every source available: here the ' +
      'platform). seal (entropy augmentation) is not available.',
    default: 'platform',
  },
} as const satisfies FieldSpecs;

const URL_BYTES_FIELD = {
  urlbytes: { type: 'string', description: 'Number of bytes, in the URL after the source.', required: true },
} as const satisfies FieldSpecs;

/** The random paths under `base` (`random` or `tools/random`). */
export function randomToolPaths(base: string): AnyPathDefinition[] {
  const common = { synopsis: HELP_SYNOPSIS, description: HELP_DESCRIPTION, fields: RANDOM_FIELDS } as const;
  return [
    definePath({
      ...common,
      pattern: base,
      operations: { update: { summary: 'Generate random bytes.', handler: async (_req, input) => randomHandler(input, input.source, input.bytes) } },
    }),
    definePath({
      ...common,
      pattern: `${base}/:source`,
      operations: {
        update: {
          summary: 'Generate random bytes from a source, or a number of bytes given in the URL.',
          handler: async (_req, input) =>
            SOURCES.includes(input.source) ? randomHandler(input, input.source, input.bytes) : randomHandler(input, 'platform', urlByteCount(input.source)),
        },
      },
    }),
    definePath({
      ...common,
      pattern: `${base}/:source/:urlbytes`,
      fields: { ...RANDOM_FIELDS, ...URL_BYTES_FIELD },
      operations: {
        update: { summary: 'Generate a number of random bytes from a source.', handler: async (_req, input) => randomHandler(input, input.source, urlByteCount(input.urlbytes)) },
      },
    }),
  ];
}

function randomHandler(input: RandomInput, source: string, bytes: number) {
  if (bytes < 1) throw new BadRequestError('"bytes" cannot be less than 1');
  if (bytes > MAX_RANDOM_BYTES) throw new BadRequestError(`"bytes" should be less than ${MAX_RANDOM_BYTES}`);
  const format = input.format;
  if (format !== 'hex' && format !== 'base64') throw new BadRequestError(`unsupported encoding format "${format}"; must be "hex" or "base64"`);
  if (source === 'seal') {
    throw new BadRequestError('entropy source "seal" is not available: this server has no entropy augmentation; use "platform" or "all"');
  }
  if (source !== 'platform' && source !== 'all') throw new BadRequestError(`unsupported entropy source "${source}"; must be "platform" or "seal", or "all"`);
  return { data: { random_bytes: randomBytes(bytes).toString(format) } };
}

/** A byte count from the URL, read as Go's strconv.Atoi reads it (a count past any int is "too many"). */
function urlByteCount(text: string): number {
  if (/^[+-]?\d+$/.test(text)) return parseGoInt(text) ?? (text.startsWith('-') ? 0 : MAX_RANDOM_BYTES + 1);
  throw new BadRequestError(`error parsing url-set byte count: strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
}

const HELP_SYNOPSIS = 'Generate random bytes.';
const HELP_DESCRIPTION =
  'Returns random_bytes: bytes (default 32, at most 131072) high-entropy random bytes from the platform CSPRNG, as base64 or hex. ' +
  'The count and the source may be given in the URL: random/64, random/all, random/all/64.';
