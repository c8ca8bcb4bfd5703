/**
 * How one item of a batch fails: its own error in `batch_results`, beside the results of the items
 * that succeeded (docs/transit.md, "Batches").
 */
import { type Logger, BadRequestError, InternalError, KeywardenError, httpStatusOf } from '../../../sdk/index.js';

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

/** The outcome of a single (non-batch) request: its value, or its error thrown as a 400 (500 if internal). */
export function onlyResult<T>(result: T | ItemError): T {
  if (result instanceof ItemError) throw result.internal ? new InternalError(result.message) : new BadRequestError(result.message);
  return result;
}

/** Items that failed by the service's fault are logged with their cause; the client sees only "internal error". */
export function logItemFailures(logger: Logger, key: string, results: readonly unknown[]): void {
  for (const result of results) {
    if (result instanceof ItemError && result.internal) logger.error({ key, err: result.cause }, 'transit batch item failed');
  }
}
