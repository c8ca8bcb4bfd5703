/**
 * Giving the event loop back in the middle of long work. One process serves every client on one
 * event loop, so work that runs for long without returning to it (a batch of 100,000 items, a
 * 30 MB response) holds up every other request for as long as it runs.
 */

/** How long a slice of long work may run before the event loop gets a turn, in ms: a few milliseconds, so that another client waits for no more than that. */
export const SLICE_MS = 4;

/**
 * Resolves once the event loop has polled for I/O, so that the requests of other clients that
 * arrived meanwhile have been read and started. process.nextTick and resolved promises run before
 * any I/O, and so does one setImmediate queued from an I/O callback (it runs in the check phase
 * of the same turn, which follows the poll just done): the second setImmediate, queued from the
 * check phase, runs only after the next poll.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
