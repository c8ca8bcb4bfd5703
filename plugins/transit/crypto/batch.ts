/**
 * What encrypt, decrypt and rewrap share about `batch_input` (spec §2.6, §7; reference transit.md
 * §5.1): reading an item's fields with the framework's weak typing, per-item failures, the rule
 * that a context is given in all items or in none, and the HTTP status of a batch with failures.
 *
 * A batch with failed items is answered with the normal envelope (so `batch_results` reaches the
 * client) under 400, 500 or `partial_failure_response_code`, as Vault's RespondWithStatusCode
 * does, through the response's `status`.
 */
import type { Logger } from 'pino';
import { BadRequestError, InternalError, KeywardenError, httpStatusOf } from '../../../core/errors.js';
import { CoercionError, coerceField, isUnset, type FieldType, type FieldTypeMap, type LogicalResponse } from '../../../core/framework/index.js';
import type { KeyTypeInfo } from '../keys/key-types.js';
import { decodeBase64 } from './base64.js';
import type { DecryptItem } from './cipher.js';

/** One object of `batch_input`, as the client sent it. */
export type BatchItem = Readonly<Record<string, unknown>>;

/**
 * A failed item: its message, and whether the service is at fault (500) rather than the caller
 * (400). A value, not a thrown error: a batch of a thousand tampered ciphertexts makes a thousand.
 */
export class ItemError {
  constructor(
    readonly message: string,
    readonly internal = false,
    /** For the log when internal: what went wrong inside. */
    readonly cause?: unknown,
  ) {}

  /** The item error for something thrown while handling one item; 5xx texts never reach clients. */
  static of(err: unknown): ItemError {
    if (err instanceof ItemError) return err;
    if (err instanceof KeywardenError && httpStatusOf(err) < 500) return new ItemError(err.message);
    return new ItemError('internal error', true, err);
  }
}

/**
 * The items of a batch that go on to the cipher: `admit` turns each parsed item into a request
 * (checking it against the key); an item that failed to parse, or that `admit` throws for, fails
 * alone. `results` already holds those failures; `place` puts the cipher's answers beside them.
 */
export function admitItems<P, Q, R>(
  parsed: readonly (P | ItemError)[],
  admit: (item: P, index: number) => Q,
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
      requests.push(admit(item, i));
      slots.push(i);
    } catch (err) {
      results[i] = ItemError.of(err);
    }
  });
  const place = (answers: readonly (R | ItemError)[]) => answers.forEach((answer, k) => (results[slots[k]!] = answer));
  return { results, requests, place };
}

export const RSA_PADDING_SCHEMES = ['oaep', 'pkcs1v15'] as const;
export type PaddingScheme = (typeof RSA_PADDING_SCHEMES)[number];

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
  const raw = item[field];
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
export function itemText(item: BatchItem, field: string): string | undefined {
  return item[field] === '' ? '' : itemField(item, field, 'string');
}

/** A base64 field of an item, decoded strictly; undefined when absent or empty. */
export function itemBase64(item: BatchItem, field: string): Buffer | undefined {
  const text = itemField(item, field, 'string');
  return text === undefined ? undefined : decodeBase64(text, field);
}

/** A decrypt or rewrap item whose padding scheme is still to be checked against the key. */
export interface ParsedCiphertextItem extends DecryptItem {
  readonly paddingText?: string | undefined;
}

/** The fields decrypt and rewrap read from an item (rewrap's padding fields are its own). */
export function parseCiphertextItem(item: BatchItem): ParsedCiphertextItem | ItemError {
  try {
    const ciphertext = itemField(item, 'ciphertext', 'string');
    if (ciphertext === undefined) throw new BadRequestError('missing ciphertext to decrypt');
    return {
      ciphertext,
      context: itemBase64(item, 'context'),
      nonce: itemBase64(item, 'nonce'),
      aad: itemBase64(item, 'associated_data'),
      paddingText: itemField(item, 'padding_scheme', 'string'),
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

/** Items that failed by the service's fault are logged with their cause; the client sees only "internal error". */
export function logItemFailures(logger: Logger, key: string, results: readonly unknown[]): void {
  for (const result of results) {
    if (result instanceof ItemError && result.internal) logger.error({ key, err: result.cause }, 'transit batch item failed');
  }
}

/** Counts of a finished batch, for its HTTP status. */
export class BatchTally {
  successes = 0;
  userErrors = 0;
  internalErrors = 0;

  count(result: unknown): void {
    if (!(result instanceof ItemError)) this.successes++;
    else if (result.internal) this.internalErrors++;
    else this.userErrors++;
  }
}

/**
 * The answer to a batch: 200 when every item succeeded; otherwise 400 if any item failed through
 * the caller's fault, else 500, and `partialCode` instead when at least one item succeeded (an
 * out-of-range code keeps the default and says so in a warning).
 */
export function batchResponse(
  data: Record<string, unknown>,
  warnings: readonly string[],
  tally: BatchTally,
  partialCode: number | undefined,
): LogicalResponse {
  if (tally.userErrors === 0 && tally.internalErrors === 0) return { data, ...(warnings.length ? { warnings: [...warnings] } : {}) };
  let status = tally.userErrors > 0 ? 400 : 500;
  const all = [...warnings];
  if (partialCode !== undefined && tally.successes > 0) {
    if (partialCode < 1 || partialCode > 599) all.push(`invalid HTTP response code override from partial_failure_response_code, reverting to ${status}`);
    else status = partialCode;
  }
  return { data, status, ...(all.length > 0 ? { warnings: all } : {}) };
}

/** The outcome of a single (non-batch) request: its value, or its error thrown as a 400 (500 if internal). */
export function onlyResult<T>(result: T | ItemError): T {
  if (result instanceof ItemError) throw result.internal ? new InternalError(result.message) : new BadRequestError(result.message);
  return result;
}

/**
 * `batch_results` in input order — each item's fields, or its error with `failed` beside it — every
 * one with its reference, under the batch's status (see batchResponse). `fields` must return a new
 * object each time: the reference is added to it in place (copying a thousand results into new
 * objects showed up in profiles of batch encrypt).
 */
export function batchAnswer<T>(
  raw: readonly BatchItem[],
  results: readonly (T | ItemError)[],
  requestReference: string | undefined,
  fields: (result: T) => Record<string, unknown>,
  failed: Record<string, unknown>,
  warnings: readonly string[],
  partialCode: number | undefined,
): LogicalResponse {
  const tally = new BatchTally();
  const batchResults = new Array<Record<string, unknown>>(results.length);
  for (let i = 0; i < results.length; i++) {
    const result = results[i]!;
    tally.count(result);
    const reference = referenceOf(raw[i]!, requestReference);
    if (result instanceof ItemError) {
      batchResults[i] = { ...failed, error: result.message, reference };
    } else {
      const entry = fields(result);
      entry.reference = reference;
      batchResults[i] = entry;
    }
  }
  return batchResponse({ batch_results: batchResults }, warnings, tally, partialCode);
}
