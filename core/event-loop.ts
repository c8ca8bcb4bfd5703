/**
 * Giving the event loop back in the middle of long work. One process serves every client on one
 * event loop, so work that runs for long without returning to it (a batch of 100,000 items, a
 * 30 MB response) holds up every other request for as long as it runs.
 */

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

/** Characters of text copied between turns by joinAsciiInTurns, and the length it joins in one go below. */
const JOIN_TURN_CHARS = 4 * 1024 * 1024;

/**
 * `pieces.join('')` for pieces of ASCII text (base64, a ciphertext's prefix) of megabytes: copied
 * into one Buffer, JOIN_TURN_CHARS at a time with a turn of the event loop after each, then made a
 * string in one native copy. Node keeps a string of over a megabyte that it makes from a Buffer
 * outside V8's heap, where join builds it on the heap, several times slower in one go, and leaves
 * it to the garbage collector (bench/README.md, "Large requests").
 */
export async function joinAsciiInTurns(pieces: readonly string[]): Promise<string> {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  if (length <= JOIN_TURN_CHARS) return pieces.join('');
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  let sinceTurn = 0;
  for (const piece of pieces) {
    at += out.write(piece, at, 'latin1');
    sinceTurn += piece.length;
    if (sinceTurn >= JOIN_TURN_CHARS) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
  return out.toString('latin1', 0, length);
}
