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
import { admitItems, referenceOf, type BatchItem } from './items.js';
import { ResultsText, type ResultFields } from './json-writer.js';
import { throughSlices } from './slices.js';
import { ANSWER_COST, type ItemCost } from './costs.js';

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
 * `batch_results` being written, slice by slice, in input order — each item's fields, or its error
 * with `failed` beside it — every one with its reference; then the answer, under the batch's
 * status (see batchResponse). The results are written as JSON text (JsonText, ResultsText); if
 * something else (response wrapping, a plugin's wire) needs the plain objects, they are parsed back
 * from that text. Nothing here holds on to the results: a batch's answers are let go as soon as
 * their text is written, not kept until the response has been sent and audited.
 */
export class BatchAnswer<T> {
  private readonly tally = new BatchTally();
  private readonly text: ResultsText<T>;

  constructor(
    private readonly raw: readonly BatchItem[],
    private readonly requestReference: string | undefined,
    fields: ResultFields<T>,
    failed: Record<string, unknown>,
  ) {
    this.text = new ResultsText(fields, failed);
  }

  /** The results of the items from `offset` on, following those added before. */
  add(results: readonly (T | ItemError)[], offset: number): void {
    for (let k = 0; k < results.length; k++) {
      const result = results[k]!;
      this.tally.count(result);
      this.text.add(result, referenceOf(this.raw[offset + k]!, this.requestReference));
    }
  }

  response(warnings: readonly string[], partialCode: number | undefined): LogicalResponse {
    return batchResponse({ batch_results: new JsonText(this.text.done(), parsedResults) }, warnings, this.tally, partialCode);
  }
}

/**
 * A batch from its items to its answer, slice by slice (throughSlices): each slice's items are read
 * (`parse`), checked against the key (`admit`, which gets each item's index in the batch), worked
 * on (`run`) and written into `answer` before the next slice is read. A slice's parsed items and
 * results are let go at once, rather than all of a batch's being kept until its last item is done:
 * for a batch of 100,000 that was hundreds of thousands of objects surviving collection after
 * collection (bench/README.md, "No string of megabytes"). Resolves with the items that failed.
 */
export function answerInSlices<P, Q, R>(
  raw: readonly BatchItem[],
  cost: ItemCost<BatchItem>,
  parse: (slice: readonly BatchItem[]) => readonly (P | ItemError)[] | Promise<readonly (P | ItemError)[]>,
  admit: (item: P, index: number) => Q,
  run: (requests: Q[]) => readonly (R | ItemError)[] | Promise<readonly (R | ItemError)[]>,
  answer: BatchAnswer<R>,
): ItemError[] | Promise<ItemError[]> {
  const failures: ItemError[] = [];
  const work = (parsed: readonly (P | ItemError)[], offset: number): (R | ItemError)[] | Promise<(R | ItemError)[]> => {
    const { results, requests, place } = admitItems<P, Q, R>(parsed, admit, offset);
    const answers = run(requests);
    if (!(answers instanceof Promise)) {
      place(answers);
      return results;
    }
    return answers.then((settled) => {
      place(settled);
      return results;
    });
  };
  const done = throughSlices(
    raw,
    cost,
    (slice, offset) => {
      const parsed = parse(slice);
      return parsed instanceof Promise ? parsed.then((items) => work(items, offset)) : work(parsed, offset);
    },
    (results, offset) => {
      answer.add(results, offset);
      for (const result of results) if (result instanceof ItemError) failures.push(result);
    },
  );
  return done instanceof Promise ? done.then(() => failures) : failures;
}

/** The answer to a batch whose results are all made, written in slices. */
export async function batchAnswer<T>(
  raw: readonly BatchItem[],
  results: readonly (T | ItemError)[],
  requestReference: string | undefined,
  fields: ResultFields<T>,
  failed: Record<string, unknown>,
  warnings: readonly string[],
  partialCode: number | undefined,
): Promise<LogicalResponse> {
  const answer = new BatchAnswer(raw, requestReference, fields, failed);
  const writing = throughSlices(results, ANSWER_COST, (slice) => slice, (slice, offset) => answer.add(slice, offset));
  if (writing instanceof Promise) await writing;
  return answer.response(warnings, partialCode);
}

/** The plain value of batch_results: its text, which ResultsText wrote as JSON, parsed. */
function parsedResults(text: string): unknown {
  return JSON.parse(text);
}
