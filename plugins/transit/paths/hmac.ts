/**
 * `hmac/:name(/:algorithm)`: HMACs of input data with a key's per-version HMAC key
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#generate-hmac; docs/transit.md,
 * "Batches"). Also the HMAC half of `verify` and the batch conventions that hmac, sign and verify
 * share: items are maps of strings in which an absent field differs from an empty one, every item's
 * result carries its `reference`, and these batches always answer 200.
 */
import { BadRequestError, definePath, type FieldSpecs, type FieldValues, type LogicalRequest } from '../../../sdk/index.js';
import { AsciiText } from '../../../sdk/crypto.js';
import type { TransitContext } from '../context.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import { decodeBase64, decodeBase64InTurns, isLongText } from '../crypto/base64.js';
import { answerEntries, inSlices } from '../crypto/slices.js';
import { macCost } from '../crypto/costs.js';
import {
  computeHmacs,
  formatHmac,
  hmacEquals,
  hmacInTurns,
  hmacKeyOf,
  isHmacAlgorithm,
  parseHmac,
  versionForHmac,
  versionForHmacVerify,
} from '../crypto/hmac.js';

/** One `batch_input` item: its string fields; a field the client left out is absent. */
export type BatchItem = Readonly<Partial<Record<string, string>>>;

/** An item's outcome: a value, or the message of what was wrong with it. */
export type ItemOutcome<T> = { readonly ok: T } | { readonly error: string };

/** One item of an HMAC verification: the input and the HMAC to check, as sent. */
export interface HmacVerifyItem {
  readonly input?: string | undefined;
  readonly hmac?: string | undefined;
}

type HmacInput = FieldValues<typeof HMAC_FIELDS>;

const HMAC_FIELDS = {
  name: { type: 'name', description: 'Name of the key whose HMAC key is used.', required: true },
  algorithm: {
    type: 'string',
    description: 'Hash algorithm, in the URL or the body: sha2-224, sha2-256, sha2-384, sha2-512, sha3-224, sha3-256, sha3-384, sha3-512 (or sha1).',
    default: 'sha2-256',
  },
  input: { type: 'large-string', description: 'Base64 input data; one of input or batch_input is required.' },
  key_version: {
    type: 'int',
    description: 'Version of the key to use: 0 (the default) is the latest; otherwise at least min_encryption_version.',
    default: 0,
  },
  reference: {
    type: 'string',
    description: 'Echoed in batch_results: the reference of every batch item that carries none of its own. Ignored without batch_input.',
  },
  batch_input: {
    type: 'object-list',
    description: 'Items {input, reference} processed in one request, results in input order; the top-level input is then ignored.',
  },
} as const satisfies FieldSpecs;

export function hmacPath(ctx: TransitContext) {
  return definePath({
    pattern: 'hmac/:name/:algorithm?',
    fields: HMAC_FIELDS,
    operations: {
      update: { summary: 'HMAC input data with a named key.', handler: (req, input) => hmacHandler(ctx, req, input) },
    },
    synopsis: HELP_SYNOPSIS,
    description: HELP_DESCRIPTION,
  });
}

async function hmacHandler(ctx: TransitContext, req: LogicalRequest, input: HmacInput) {
  const policy = await ctx.keys.get(input.name);
  if (!policy) throw new BadRequestError('encryption key not found');
  refuseCmacKey(policy);
  const version = versionForHmac(policy, input.key_version);
  const algorithm = input.algorithm;
  if (!isHmacAlgorithm(algorithm)) throw new BadRequestError(`unsupported algorithm "${algorithm}"`);

  const batch = input.batch_input !== undefined;
  const given = batch ? undefined : givenText(req, 'input', input.input);
  if (!batch && given === undefined) throw new BadRequestError('missing input for HMAC');

  const key = hmacKeyOf(policy, version);
  if (given instanceof AsciiText || isLongText(given)) {
    return { data: { hmac: formatHmac(version.version, await hmacInTurns(algorithm, key, given instanceof AsciiText ? given : await decodeBase64InTurns(given, 'input'))) } };
  }
  const items = input.batch_input ? readBatchItems(input.batch_input, ['input', 'reference']) : [{ input: given }];
  // Awaited only when to come (several slices), so a single item's answer costs no await.
  const computing = inSlices(items, MAC_COST, (slice) => {
    const decoded = runItems(slice, (item) => {
      if (item.input === undefined) throw new BadRequestError('missing input for HMAC');
      return decodeBase64(item.input, 'input');
    });
    const macs = batchOver(decoded, (inputs) => computeHmacs(ctx.wasm, algorithm, key, inputs));
    return macs.map((outcome): ItemOutcome<string> => ('ok' in outcome ? { ok: formatHmac(version.version, outcome.ok) } : outcome));
  });
  const results = computing instanceof Promise ? await computing : computing;

  if (!batch) return { data: { hmac: single(results[0]!) } };
  return {
    data: {
      batch_results: await answerEntries(results, (outcome, i) => {
        const reference = referenceOf(items[i]!, input.reference);
        return 'ok' in outcome ? { hmac: outcome.ok, reference } : { error: outcome.error, reference };
      }),
    },
  };
}

const MAC_COST = macCost(inputLength);

/**
 * Verification of HMACs (`verify` with `hmac`): every item names its version; the MACs of all valid
 * items are computed in one batch, each under its version's key, and compared in constant time.
 * Results follow Vault: `valid` appears only when true.
 */
export async function verifyHmacs(
  ctx: TransitContext,
  name: string,
  algorithm: string,
  items: readonly HmacVerifyItem[],
): Promise<ItemOutcome<boolean>[]> {
  const policy = await ctx.keys.get(name);
  if (!policy) throw new BadRequestError('encryption key not found');
  refuseCmacKey(policy);
  if (!isHmacAlgorithm(algorithm)) throw new BadRequestError(`invalid hash algorithm "${algorithm}"`);
  return inSlices(items, MAC_COST, (slice) => {
    const prepared = runItems(slice, (item) => {
      if (item.input === undefined) throw new BadRequestError('missing input');
      const data = decodeBase64(item.input, 'input');
      if (item.hmac === undefined) throw new BadRequestError('missing hmac');
      const { version, mac } = parseHmac(item.hmac);
      return { data, mac, key: hmacKeyOf(policy, versionForHmacVerify(policy, version)) };
    });
    return batchOver(prepared, (valid) => {
      const computed = computeHmacs(
        ctx.wasm,
        algorithm,
        valid.map((v) => v.key),
        valid.map((v) => v.data),
      );
      return valid.map((v, i) => hmacEquals(computed[i]!, v.mac));
    });
  });
}

/** CMAC keys do not HMAC (Vault's HMACSupported is false for them): their material is for CMAC only. */
function refuseCmacKey(policy: KeyPolicy): void {
  if (policy.info.family === 'cmac') throw new BadRequestError(`HMAC is not supported with key type ${policy.info.name}; use cmac/${policy.name}`);
}

/** Vault's hmac verify batch item: `valid` omitted when false (Go's omitempty). */
export function hmacVerifyResult(outcome: ItemOutcome<boolean>, reference: string): Record<string, unknown> {
  if ('error' in outcome) return { error: outcome.error, reference };
  return { ...(outcome.ok ? { valid: true } : {}), reference };
}

// ---------------------------------------------------------------------------------------------
// Batch conventions shared by hmac, sign and verify

/**
 * The items of `batch_input`, their named fields read as strings (numbers and booleans as text,
 * null as absent, anything else a 400 for the whole request); 400 for an empty list.
 */
export function readBatchItems(raw: readonly Record<string, unknown>[], fields: readonly string[]): BatchItem[] {
  if (raw.length === 0) throw new BadRequestError('missing batch input to process');
  return raw.map((item, i) => {
    const out: Record<string, string> = {};
    for (const field of fields) {
      const value = item[field];
      if (value === undefined || value === null) continue;
      if (typeof value === 'string') out[field] = value;
      else if (typeof value === 'number' || typeof value === 'boolean') out[field] = String(value);
      else throw new BadRequestError(`failed to parse batch input: batch_input[${i}].${field} must be a string`);
    }
    return out;
  });
}

/**
 * A top-level text field that may be given as "" (an empty input is data): the framework drops
 * "" as unset, so an explicit empty string is read from the raw request.
 */
export function givenText<T extends string | AsciiText>(req: LogicalRequest, field: string, value: T | undefined): T | '' | undefined {
  return value ?? (req.data[field] === '' ? '' : undefined);
}

/** An item's reference, else the request's; "" when neither gives one (docs/transit.md, "Batches"). */
export function referenceOf(item: BatchItem, requestReference: string | undefined): string {
  return item.reference || requestReference || '';
}

/** The length of an item's input text, by which its cost is estimated. */
export function inputLength(item: { readonly input?: string | undefined }): number {
  return item.input?.length ?? 0;
}

/** Runs `work` on each item; a client error (400) becomes that item's error, anything else propagates. */
export function runItems<I, T>(items: readonly I[], work: (item: I, index: number) => T): ItemOutcome<T>[] {
  return items.map((item, i) => {
    try {
      return { ok: work(item, i) };
    } catch (err) {
      if (err instanceof BadRequestError) return { error: err.message };
      throw err;
    }
  });
}

/** Applies a batch function to the successful values only, in one call, keeping item order and errors. */
export function batchOver<T, U>(outcomes: readonly ItemOutcome<T>[], run: (values: T[]) => U[]): ItemOutcome<U>[] {
  const values = outcomes.flatMap((o) => ('ok' in o ? [o.ok] : []));
  const results = values.length > 0 ? run(values) : [];
  let next = 0;
  return outcomes.map((o) => ('ok' in o ? { ok: results[next++]! } : o));
}

/** The value of a single (non-batch) request's only item, or its error as a 400. */
export function single<T>(outcome: ItemOutcome<T>): T {
  if ('error' in outcome) throw new BadRequestError(outcome.error);
  return outcome.ok;
}

const HELP_SYNOPSIS = 'Generate an HMAC for input data using the named key.';
const HELP_DESCRIPTION =
  'Returns vault:v<N>:<base64 HMAC> computed with the HMAC key of version N of the key (the key itself for hmac keys). ' +
  'key_version picks an older version (not below min_encryption_version). With batch_input every item gets its own ' +
  'result (hmac or error, and its reference); the request still answers 200.';
