/**
 * `rewrap/:name`: decrypt and encrypt again with the latest (or a chosen) key version, without
 * ever returning the plaintext (https://developer.hashicorp.com/vault/api-docs/secret/transit#rewrap-data; docs/transit.md, "Batches").
 */
import { BadRequestError, definePath, type FieldValues, type LogicalResponse } from '../../../sdk/index.js';
import { releaseBuffer } from '../../../sdk/crypto.js';
import type { TransitContext } from '../context.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import { ItemError, logItemFailures, onlyResult } from '../crypto/item-error.js';
import { fromItemToAnswer, rewrapCost, textLength } from '../crypto/costs.js';
import { admitItems, batchItems, checkAssociatedData, itemField, paddingScheme, parseCiphertextItem, parseLargeCiphertextItem, requireConsistentContext, type BatchItem, type LargeParsedCiphertextItem, type ParsedCiphertextItem } from '../crypto/items.js';
import { answerInSlices, BatchAnswer, CIPHERTEXT_FIELDS } from '../crypto/batch-answer.js';
import { RSA_PADDING_SCHEMES, NONCE_NOT_ALLOWED, decryptBatch, decryptLarge, encryptBatch, encryptLarge, isLargeCiphertext, nonceAllowed, type PaddingScheme, type DecryptItem, type Encrypted, type EncryptItem, type LargeDecryptItem, type LargeEncrypted } from '../crypto/cipher.js';

const REWRAP_FIELDS = {
  name: { type: 'name', description: 'Name of the key.', required: true },
  ciphertext: { type: 'large-string', description: 'The vault:v<N>: ciphertext to rewrap; required unless batch_input is given.' },
  context: { type: 'string', description: 'Base64 context the key is derived from; required for derived keys. For ml-kem and mlkem768-x25519 keys it is the HPKE info, needed again to decrypt; ignored by others.' },
  associated_data: {
    type: 'string',
    description: 'Base64 associated data the ciphertext was made with (AEAD key types only); the new ciphertext is bound to it too.',
  },
  key_version: { type: 'int', description: 'Version to encrypt with: 0 is the latest; otherwise at least min_encryption_version.', default: 0 },
  nonce: { type: 'string', description: 'Base64 12-byte nonce, for convergent keys made by Vault 0.6.1 only (convergent version 1); refused for other keys.' },
  reference: { type: 'string', description: 'With batch_input: echoed in the reference field of each result whose item gives no reference of its own.' },
  batch_input: {
    type: 'object-list',
    description:
      'Items to rewrap in one request, each with ciphertext and optionally context, nonce, key_version, associated_data, ' +
      'decrypt_padding_scheme, encrypt_padding_scheme, reference. The top-level ciphertext, context, nonce, key_version and ' +
      'associated_data are then ignored. Results keep the input order.',
  },
  partial_failure_response_code: {
    type: 'int',
    description: 'HTTP status when some batch items fail and at least one succeeds (default 400); when all fail it is 400 (500 for a fault of the service).',
  },
  decrypt_padding_scheme: { type: 'string', description: 'RSA keys only: the padding the ciphertext was made with, oaep (the default) or pkcs1v15.', allowedValues: RSA_PADDING_SCHEMES },
  encrypt_padding_scheme: { type: 'string', description: 'RSA keys only: the padding of the new ciphertext, oaep (the default) or pkcs1v15.', allowedValues: RSA_PADDING_SCHEMES },
} as const;

type RewrapInput = FieldValues<typeof REWRAP_FIELDS>;

/** An item with both padding schemes checked against the key. */
interface RewrapItem extends DecryptItem {
  readonly keyVersion: number;
  readonly encryptPadding?: PaddingScheme | undefined;
}

/** A RewrapItem whose ciphertext of megabytes may be an AsciiText. */
type LargeRewrapItem = Omit<RewrapItem, 'ciphertext'> & LargeDecryptItem;

export function rewrapPath(ctx: TransitContext) {
  return definePath({
    pattern: 'rewrap/:name',
    fields: REWRAP_FIELDS,
    operations: { update: { summary: 'Rewrap ciphertexts with a key version.', handler: (_req, input) => rewrap(ctx, input) } },
    synopsis: REWRAP_SYNOPSIS,
    description: REWRAP_DESCRIPTION,
  });
}

async function rewrap(ctx: TransitContext, input: RewrapInput): Promise<LogicalResponse> {
  const batch = input.batch_input !== undefined;
  if (!batch && input.ciphertext === undefined) throw new BadRequestError('missing ciphertext to decrypt');
  const raw: readonly BatchItem[] = batch
    ? batchItems(input.batch_input!)
    : [
        {
          ciphertext: input.ciphertext,
          context: input.context,
          nonce: input.nonce,
          associated_data: input.associated_data,
          key_version: input.key_version,
          decrypt_padding_scheme: input.decrypt_padding_scheme,
          encrypt_padding_scheme: input.encrypt_padding_scheme,
        },
      ];
  requireConsistentContext(raw);
  return batch ? rewrapMany(ctx, input, raw) : rewrapOne(ctx, input.name, raw[0]!);
}

/** A batch: read, rewrapped and answered slice by slice (answerInSlices). */
async function rewrapMany(ctx: TransitContext, input: RewrapInput, raw: readonly BatchItem[]): Promise<LogicalResponse> {
  const policy = await ctx.keys.get(input.name);
  if (!policy) throw new BadRequestError('encryption key not found');
  const answer = new BatchAnswer<LargeEncrypted>(raw, input.reference, CIPHERTEXT_FIELDS, {});
  const rewrapping = answerInSlices<ParsedCiphertextItem, RewrapItem, LargeEncrypted>(
    raw,
    fromItemToAnswer(rewrapCost(policy, (item: BatchItem) => textLength(item.ciphertext))),
    (slice) => slice.map(parseCiphertextItem),
    (item, i) => admit(policy, item, raw[i]!, i, true),
    (items) => rewrapBatch(ctx, policy, items),
    answer,
  );
  logItemFailures(ctx.logger, policy.name, rewrapping instanceof Promise ? await rewrapping : rewrapping);
  return answer.response([], input.partial_failure_response_code);
}

/**
 * Items opened and sealed again, both steps on the whole slice: its plaintexts live only between
 * them, and are wiped after. Items that fail to open fail alone; the rest are encrypted again.
 */
function rewrapBatch(ctx: TransitContext, policy: KeyPolicy, items: RewrapItem[]): (Encrypted | ItemError)[] {
  const opened = decryptBatch(ctx.wasm, policy, items);
  const again = admitItems<{ plaintext: Buffer; item: RewrapItem }, EncryptItem, Encrypted>(
    opened.map((plaintext, k) => (plaintext instanceof ItemError ? plaintext : { plaintext, item: items[k]! })),
    ({ plaintext, item }) => ({ plaintext, context: item.context, nonce: item.nonce, aad: item.aad, keyVersion: item.keyVersion, padding: item.encryptPadding }),
  );
  again.place(encryptBatch(ctx.wasm, policy, again.requests));
  for (const item of again.requests) (item.plaintext as Buffer).fill(0);
  return again.results;
}

/** A parsed item checked against the key, with its rewrap fields read from `source`; errors name a batch item's fields by index. */
function admit<T extends LargeParsedCiphertextItem>(policy: KeyPolicy, item: T, source: BatchItem, i: number, batch: boolean): T & Omit<RewrapItem, 'ciphertext'> {
  const at = (field: string) => (batch ? `'[${i}].${field}'` : field);
  if (item.nonce !== undefined && !nonceAllowed(policy)) throw new BadRequestError(NONCE_NOT_ALLOWED);
  checkAssociatedData(item.aad, policy.info, i);
  return {
    ...item,
    padding: paddingScheme(itemField(source, 'decrypt_padding_scheme', 'string'), policy.info, at('decrypt_padding_scheme')),
    encryptPadding: paddingScheme(itemField(source, 'encrypt_padding_scheme', 'string'), policy.info, at('encrypt_padding_scheme')),
    keyVersion: itemField(source, 'key_version', 'int') ?? 0,
  };
}

/**
 * A request without batch_input: the steps of a batch of one, in the same order and with the same
 * answers. A ciphertext of megabytes (an AsciiText: core/large-text.ts) is rewrapped by
 * rewrapLarge, so that no string of it is made.
 */
async function rewrapOne(ctx: TransitContext, name: string, source: BatchItem): Promise<LogicalResponse> {
  const parsed = parseLargeCiphertextItem(source);
  const policy = await ctx.keys.get(name);
  if (!policy) throw new BadRequestError('encryption key not found');
  let result: LargeEncrypted | ItemError;
  try {
    if (parsed instanceof ItemError) result = parsed;
    else {
      const item = admit(policy, parsed, source, 0, false);
      result = isLargeCiphertext(item) ? await rewrapLarge(ctx, policy, item) : rewrapBatch(ctx, policy, [item as RewrapItem])[0]!;
    }
  } catch (err) {
    result = ItemError.of(err);
  }
  logItemFailures(ctx.logger, policy.name, [result]);
  return { data: CIPHERTEXT_FIELDS.plain(onlyResult(result)) };
}

/** One ciphertext of megabytes: opened and sealed again in pieces (decryptLarge, encryptLarge); its plaintext is wiped and given back after (core/buffer-release.ts). */
async function rewrapLarge(ctx: TransitContext, policy: KeyPolicy, item: LargeRewrapItem): Promise<LargeEncrypted | ItemError> {
  const plaintext = await decryptLarge(ctx.wasm, policy, item);
  if (plaintext instanceof ItemError) return plaintext;
  try {
    return await encryptLarge(ctx.wasm, policy, { plaintext, context: item.context, nonce: item.nonce, aad: item.aad, keyVersion: item.keyVersion, padding: item.encryptPadding });
  } finally {
    plaintext.fill(0);
    releaseBuffer(plaintext);
  }
}

const REWRAP_SYNOPSIS = 'Rewrap a ciphertext or a batch of ciphertexts with the latest version of a named key.';
const REWRAP_DESCRIPTION = `
After a rotation, re-encrypts ciphertexts with the latest version of the named key (or
key_version) without returning the plaintext, so old ciphertexts can be upgraded and old
versions retired with min_decryption_version. A ciphertext already at that version is encrypted
again with a fresh nonce. Derived keys need the context. With batch_input, each item gets a result
in input order; failed items carry an error and the status is 400, or
partial_failure_response_code when at least one succeeded.`;
