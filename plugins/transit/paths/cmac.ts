/**
 * `cmac/:name(/:url_mac_length)`: AES-CMACs of input data with an aes128-cmac or aes256-cmac key
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#generate-cmac; docs/transit.md,
 * "CMAC keys"), and the CMAC half of `verify`. Batches follow hmac's conventions (hmac.ts): items
 * are maps of strings, each result carries its `reference`, and the request answers 200.
 *
 * The MAC length comes from url_mac_length, else the item's mac_length, else the request's
 * mac_length, else the full 16 bytes; url_mac_length given beside a mac_length wins with a
 * warning, as Vault answers it.
 */
import { BadRequestError, definePath, type FieldSpecs, type FieldValues, type LogicalRequest } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { cmacKeyOf, cmacOfText, formatCmac, macLength, notCmacKey, parseCmac } from '../crypto/cmac.js';
import { cmacCost } from '../crypto/costs.js';
import { hmacEquals } from '../crypto/hmac.js';
import { answerEntries, inSlices } from '../crypto/slices.js';
import { givenText, inputLength, readBatchItems, referenceOf, single, type ItemOutcome } from './hmac.js';

/** One item of a CMAC verification: the input, the CMAC to check and its own mac_length, as sent. */
export interface CmacVerifyItem {
  readonly input?: string | undefined;
  readonly cmac?: string | undefined;
  readonly mac_length?: string | undefined;
}

/** The MAC lengths a request names: url_mac_length, and the body's mac_length. */
export interface MacLengths {
  readonly url?: number | string | undefined;
  readonly body?: number | undefined;
}

type CmacInput = FieldValues<typeof CMAC_FIELDS>;

const CMAC_FIELDS = {
  name: { type: 'name', description: 'Name of the aes128-cmac or aes256-cmac key.', required: true },
  url_mac_length: {
    type: 'int',
    description: 'MAC length in bytes, in the URL: 1 to 16 (the AES block size); overrides mac_length, with a warning when both are given.',
  },
  mac_length: {
    type: 'int',
    description: 'MAC length in bytes: 1 to 16 (the AES block size); 0 or unset is the full 16 bytes. Batch items may carry their own.',
  },
  input: { type: 'string', description: 'Base64 input data; one of input or batch_input is required.' },
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
    description: 'Items {input, mac_length, reference} processed in one request, results in input order; the top-level input is then ignored.',
  },
} as const satisfies FieldSpecs;

export function cmacPath(ctx: TransitContext) {
  return definePath({
    pattern: 'cmac/:name/:url_mac_length?',
    fields: CMAC_FIELDS,
    operations: {
      update: { summary: 'CMAC input data with a named CMAC key.', handler: (req, input) => cmacHandler(ctx, req, input) },
    },
    synopsis: HELP_SYNOPSIS,
    description: HELP_DESCRIPTION,
  });
}

async function cmacHandler(ctx: TransitContext, req: LogicalRequest, input: CmacInput) {
  const policy = await ctx.keys.get(input.name);
  if (!policy) throw new BadRequestError('CMAC key not found');
  if (policy.info.family !== 'cmac') throw notCmacKey(policy);
  const version = policy.versionForWriting(input.key_version, 'CMAC');
  const key = cmacKeyOf(policy, version);

  const batch = input.batch_input !== undefined;
  const items = input.batch_input ? readBatchItems(input.batch_input, ['input', 'mac_length', 'reference']) : [{ input: givenText(req, 'input', input.input) }];
  if (!batch && items[0]!.input === undefined) throw new BadRequestError('missing input for CMAC');
  const lengths = { url: input.url_mac_length, body: input.mac_length };
  const warnings = overrideWarnings(lengths, items);
  const lengthOf = itemMacLength(lengths);

  // Awaited only when to come (several slices, or a long input), so a single item's answer costs no await.
  const computing = inSlices(items, CMAC_COST, (slice) =>
    runItemsInTurns(slice, (item) => {
      const length = lengthOf(item);
      if (item.input === undefined) throw new BadRequestError('missing input for CMAC');
      const mac = cmacOfText(key, item.input, length);
      return mac instanceof Promise ? mac.then((m) => formatCmac(version.version, m)) : formatCmac(version.version, mac);
    }),
  );
  const results = computing instanceof Promise ? await computing : computing;

  if (!batch) return { data: { cmac: single(results[0]!) }, ...warnings };
  return {
    data: {
      batch_results: await answerEntries(results, (outcome, i) => {
        const reference = referenceOf(items[i]!, input.reference);
        return 'ok' in outcome ? { cmac: outcome.ok, reference } : { error: outcome.error, reference };
      }),
    },
    ...warnings,
  };
}

const CMAC_COST = cmacCost(inputLength);

/**
 * Verification of CMACs (`verify` with `cmac`): each item's MAC is recomputed under the version
 * it names, at the length the verifier asks for, and compared in constant time. Results follow
 * hmac's: `valid` appears only when true.
 */
export async function verifyCmacs(ctx: TransitContext, name: string, lengths: MacLengths, items: readonly CmacVerifyItem[]) {
  const policy = await ctx.keys.get(name);
  if (!policy) throw new BadRequestError('CMAC key not found');
  if (policy.info.family !== 'cmac') throw notCmacKey(policy);
  const lengthOf = itemMacLength(lengths);
  const outcomes: ItemOutcome<boolean>[] = await inSlices(items, CMAC_COST, (slice) =>
    runItemsInTurns(slice, (item) => {
      const length = lengthOf(item);
      if (item.input === undefined) throw new BadRequestError('missing input');
      if (item.cmac === undefined) throw new BadRequestError('missing cmac');
      const { version, mac } = parseCmac(item.cmac);
      const expected = cmacOfText(cmacKeyOf(policy, policy.versionForReading(version, 'CMAC')), item.input, length);
      return expected instanceof Promise ? expected.then((e) => hmacEquals(e, mac)) : hmacEquals(expected, mac);
    }),
  );
  return { outcomes, ...overrideWarnings(lengths, items) };
}

/**
 * runItems (hmac.ts) for work that may answer a promise (a long input CMACed between turns of the
 * event loop): synchronous while every item's work is, awaiting from the first promise on.
 */
function runItemsInTurns<I, T>(items: readonly I[], work: (item: I) => T | Promise<T>): ItemOutcome<T>[] | Promise<ItemOutcome<T>[]> {
  const done: ItemOutcome<T>[] = [];
  for (let i = 0; i < items.length; i++) {
    const result = attempt(() => work(items[i]!));
    if ('ok' in result && result.ok instanceof Promise) return finishInTurns(items, work, done, i, result.ok);
    done.push(result as ItemOutcome<T>);
  }
  return done;
}

async function finishInTurns<I, T>(items: readonly I[], work: (item: I) => T | Promise<T>, done: ItemOutcome<T>[], from: number, pending: Promise<T>) {
  done.push(await settled(pending));
  for (let i = from + 1; i < items.length; i++) {
    const result = attempt(() => work(items[i]!));
    done.push('ok' in result ? await settled(Promise.resolve(result.ok)) : result);
  }
  return done;
}

/** An item's work as an outcome: a client error (400) becomes the item's error, anything else propagates. */
function attempt<T>(work: () => T): ItemOutcome<T> {
  try {
    return { ok: work() };
  } catch (err) {
    if (err instanceof BadRequestError) return { error: err.message };
    throw err;
  }
}

async function settled<T>(pending: Promise<T>): Promise<ItemOutcome<T>> {
  try {
    return { ok: await pending };
  } catch (err) {
    if (err instanceof BadRequestError) return { error: err.message };
    throw err;
  }
}

/** The MAC length of an item: url_mac_length, else its own mac_length, else the request's. */
function itemMacLength(lengths: MacLengths): (item: { readonly mac_length?: string | undefined }) => number {
  if (lengths.url !== undefined) {
    const url = macLength(lengths.url, 'url_mac_length');
    return () => url;
  }
  const body = macLength(lengths.body, 'mac_length');
  return (item) => (item.mac_length === undefined ? body : macLength(item.mac_length, 'mac_length'));
}

/** Vault's warning when url_mac_length overrides a mac_length the request also gives. */
function overrideWarnings(lengths: MacLengths, items: readonly { readonly mac_length?: string | undefined }[]): { warnings?: string[] } {
  if (lengths.url === undefined) return {};
  if (lengths.body === undefined && items.every((item) => item.mac_length === undefined)) return {};
  return { warnings: ['url_mac_length overrides the mac_length given in the request body'] };
}

const HELP_SYNOPSIS = 'Generate a CMAC for input data using the named key.';
const HELP_DESCRIPTION =
  'Returns vault:v<N>:<base64 AES-CMAC> (RFC 4493) computed with version N of an aes128-cmac or aes256-cmac key, cut ' +
  'to mac_length bytes when given (url_mac_length in the URL wins). key_version picks an older version (not below ' +
  'min_encryption_version). verify checks a CMAC with cmac (and the same mac_length). With batch_input every item ' +
  'gets its own result (cmac or error, and its reference); the request still answers 200.';
