/**
 * Gives a large buffer's memory back as soon as its owner is done with it, instead of at V8's next
 * garbage collection.
 *
 * V8 frees a dead Buffer's memory only after a collection has found it dead, and then all of a
 * collection's dead buffers together, on a helper thread that the event loop may have to wait for
 * (bench/README.md, "Large buffers mapped on their own"). Until then the memory also counts towards
 * the heap's limit (core/start-flags.ts), so buffers a request no longer needs start full
 * collections of their own. Detaching the buffer (`ArrayBuffer.prototype.transfer(0)`,
 * https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/ArrayBuffer/transfer)
 * frees its memory there and then, in the turn of the request that used it (bench/README.md,
 * "Large buffers given back by their requests").
 *
 * Only the owner may call it: every view of the memory, anywhere, is left empty. Buffers under
 * RELEASE_BYTES are left to the collector (they come from Node's pool or glibc's heap, and cost next
 * to nothing to keep), and so is a view of part of its memory (a slice of someone else's buffer).
 */

import { LARGE_ALLOCATION_BYTES } from './native-heap.js';

/** Buffers smaller than this are left to the garbage collector: those glibc serves from its heap rather than a mapping of their own (core/native-heap.ts). */
export const RELEASE_BYTES = LARGE_ALLOCATION_BYTES;

/** The ES2024 members TypeScript's ES2023 library does not declare yet. */
interface TransferableArrayBuffer extends ArrayBuffer {
  readonly detached: boolean;
  transfer(newLength?: number): ArrayBuffer;
}

/**
 * Frees `bytes`' memory now, when it is a view of the whole of an ArrayBuffer of RELEASE_BYTES or
 * more; does nothing otherwise (undefined, small, a slice, shared memory, already released).
 * Returns whether it freed anything.
 */
export function releaseBuffer(bytes: Uint8Array | undefined): boolean {
  if (bytes === undefined || bytes.byteLength < RELEASE_BYTES) return false;
  const buffer = bytes.buffer as TransferableArrayBuffer;
  if (!(buffer instanceof ArrayBuffer) || buffer.detached || bytes.byteOffset !== 0 || bytes.byteLength !== buffer.byteLength) return false;
  try {
    buffer.transfer(0);
  } catch {
    // Memory V8 will not detach (a WebAssembly memory's): it stays, as it would have anyway.
    return false;
  }
  return true;
}
