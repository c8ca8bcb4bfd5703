/** `decrypt/:name`: decrypt a ciphertext or a batch (https://developer.hashicorp.com/vault/api-docs/secret/transit#decrypt-data; docs/transit.md, "Batches"). */
import { BadRequestError, definePath, type FieldValues, type LogicalResponse } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { encodeBase64 } from '../crypto/base64.js';
import { encodeBase64InTurns, releaseBuffer } from '../../../sdk/crypto.js';
import { ItemError, logItemFailures, onlyResult } from '../crypto/item-error.js';
import { cipherCost, fromItemToAnswer, textLength } from '../crypto/costs.js';
import { batchItems, checkAssociatedData, paddingScheme, parseCiphertextItem, parseLargeCiphertextItem, requireConsistentContext, type BatchItem, type LargeParsedCiphertextItem, type ParsedCiphertextItem } from '../crypto/items.js';
import type { ResultFields } from '../crypto/json-writer.js';
import { answerInSlices, BatchAnswer } from '../crypto/batch-answer.js';
import { RSA_PADDING_SCHEMES, decryptBatch, decryptLarge, decryptOne, isLargeCiphertext, type DecryptItem, type LargeDecryptItem } from '../crypto/cipher.js';
import type { KeyPolicy } from '../keys/key-policy.js';

const DECRYPT_FIELDS = {
  name: { type: 'name', description: 'Name of the key.', required: true },
  ciphertext: { type: 'large-string', description: 'The vault:v<N>: ciphertext to decrypt, as encrypt returned it; required unless batch_input is given.' },
  associated_data: { type: 'string', description: 'Base64 associated data given when encrypting (AEAD key types only, ml-kem and mlkem768-x25519 included).' },
  context: { type: 'string', description: 'Base64 context the key is derived from; required for derived keys. For ml-kem and mlkem768-x25519 keys it is the HPKE info, needed again to decrypt; ignored by others.' },
  nonce: {
    type: 'string',
    description: 'Base64 12-byte nonce given when encrypting; needed only for convergent keys made by Vault 0.6.1 (convergent version 1), ignored otherwise.',
  },
  reference: { type: 'string', description: 'With batch_input: echoed in the reference field of each result whose item gives no reference of its own.' },
  batch_input: {
    type: 'object-list',
    description:
      'Items to decrypt in one request, each with ciphertext and optionally context, nonce, associated_data, padding_scheme, ' +
      'reference. The top-level ciphertext, context, nonce and associated_data are then ignored. Results keep the input order.',
  },
  partial_failure_response_code: {
    type: 'int',
    description: 'HTTP status when some batch items fail and at least one succeeds (default 400); when all fail it is 400 (500 for a fault of the service).',
  },
  padding_scheme: { type: 'string', description: 'RSA keys only: oaep (the default; SHA-256, MGF1-SHA-256) or pkcs1v15.', allowedValues: RSA_PADDING_SCHEMES },
} as const;

type DecryptInput = FieldValues<typeof DECRYPT_FIELDS>;

export function decryptPath(ctx: TransitContext) {
  return definePath({
    pattern: 'decrypt/:name',
    fields: DECRYPT_FIELDS,
    operations: { update: { summary: 'Decrypt with a key.', handler: (_req, input) => decrypt(ctx, input) } },
    synopsis: DECRYPT_SYNOPSIS,
    description: DECRYPT_DESCRIPTION,
  });
}

/** One item or a batch; not itself async, so a single item's answer is decryptOnly's promise, not one wrapped around it. */
function decrypt(ctx: TransitContext, input: DecryptInput): Promise<LogicalResponse> {
  const batch = input.batch_input;
  return batch === undefined ? decryptOnly(ctx, input) : decryptMany(ctx, input, batch);
}

async function decryptMany(ctx: TransitContext, input: DecryptInput, batch: NonNullable<DecryptInput['batch_input']>): Promise<LogicalResponse> {
  const raw = batchItems(batch);
  requireConsistentContext(raw);
  const policy = await ctx.keys.get(input.name);
  if (!policy) throw new BadRequestError('encryption key not found');

  // Every result carries plaintext, "" for a failed item, as clients expect (hashicorp/vault#6140).
  const answer = new BatchAnswer<string>(raw, input.reference, PLAINTEXT_FIELDS, { plaintext: '' });
  const opening = answerInSlices<ParsedCiphertextItem, DecryptItem, string>(
    raw,
    fromItemToAnswer(cipherCost(policy, true, (item: BatchItem) => textLength(item.ciphertext))),
    (slice) => slice.map(parseCiphertextItem),
    (item, i) => admit(policy, item, i, `'[${i}].padding_scheme'`),
    // Plaintexts are encoded in their slice: base64 of 100,000 of them at the end would block as long as a slice.
    (requests) => decryptBatch(ctx.wasm, policy, requests).map((plaintext) => (plaintext instanceof ItemError ? plaintext : encodeBase64(plaintext))),
    answer,
  );
  logItemFailures(ctx.logger, policy.name, opening instanceof Promise ? await opening : opening);
  return answer.response([], input.partial_failure_response_code);
}

/**
 * A request without batch_input: the steps of a batch of one, in the same order and with the same
 * answers, but without its slices, admission lists and grouping (decryptOne), as encrypt's single
 * item is sealed (bench/README.md, "One item alone").
 */
async function decryptOnly(ctx: TransitContext, input: DecryptInput): Promise<LogicalResponse> {
  if (input.ciphertext === undefined) throw new BadRequestError('missing ciphertext to decrypt');
  const parsed = parseLargeCiphertextItem({
    ciphertext: input.ciphertext,
    context: input.context,
    nonce: input.nonce,
    associated_data: input.associated_data,
    padding_scheme: input.padding_scheme,
  });
  // A cached key (the usual case) costs no await.
  const policy = ctx.keys.cached(input.name) ?? (await ctx.keys.get(input.name));
  if (!policy) throw new BadRequestError('encryption key not found');

  let result = openOnly(ctx, policy, parsed);
  if (result instanceof Promise) result = await result;
  if (result instanceof ItemError) logItemFailures(ctx.logger, policy.name, [result]);
  const plaintext = onlyResult(result);
  // A plaintext of megabytes is answered as an AsciiText, encoded in pieces; it is wiped and given back once encoded.
  if (plaintext.length > LARGE_PLAINTEXT_BYTES) {
    try {
      return { data: { plaintext: await encodeBase64InTurns(plaintext) } };
    } finally {
      plaintext.fill(0);
      releaseBuffer(plaintext);
    }
  }
  return { data: PLAINTEXT_FIELDS.plain(encodeBase64(plaintext)) };
}

/** Plaintext bytes above which decryptOnly encodes in pieces: the base64 is then over a megabyte. */
const LARGE_PLAINTEXT_BYTES = 768 * 1024;

/** The item of a single-item request, admitted and opened: a ciphertext of megabytes in pieces (decryptLarge). */
function openOnly(ctx: TransitContext, policy: KeyPolicy, parsed: LargeParsedCiphertextItem | ItemError): Buffer | ItemError | Promise<Buffer | ItemError> {
  if (parsed instanceof ItemError) return parsed;
  let request: LargeDecryptItem;
  try {
    request = admit(policy, parsed, 0, 'padding_scheme');
  } catch (err) {
    return ItemError.of(err);
  }
  // Not large, so a string: isLargeCiphertext holds for every AsciiText.
  return isLargeCiphertext(request) ? decryptLarge(ctx.wasm, policy, request) : decryptOne(ctx.wasm, policy, request as DecryptItem);
}

/** A parsed item checked against the key (padding scheme, associated data); `paddingField` names its padding_scheme in errors. */
function admit<T extends LargeParsedCiphertextItem>(policy: KeyPolicy, item: T, index: number, paddingField: string): T {
  const padding = paddingScheme(item.paddingText, policy.info, paddingField);
  checkAssociatedData(item.aad, policy.info, index);
  return padding ? { ...item, padding } : item;
}

/** A base64 plaintext: nothing to escape. */
const PLAINTEXT_FIELDS: ResultFields<string> = {
  plain: (plaintext) => ({ plaintext }),
  head: '"plaintext":"',
  value: (plaintext) => plaintext,
  tail: () => '"',
};

const DECRYPT_SYNOPSIS = 'Decrypt a ciphertext or a batch of ciphertexts with a named key.';
const DECRYPT_DESCRIPTION = `
Decrypts vault:v<N>: ciphertexts made by encrypt (or rewrap, or datakey) with the named key and
returns the base64 plaintext. The version must be at least min_decryption_version. Derived keys
need the context, and AEAD ciphertexts the associated data, given when encrypting. With
batch_input, each item gets a result in input order; failed items carry an error (and an empty
plaintext), and the status is 400, or partial_failure_response_code when at least one succeeded.`;
