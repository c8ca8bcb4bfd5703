/**
 * Base64 for transit: the strict decoder (core/tools/base64.ts, shared with the sys tools) and the
 * encoders of single values and of batches.
 */
import { encodeRuns } from '../../../wasm/index.js';

export { decodeBase64 } from '../../../core/tools/base64.js';

/** Standard base64 with padding. A Buffer is encoded as it is: wrapping it in a new view costs more than the encoding of a small item. */
export function encodeBase64(bytes: Uint8Array): string {
  if (bytes instanceof Buffer) return bytes.toString('base64');
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * The base64 of each item, `heads[k]` ‖ `bodies[k]` (a head may be missing), with one encoding
 * call per 32 KB of items instead of one per item (encodeRuns of the WASM core): each item is
 * written at an offset that is a multiple of 3 into one zero-filled buffer.
 */
export function encodeBase64Batch(heads: readonly (Uint8Array | undefined)[], bodies: readonly Uint8Array[]): string[] {
  const count = bodies.length;
  const out = new Array<string>(count);
  const starts = new Array<number>(count);
  const lengths = new Array<number>(count);
  let total = 0;
  for (let k = 0; k < count; k++) {
    const length = (heads[k]?.length ?? 0) + bodies[k]!.length;
    starts[k] = total;
    lengths[k] = length;
    total += Math.ceil(length / 3) * 3;
  }
  const bytes = Buffer.alloc(total);
  for (let k = 0; k < count; k++) {
    const head = heads[k];
    if (head !== undefined) bytes.set(head, starts[k]!);
    bytes.set(bodies[k]!, starts[k]! + (head?.length ?? 0));
  }
  encodeRuns(bytes, 0, starts, lengths, count, out);
  return out;
}
