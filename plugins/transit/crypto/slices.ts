/**
 * The scheduler of a large batch: its items are worked on in slices of a few milliseconds with a
 * turn of the event loop between them, so that the other clients of the process are not kept
 * waiting for it (docs/security.md, "One event loop for every client"). Encrypt, decrypt, rewrap,
 * hmac, sign and verify cut their batches here; what an item costs is costs.ts's estimate.
 */
import { nextTurn } from '../../../sdk/index.js';
import { ANSWER_COST, type ItemCost } from './costs.js';

/**
 * Microseconds of work a slice of a batch may take before the event loop is given back: about what
 * a request of another client may wait for it. A 100,000-item batch of 64-byte plaintexts is cut
 * into a few dozen slices; a batch of a thousand such items fits one, and runs as it always did.
 */
export const SLICE_US = 6000;

/**
 * `run` over consecutive slices of `items`, each worth about SLICE_US by `cost` (an item worth
 * more is a slice of its own), with a turn of the event loop between slices so that other
 * clients' requests are served meanwhile. A batch that fits one slice is run at once, as it is:
 * no turn, no copy, no promise unless `run` makes one. `run` gets a slice and the index of its
 * first item and returns one result per item; the results come back in input order.
 */
export function inSlices<T, R>(items: readonly T[], cost: ItemCost<T>, run: (slice: readonly T[], offset: number) => R[] | Promise<R[]>): R[] | Promise<R[]> {
  const end = sliceEnd(items, 0, cost);
  if (end >= items.length) return run(items, 0);
  const results = new Array<R>(items.length);
  return eachSlice(items, cost, run, end, (answers, start) => {
    for (let k = 0; k < answers.length; k++) results[start + k] = answers[k]!;
  }).then(() => results);
}

/**
 * inSlices, but each slice's results go to `take` (with the index of the slice's first item) as
 * soon as they are made, and are not kept: what a slice made is let go before the next one is
 * worked on, so a batch of many slices never holds all of its intermediate objects at once.
 */
export function throughSlices<T, R>(
  items: readonly T[],
  cost: ItemCost<T>,
  run: (slice: readonly T[], offset: number) => readonly R[] | Promise<readonly R[]>,
  take: (results: readonly R[], offset: number) => void,
): void | Promise<void> {
  const end = sliceEnd(items, 0, cost);
  if (end < items.length) return eachSlice(items, cost, run, end, take);
  const answers = run(items, 0);
  if (answers instanceof Promise) return answers.then((settled) => take(settled, 0));
  take(answers, 0);
}

async function eachSlice<T, R>(
  items: readonly T[],
  cost: ItemCost<T>,
  run: (slice: readonly T[], offset: number) => readonly R[] | Promise<readonly R[]>,
  firstEnd: number,
  take: (results: readonly R[], offset: number) => void,
): Promise<void> {
  // The first slice gets a turn of its own too: what ran before it (reading the body, the
  // slices of an earlier step) may have used a slice's worth already.
  for (let start = 0, end = firstEnd; start < items.length; start = end, end = sliceEnd(items, start, cost)) {
    await nextTurn();
    take(await run(items.slice(start, end), start), start);
  }
}

/** The end of the slice that starts at `start`: at least one item, then items while the budget lasts. */
function sliceEnd<T>(items: readonly T[], start: number, { itemUs, unitUs, sizeOf }: ItemCost<T>): number {
  if (unitUs === 0) return Math.min(items.length, start + Math.max(1, Math.floor(SLICE_US / itemUs)));
  let spent = 0;
  let end = start;
  while (end < items.length) {
    const cost = itemUs + sizeOf(items[end]!) * unitUs;
    if (end > start && spent + cost > SLICE_US) break;
    spent += cost;
    end++;
  }
  return end;
}

/** `entry` of every item (for `batch_results`), in slices as inSlices cuts them. */
export function answerEntries<T, R>(items: readonly T[], entry: (item: T, index: number) => R): R[] | Promise<R[]> {
  return inSlices(items, ANSWER_COST, (slice, offset) => (offset === 0 ? slice.map(entry) : slice.map((item, k) => entry(item, offset + k))));
}
