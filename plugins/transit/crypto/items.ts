/**
 * Reading the items of `batch_input` for encrypt, decrypt and rewrap (docs/transit.md, "Batches"):
 * an item's fields with the framework's weak typing, the checks of an item against its key, the
 * rule that a context is given in all items or in none, and each item's reference. An item that
 * fails to read fails alone, as an ItemError beside the others' results.
 */
import { BadRequestError, CoercionError, coerceField, isUnset, type FieldType, type FieldTypeMap } from '../../../sdk/index.js';
import type { KeyTypeInfo } from '../keys/key-types.js';
import { decodeBase64 } from './base64.js';
import { AsciiText } from '../../../sdk/crypto.js';
import { RSA_PADDING_SCHEMES, type DecryptItem, type LargeDecryptItem, type PaddingScheme } from './cipher.js';
import { ItemError } from './item-error.js';

/** One object of `batch_input`, as the client sent it. */
export type BatchItem = Readonly<Record<string, unknown>>;

/**
 * The items of a batch that go on to the cipher: `admit` turns each parsed item into a request
 * (checking it against the key); an item that failed to parse, or that `admit` throws for, fails
 * alone. `results` already holds those failures; `place` puts the cipher's answers beside them.
 */
export function admitItems<P, Q, R>(
  parsed: readonly (P | ItemError)[],
  admit: (item: P, index: number) => Q,
  offset = 0,
): { results: (R | ItemError)[]; requests: Q[]; place: (answers: readonly (R | ItemError)[]) => void } {
  const results = new Array<R | ItemError>(parsed.length);
  const requests: Q[] = [];
  const slots: number[] = [];
  parsed.forEach((item, i) => {
    if (item instanceof ItemError) {
      results[i] = item;
      return;
    }
    try {
      requests.push(admit(item, offset + i));
      slots.push(i);
    } catch (err) {
      results[i] = ItemError.of(err);
    }
  });
  const place = (answers: readonly (R | ItemError)[]) => answers.forEach((answer, k) => (results[slots[k]!] = answer));
  return { results, requests, place };
}

/** The `batch_input` items, or 400 `missing batch input to process` for an empty list. */
export function batchItems(batch: readonly Record<string, unknown>[]): readonly BatchItem[] {
  if (batch.length === 0) throw new BadRequestError('missing batch input to process');
  return batch;
}

/**
 * A field of a batch item, coerced like a top-level field of that type (`"3"` is a fine
 * key_version); undefined when absent, null or "". Throws BadRequestError naming the field.
 */
export function itemField<T extends FieldType>(item: BatchItem, field: string, type: T): FieldTypeMap[T] | undefined {
  return fieldValue(item[field], field, type);
}

/**
 * itemField of the value `raw` an item gives for `field`. Readers of many items take their fields
 * by name (`item.context`) and pass the values here: a load by a fixed name is cached for the
 * items' common shape, a load by a name in a variable is a dictionary lookup each time.
 */
export function fieldValue<T extends FieldType>(raw: unknown, field: string, type: T): FieldTypeMap[T] | undefined {
  // The common case, without the generic coercion: a string where a string is expected.
  if (typeof raw === 'string' && type === 'string') return (raw === '' ? undefined : raw) as FieldTypeMap[T] | undefined;
  if (isUnset(raw)) return undefined;
  try {
    return coerceField({ type, description: field }, raw) as FieldTypeMap[T];
  } catch (err) {
    if (err instanceof CoercionError) throw new BadRequestError(`invalid value for field "${field}": ${err.message}`);
    throw err;
  }
}

/** A string field of an item that may be given as "" (plaintext): "" stays "", absent or null is undefined. */
export function textValue(raw: unknown, field: string): string | undefined {
  return raw === '' ? '' : fieldValue(raw, field, 'string');
}

/** A base64 field of an item, decoded strictly; undefined when absent or empty. */
export function base64Value(raw: unknown, field: string): Buffer | undefined {
  const text = fieldValue(raw, field, 'string');
  return text === undefined ? undefined : decodeBase64(text, field);
}

/** A decrypt or rewrap item whose padding scheme is still to be checked against the key. */
export interface ParsedCiphertextItem extends DecryptItem {
  readonly paddingText?: string | undefined;
}

/** A single request's ParsedCiphertextItem, whose ciphertext of megabytes may be an AsciiText. */
export type LargeParsedCiphertextItem = LargeDecryptItem & { readonly paddingText?: string | undefined };

/** The fields decrypt and rewrap read from an item (rewrap's padding fields are its own). */
export function parseCiphertextItem(item: BatchItem): ParsedCiphertextItem | ItemError {
  return parseWithCiphertext(item, () => fieldValue(item.ciphertext, 'ciphertext', 'string'));
}

/** parseCiphertextItem of a request's own fields (no batch): a ciphertext of megabytes stays an AsciiText. */
export function parseLargeCiphertextItem(item: BatchItem): LargeParsedCiphertextItem | ItemError {
  const raw = item.ciphertext;
  return parseWithCiphertext(item, () => (raw instanceof AsciiText ? raw : fieldValue(raw, 'ciphertext', 'string')));
}

function parseWithCiphertext<C extends string | AsciiText>(item: BatchItem, read: () => C | undefined): (Omit<ParsedCiphertextItem, 'ciphertext'> & { readonly ciphertext: C }) | ItemError {
  try {
    const { context, nonce, associated_data: aad, padding_scheme: padding } = item;
    const ciphertext = read();
    if (ciphertext === undefined) throw new BadRequestError('missing ciphertext to decrypt');
    return {
      ciphertext,
      context: base64Value(context, 'context'),
      nonce: base64Value(nonce, 'nonce'),
      aad: base64Value(aad, 'associated_data'),
      paddingText: fieldValue(padding, 'padding_scheme', 'string'),
    };
  } catch (err) {
    return ItemError.of(err);
  }
}

/**
 * Vault derives keys per request and upserts a derived key when a context is given, so a batch
 * must give a context in all items or in none (400 otherwise).
 */
export function requireConsistentContext(items: readonly BatchItem[]): boolean {
  const first = !isUnset(items[0]!.context);
  for (const item of items) {
    if (!isUnset(item.context) !== first) throw new BadRequestError('context should be set either in all the request blocks or in none');
  }
  return first;
}

/** `padding_scheme` (and rewrap's two): only for RSA keys, `oaep` or `pkcs1v15`. */
export function paddingScheme(value: string | undefined, info: KeyTypeInfo, field: string): PaddingScheme | undefined {
  if (value === undefined) return undefined;
  if (!(RSA_PADDING_SCHEMES as readonly string[]).includes(value)) throw new BadRequestError(`${field} invalid: unknown padding scheme: ${value}`);
  if (info.family !== 'rsa') throw new BadRequestError(`${field} invalid: unsupported key type ${info.name} for padding scheme`);
  return value as PaddingScheme;
}

/** Associated data is for AEAD key types only. */
export function checkAssociatedData(aad: Uint8Array | undefined, info: KeyTypeInfo, index: number): void {
  if (aad !== undefined && !info.aead) throw new BadRequestError(`'[${index}].associated_data' provided for non-AEAD cipher suite ${info.name}`);
}

/** An item's reference, else the request's; "" when neither gives one (results always carry one). */
export function referenceOf(item: BatchItem, fallback: string | undefined): string {
  const own = item.reference;
  if (typeof own === 'string' && own !== '') return own;
  if (typeof own === 'number') return String(own);
  return fallback ?? '';
}
