/**
 * `encrypt/:name`: encrypt a plaintext or a batch
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#encrypt-data; docs/transit.md,
 * "Batches"). A missing key is created first (upsert) when the request is a `create` — the
 * existence check makes it one, so the ACL asks for the create capability — and config/keys allows
 * upsert.
 */
import { BadRequestError, definePath, isUnset, type FieldValues, type LogicalRequest, type LogicalResponse } from '../../../sdk/index.js';
import { releaseBuffer, type AsciiText } from '../../../sdk/crypto.js';
import type { TransitContext } from '../context.js';
import { decodeBase64, decodeBase64Each, decodeBase64InTurns, isLongText } from '../crypto/base64.js';
import { ItemError, logItemFailures, onlyResult } from '../crypto/item-error.js';
import { inSlices } from '../crypto/slices.js';
import { cipherCost, fromItemToAnswer, readCost, textLength } from '../crypto/costs.js';
import { base64Value, batchItems, checkAssociatedData, fieldValue, itemField, paddingScheme, requireConsistentContext, textValue, type BatchItem } from '../crypto/items.js';
import { answerInSlices, BatchAnswer, batchAnswer, CIPHERTEXT_FIELDS } from '../crypto/batch-answer.js';
import { RSA_PADDING_SCHEMES, NONCE_NOT_ALLOWED, encryptBatch, encryptLarge, encryptOne, isLargeItem, nonceAllowed, type EncryptItem, type LargeEncrypted } from '../crypto/cipher.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import { keyTypeInfo } from '../keys/key-types.js';
import { createKey } from '../keys/operations.js';
import { readKeysConfig } from './config-keys.js';

const ENCRYPT_FIELDS = {
  name: { type: 'name', description: 'Name of the key.', required: true },
  plaintext: { type: 'large-string', description: 'Base64 plaintext to encrypt; required unless batch_input is given.', sensitive: true },
  associated_data: {
    type: 'string',
    description: 'Base64 associated data: authenticated, not encrypted, and needed again to decrypt. AEAD key types only (AES-GCM, ChaCha20-Poly1305, and the HPKE AEAD of ml-kem and mlkem768-x25519 keys).',
  },
  context: {
    type: 'string',
    description: 'Base64 context the key is derived from; required for derived keys. For ml-kem and mlkem768-x25519 keys it is the HPKE info, needed again to decrypt; ignored by others. On upsert, a context makes the new key derived.',
  },
  key_version: { type: 'int', description: 'Version to encrypt with: 0 is the latest; otherwise at least min_encryption_version.', default: 0 },
  nonce: {
    type: 'string',
    description:
      'Base64 nonce of exactly 12 bytes, for convergent keys made by Vault 0.6.1 only (convergent version 1), which need it; ' +
      'refused for every other key, whose nonces are random or derived. Never reuse one for the same context.',
  },
  reference: { type: 'string', description: 'With batch_input: echoed in the reference field of each result whose item gives no reference of its own.' },
  batch_input: {
    type: 'object-list',
    description:
      'Items to encrypt in one request, each with plaintext and optionally context, nonce, key_version, associated_data, ' +
      'padding_scheme, reference (and, for upsert, type and convergent_encryption). The top-level plaintext, context, nonce, ' +
      'key_version and associated_data are then ignored. Results keep the input order.',
  },
  type: {
    type: 'string',
    description:
      'On upsert, the type of key to create: aes256-gcm96 (the default), aes128-gcm96, chacha20-poly1305, xchacha20-poly1305, rsa-2048, rsa-3072, ' +
      'rsa-4096, ml-kem (ML-KEM-768) or mlkem768-x25519. Batch items may name it instead of the request.',
  },
  convergent_encryption: {
    type: 'bool',
    description:
      'On upsert, make the new key convergent: the same plaintext and context give the same ciphertext (needs a context; the ' +
      'nonce is derived). Batch items may ask for it instead of the request.',
  },
  partial_failure_response_code: {
    type: 'int',
    description: 'HTTP status when some batch items fail and at least one succeeds (default 400); when all fail it is 400 (500 for a fault of the service).',
  },
  padding_scheme: { type: 'string', description: 'RSA keys only: oaep (the default; SHA-256, MGF1-SHA-256) or pkcs1v15.', allowedValues: RSA_PADDING_SCHEMES },
} as const;

type EncryptInput = FieldValues<typeof ENCRYPT_FIELDS>;

/** An item ready for the cipher, with its padding scheme still to be checked against the key. */
interface ParsedItem extends EncryptItem {
  readonly paddingText?: string | undefined;
}

export function encryptPath(ctx: TransitContext) {
  return definePath({
    pattern: 'encrypt/:name',
    fields: ENCRYPT_FIELDS,
    // A cached key (the usual case) is answered at once: the request is then prepared without a turn.
    existenceCheck: (_req, input) => ctx.keys.cached(input.name) !== undefined || ctx.keys.get(input.name).then((key) => key !== undefined),
    operations: {
      create: { summary: 'Encrypt with a key, creating it first if it does not exist.', handler: (req, input) => encrypt(ctx, req, input, true) },
      update: { summary: 'Encrypt with an existing key.', handler: (req, input) => encrypt(ctx, req, input, false) },
    },
    synopsis: ENCRYPT_SYNOPSIS,
    description: ENCRYPT_DESCRIPTION,
  });
}

/** One item or a batch; not itself async, so a single item's answer is encryptOnly's promise, not one wrapped around it. */
function encrypt(ctx: TransitContext, req: LogicalRequest, input: EncryptInput, create: boolean): Promise<LogicalResponse> {
  const batch = input.batch_input;
  return batch === undefined ? encryptOnly(ctx, req, input, create) : encryptMany(ctx, input, batch, create);
}

async function encryptMany(ctx: TransitContext, input: EncryptInput, batch: NonNullable<EncryptInput['batch_input']>, create: boolean): Promise<LogicalResponse> {
  const raw = batchItems(batch);
  const contextSet = requireConsistentContext(raw);
  if (create) {
    const refusal = await refusedBeforeUpsert(raw, input);
    if (refusal) return refusal;
  }
  const warnings: string[] = [];
  const policy = create ? await upsert(ctx, input, raw, contextSet, warnings) : await ctx.keys.get(input.name);
  if (!policy) throw new BadRequestError('encryption key not found');

  const answer = new BatchAnswer<LargeEncrypted>(raw, input.reference, CIPHERTEXT_FIELDS, {});
  const sealing = answerInSlices<ParsedItem, EncryptItem, LargeEncrypted>(
    raw,
    fromItemToAnswer(cipherCost(policy, false, (item: BatchItem) => textLength(item.plaintext))),
    parseSlice,
    (item, i) => admit(policy, item, i, `'[${i}].padding_scheme'`),
    // A plaintext of megabytes is a slice of its own, and is encrypted in pieces.
    (requests) =>
      requests.length === 1 && isLargeItem(requests[0]!) ? encryptLarge(ctx.wasm, policy, requests[0]!).then((result) => [result]) : encryptBatch(ctx.wasm, policy, requests),
    answer,
  );
  logItemFailures(ctx.logger, policy.name, sealing instanceof Promise ? await sealing : sealing);
  return answer.response(warnings, input.partial_failure_response_code);
}

/**
 * A batch that would create its key, answered with its items' errors when every item is malformed:
 * such a request creates no key. The items are read here only to find that out; the batch reads
 * them again, slice by slice, once the key exists (a key is created by a batch once).
 */
async function refusedBeforeUpsert(raw: readonly BatchItem[], input: EncryptInput): Promise<LogicalResponse | undefined> {
  const reading = inSlices(raw, readCost((item) => textLength(item.plaintext)), parseSlice);
  const parsed = reading instanceof Promise ? await reading : reading;
  if (!parsed.every((item) => item instanceof ItemError)) return undefined;
  return batchAnswer(raw, parsed as ItemError[], input.reference, CIPHERTEXT_FIELDS, {}, [], input.partial_failure_response_code);
}

/**
 * A request without batch_input: the steps of a batch of one, in the same order and with the same
 * answers, but without its slices, admission lists and grouping (encryptOne). A single-item
 * encrypt is the commonest transit request, and that machinery for one item cost about as much as
 * sealing it; decrypt's single item is opened the same way (bench/README.md, "One item alone").
 */
async function encryptOnly(ctx: TransitContext, req: LogicalRequest, input: EncryptInput, create: boolean): Promise<LogicalResponse> {
  const raw = singleItem(req, input);
  const plaintext = raw.plaintext;
  if (plaintext === undefined) throw new BadRequestError('missing plaintext to encrypt');
  const parsed = isLongText(plaintext) ? await parseLongItem(raw, plaintext) : parseItem(raw);
  // A malformed request is refused before upsert, so it creates no key.
  if (create && parsed instanceof ItemError) onlyResult(parsed);

  const warnings: string[] = [];
  // The existence check has just read the key: from the cache it costs no await.
  const policy = create ? await upsert(ctx, input, [raw], !isUnset(raw.context), warnings) : (ctx.keys.cached(input.name) ?? (await ctx.keys.get(input.name)));
  if (!policy) throw new BadRequestError('encryption key not found');

  const sealing = sealOnly(ctx, policy, parsed);
  const result = sealing instanceof Promise ? await sealing : sealing;
  // A plaintext of megabytes, decoded for this request alone, goes back now (core/buffer-release.ts).
  if (!(parsed instanceof ItemError)) releaseBuffer(parsed.plaintext);
  if (result instanceof ItemError) logItemFailures(ctx.logger, policy.name, [result]);
  return { data: CIPHERTEXT_FIELDS.plain(onlyResult(result)), ...(warnings.length ? { warnings } : {}) };
}

/** The item of a single-item request, admitted and encrypted (in pieces if it is megabytes long). */
function sealOnly(ctx: TransitContext, policy: KeyPolicy, parsed: ParsedItem | ItemError): LargeEncrypted | ItemError | Promise<LargeEncrypted | ItemError> {
  if (parsed instanceof ItemError) return parsed;
  let request: EncryptItem;
  try {
    request = admit(policy, parsed, 0, 'padding_scheme');
  } catch (err) {
    return ItemError.of(err);
  }
  return isLargeItem(request) ? encryptLarge(ctx.wasm, policy, request) : encryptOne(ctx.wasm, policy, request);
}

/** A parsed item checked against the key (nonce, padding scheme, associated data); `paddingField` names its padding_scheme in errors. */
function admit(policy: KeyPolicy, item: ParsedItem, index: number, paddingField: string): EncryptItem {
  if (item.nonce !== undefined && !nonceAllowed(policy)) throw new BadRequestError(NONCE_NOT_ALLOWED);
  const padding = paddingScheme(item.paddingText, policy.info, paddingField);
  checkAssociatedData(item.aad, policy.info, index);
  return padding ? { ...item, padding } : item;
}

/** The request's own fields as a batch item; a plaintext of "" is an empty plaintext, not a missing one. */
function singleItem(req: LogicalRequest, input: EncryptInput): BatchItem {
  return {
    plaintext: input.plaintext ?? (req.data.plaintext === '' ? '' : undefined),
    context: input.context,
    nonce: input.nonce,
    key_version: input.key_version,
    associated_data: input.associated_data,
    padding_scheme: input.padding_scheme,
  };
}

/**
 * The items of a slice, read, their plaintexts decoded together (decodeBase64Each); a plaintext of
 * megabytes is a slice of its own, and is decoded in pieces.
 */
function parseSlice(slice: readonly BatchItem[]): (ParsedItem | ItemError)[] | Promise<(ParsedItem | ItemError)[]> {
  const only = slice.length === 1 ? slice[0]!.plaintext : undefined;
  if (isLongText(only)) return parseLongItem(slice[0]!, only).then((parsed) => [parsed]);
  const decoded = decodeBase64Each(slice.map((item) => item.plaintext));
  return slice.map((item, i) => parseItem(item, decoded[i]));
}

/** An item whose plaintext is `decoded` already, or is decoded here. */
function parseItem(item: BatchItem, decoded?: Buffer): ParsedItem | ItemError {
  try {
    const { plaintext: raw, context, nonce, associated_data: aad, key_version: keyVersion, padding_scheme: padding } = item;
    // A decoded plaintext was read already: a long one (an AsciiText) is not read again as a string.
    const plaintext = decoded === undefined ? textValue(raw, 'plaintext') : '';
    if (plaintext === undefined) throw new BadRequestError('missing plaintext to encrypt');
    return {
      plaintext: decoded ?? decodeBase64(plaintext, 'plaintext'),
      context: base64Value(context, 'context'),
      nonce: base64Value(nonce, 'nonce'),
      aad: base64Value(aad, 'associated_data'),
      keyVersion: fieldValue(keyVersion, 'key_version', 'int') ?? 0,
      paddingText: fieldValue(padding, 'padding_scheme', 'string'),
    };
  } catch (err) {
    return ItemError.of(err);
  }
}

/** parseItem of an item whose plaintext is a long text, decoded in pieces (decodeBase64InTurns). */
async function parseLongItem(item: BatchItem, plaintext: string | AsciiText): Promise<ParsedItem | ItemError> {
  try {
    return parseItem(item, await decodeBase64InTurns(plaintext, 'plaintext'));
  } catch (err) {
    return ItemError.of(err);
  }
}

/**
 * The key for a create request: created now with the type and convergence asked for (by the
 * request, else by the batch items), derived iff the items carry a context — unless config/keys
 * disables upsert, in which case a missing key stays missing.
 */
async function upsert(ctx: TransitContext, input: EncryptInput, items: readonly BatchItem[], contextSet: boolean, warnings: string[]): Promise<KeyPolicy | undefined> {
  const type = input.type ?? agreedItemValue(items, 'type', 'string') ?? 'aes256-gcm96';
  const convergent = input.convergent_encryption ?? agreedItemValue(items, 'convergent_encryption', 'bool') ?? false;
  const info = keyTypeInfo(type);
  if (!info.encryption) throw new BadRequestError(`key type ${type} not supported for this operation`);
  if (convergent && !contextSet) throw new BadRequestError('convergent encryption requires derivation to be enabled, so context is required');
  if ((await readKeysConfig(ctx)).disable_upsert) return ctx.keys.get(input.name);
  const { policy, existed } = await createKey(ctx, input.name, {
    type,
    derived: contextSet,
    convergent,
    exportable: false,
    allowPlaintextBackup: false,
    keySize: 0,
    autoRotatePeriod: 0,
  });
  if (existed) warnings.push('Attempted creation of the key during the encrypt operation, but it was created beforehand');
  return policy;
}

/** The value the items give for an upsert setting; 400 when two items give different ones. */
function agreedItemValue<T extends 'string' | 'bool'>(items: readonly BatchItem[], field: string, type: T): (T extends 'string' ? string : boolean) | undefined {
  let agreed: string | boolean | undefined;
  for (const item of items) {
    const value = itemField(item, field, type);
    if (value === undefined) continue;
    if (agreed !== undefined && value !== agreed) throw new BadRequestError(`batch items ask for different values of ${field} for the new key: ${agreed} and ${value}`);
    agreed = value;
  }
  return agreed as (T extends 'string' ? string : boolean) | undefined;
}

const ENCRYPT_SYNOPSIS = 'Encrypt a plaintext or a batch of plaintexts with a named key.';
const ENCRYPT_DESCRIPTION = `
Encrypts base64 plaintexts with the named key and returns vault:v<N>:<base64> ciphertexts with the
version used. AES-GCM and ChaCha20-Poly1305 ciphertexts hold nonce, ciphertext and tag; nonces are
random, or derived from plaintext and context for convergent keys. Derived keys need a context.
RSA keys encrypt with OAEP (SHA-256). ml-kem and mlkem768-x25519 keys seal each plaintext to the
key's public key with single-shot HPKE (docs/transit-kem.md). With batch_input, each item gets a result (or an error) in
input order; if some fail the status is 400, or partial_failure_response_code when at least one
succeeded. On a missing key, a request with the create capability creates it first unless
config/keys disables upsert.`;
