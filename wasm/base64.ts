/**
 * Standard base64 (with padding) of many short byte runs with one encoding call per ~32 KB
 * instead of one per run. The runs sit in one buffer at offsets that are multiples of 3, each
 * followed by zero bytes up to the next multiple of 3: the base64 of the whole buffer then holds
 * each run's base64 as a slice (its zero tail encodes exactly as the padding bits of its last
 * quantum), to which the run's own "=" padding is added.
 *
 * Why pieces of 32 KB: one call for the whole batch makes a text past ~128 KB, which lands in V8's
 * large-object space, and slicing it and then serializing the slices cost more than encoding item
 * by item; in 32 KB pieces the batch encoder is the faster (bench/README.md, "The arena"). The
 * strings share their piece's text, which lives as long as any of them does.
 */

/** Bytes encoded per call. */
export const PIECE_BYTES = 32 * 1024;

/**
 * Sets `out[slot(k)]` to the base64 of run k, which is `lengths[k]` bytes at `starts[k]` of
 * `bytes` (relative to `origin`, a multiple of 3 from it, zero bytes after it up to the next multiple
 * of 3). Runs must be in increasing order of start.
 */
export function encodeRuns(
  bytes: Uint8Array,
  origin: number,
  starts: ArrayLike<number>,
  lengths: ArrayLike<number>,
  count: number,
  out: string[],
  slot: (k: number) => number = (k) => k,
): void {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let first = 0; first < count; ) {
    const pieceStart = starts[first]!;
    let end = first + 1;
    while (end < count && starts[end]! - pieceStart < PIECE_BYTES) end++;
    const last = end - 1;
    const pieceEnd = starts[last]! + Math.ceil(lengths[last]! / 3) * 3;
    const text = view.toString('base64', origin + pieceStart, origin + pieceEnd);
    for (let k = first; k < end; k++) {
      const length = lengths[k]!;
      const from = ((starts[k]! - pieceStart) / 3) * 4;
      const tail = length % 3;
      const encoded = text.slice(from, from + Math.floor(length / 3) * 4 + (tail === 0 ? 0 : tail + 1));
      out[slot(k)] = tail === 0 ? encoded : tail === 1 ? `${encoded}==` : `${encoded}=`;
    }
    first = end;
  }
}
