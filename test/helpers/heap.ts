/** Watching V8's heap from a test: where a large value was made. */
import v8 from 'node:v8';

/**
 * Bytes V8's heap holds in objects too large for its pages: a string of megabytes made on the
 * heap (by a join, a concatenation flattened) lands there; one Node makes from a Buffer (over a
 * megabyte, it is kept outside the heap) does not. Measured around work that keeps what it made
 * alive, the growth says which of the two it did, whatever the time it took.
 */
export function largeObjectBytes(): number {
  let bytes = 0;
  for (const space of v8.getHeapSpaceStatistics()) if (space.space_name === 'large_object_space' || space.space_name === 'new_large_object_space') bytes += space.space_used_size;
  return bytes;
}
