/**
 * The answer to an encrypt, decrypt or rewrap batch (docs/transit.md, "Batches"): `batch_results`
 * in input order, and the status of a batch with failed items. Such a batch is answered with the
 * normal envelope (so `batch_results` reaches the client) under 400, 500 or
 * `partial_failure_response_code`, through the response's `status`, as Vault answers it
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#encrypt-data).
 */
import type { LogicalResponse } from '../../../sdk/index.js';
import { JsonText } from '../../../sdk/crypto.js';
import type { LargeEncrypted } from './cipher.js';
import { ItemError } from './item-error.js';
import { referenceOf, type BatchItem } from './items.js';
import { ResultsText, type ResultFields } from './json-writer.js';
import { answerEntries } from './slices.js';

/** Counts of a finished batch, for its HTTP status. */
class BatchTally {
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
function batchResponse(
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

let tailVersion = -1;
let versionTail = '';

/** A ciphertext (`vault:v<N>:` and base64: nothing to escape) and its key version; rewrap's too. */
export const CIPHERTEXT_FIELDS: ResultFields<LargeEncrypted> = {
  plain: (r) => ({ ciphertext: r.ciphertext, key_version: r.keyVersion }),
  head: '"ciphertext":"',
  // A batch's one item of megabytes (an AsciiText) is written into the batch's text as a string.
  value: (r) => (typeof r.ciphertext === 'string' ? r.ciphertext : r.ciphertext.toString()),
  // A batch is nearly always of one version: its text is made once.
  tail: (r) => (r.keyVersion === tailVersion ? versionTail : (versionTail = `","key_version":${(tailVersion = r.keyVersion)}`)),
};

/**
 * `batch_results` in input order — each item's fields, or its error with `failed` beside it — every
 * one with its reference, under the batch's status (see batchResponse). The results are written as
 * JSON text (JsonText, ResultsText); the plain objects are made only if something else (audit,
 * response wrapping) reads them.
 */
export async function batchAnswer<T>(
  raw: readonly BatchItem[],
  results: readonly (T | ItemError)[],
  requestReference: string | undefined,
  fields: ResultFields<T>,
  failed: Record<string, unknown>,
  warnings: readonly string[],
  partialCode: number | undefined,
): Promise<LogicalResponse> {
  const tally = new BatchTally();
  const text = new ResultsText(fields, failed);
  const writing = answerEntries(results, (result, i) => {
    tally.count(result);
    text.add(result, referenceOf(raw[i]!, requestReference));
  });
  if (writing instanceof Promise) await writing;
  const plain = () =>
    results.map((result, i) => {
      const reference = referenceOf(raw[i]!, requestReference);
      return result instanceof ItemError ? { ...failed, error: result.message, reference } : { ...fields.plain(result), reference };
    });
  return batchResponse({ batch_results: new JsonText(text.done(), plain) }, warnings, tally, partialCode);
}
