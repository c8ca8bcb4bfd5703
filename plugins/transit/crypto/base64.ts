/**
 * Base64 for transit: the strict decoder (core/tools/base64.ts, shared with the sys tools) and the
 * encoders of single values and of batches.
 */
import { decodeBase64 } from '../../../sdk/index.js';
import { bufferView, decodeBase64InTurns, encodeRuns, isLongText } from '../../../sdk/crypto.js';

export { decodeBase64, decodeBase64InTurns, isLongText };

/**
 * The strict decoding (decodeBase64) of each of many texts, into one Buffer with one native write
 * per text: a Buffer per text and the alphabet check by regular expression cost more than the
 * decoding of a 64-byte plaintext. A text is taken when Node's lenient decoder, which skips what
 * is not in its alphabet and stops at "=", gives exactly the bytes its length and padding promise
 * (so every character was a base64 character and "=" only padding) and it holds no URL-safe
 * "-" or "_", which that decoder also reads; anything else (not a string, newlines, an error to
 * report) is left undefined, for decodeBase64 to decode or refuse with its message.
 */
export function decodeBase64Each(texts: readonly unknown[]): (Buffer | undefined)[] {
  const count = texts.length;
  let room = 0;
  for (let i = 0; i < count; i++) {
    const text = texts[i];
    if (typeof text === 'string') room += (text.length >>> 2) * 3;
  }
  const bytes = Buffer.allocUnsafe(room);
  const out = new Array<Buffer | undefined>(count);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const text = texts[i];
    if (typeof text !== 'string' || (text.length & 3) !== 0) continue;
    const length = text.length;
    const padding = text.charCodeAt(length - 1) !== EQUALS ? 0 : text.charCodeAt(length - 2) === EQUALS ? 2 : 1;
    const written = bytes.write(text, at, 'base64');
    if (written !== (length >>> 2) * 3 - padding || text.includes('-') || text.includes('_')) continue;
    out[i] = bufferView(bytes.buffer as ArrayBuffer, bytes.byteOffset + at, written);
    at += written;
  }
  return out;
}

const EQUALS = 61;

/**
 * Standard base64 with padding. A Buffer is encoded as it is: wrapping it in a new view costs more
 * than the encoding of a small item. Megabytes are encoded in one go too: Node writes the text
 * outside V8's heap in one native pass, which costs less than joining the same text from pieces
 * did (bench/README.md, "Large requests").
 */
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
